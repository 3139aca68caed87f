package output_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
)

func manifestOf(t *testing.T) (*experiments.Result, []byte) {
	t.Helper()
	res, m, _ := files(t)
	return res, m[experiments.FileManifest]
}

// TestManifestRecordsConfigAndSource: config_sha256 is the sha256 of the
// canonical config document; a test binary has no vcs info, so the
// source is unknown.
func TestManifestRecordsConfigAndSource(t *testing.T) {
	res, data := manifestOf(t)
	var m output.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.ConfigSHA256 != res.Config.SHA256() || len(m.ConfigSHA256) != 64 {
		t.Errorf("config_sha256 %q, want %q", m.ConfigSHA256, res.Config.SHA256())
	}
	if m.Source != (output.Source{Revision: output.Unknown, Modified: output.Unknown}) {
		t.Errorf("source %+v in a test binary, want unknown", m.Source)
	}
}

// TestConfigFromManifest: a manifest reads back as its config (the same
// canonical document); an edited config or seed, an unknown key and a
// config document are told apart.
func TestConfigFromManifest(t *testing.T) {
	res, data := manifestOf(t)
	if !output.IsManifest(data) {
		t.Fatal("a manifest is not a manifest")
	}
	if output.IsManifest(res.Config.JSON()) {
		t.Fatal("a config document is a manifest")
	}
	cfg, notes, err := output.ConfigFromManifest(data)
	if err != nil || len(notes) != 0 {
		t.Fatalf("read back: %v %v", err, notes)
	}
	if !bytes.Equal(cfg.JSON(), res.Config.JSON()) {
		t.Error("the manifest's config reads back as another document")
	}
	for _, c := range []struct{ old, new, want string }{
		{fmt.Sprintf("\n  \"seed\": %d,", res.Config.Seed), fmt.Sprintf("\n  \"seed\": %d,", res.Config.Seed+1), "seed"},
		{`"duration_ms": `, `"duration_ms": 1`, "config_sha256"},
		{`"engine_version"`, `"extra": 1, "engine_version"`, "unknown field"},
		{`"config": {`, `"config": {"nope": 1, `, "nope"},
	} {
		bad := strings.Replace(string(data), c.old, c.new, 1)
		if bad == string(data) {
			t.Fatalf("%q not in the manifest", c.old)
		}
		if _, _, err := output.ConfigFromManifest([]byte(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %v, want an error naming %s", c.new, err, c.want)
		}
	}
	// Another engine: an edited-looking config is a note, not an error.
	other := strings.Replace(string(data), `"engine_version": "`+experiments.EngineVersion+`"`, `"engine_version": "0.0.1"`, 1)
	other = strings.Replace(other, `"config_sha256": "`, `"config_sha256": "0`, 1)
	if _, notes, err := output.ConfigFromManifest([]byte(other)); err != nil || len(notes) != 2 {
		t.Errorf("another engine's manifest: %v, notes %q", err, notes)
	}
}

// FuzzConfigFromManifest: any input is an error or a valid config whose
// canonical document decodes to itself; never a panic.
func FuzzConfigFromManifest(f *testing.F) {
	f.Add([]byte(`{"engine_version":"1","config":{}}`))
	f.Add([]byte(`{"engine_version":"1","config":{"version":1,"seed":1},"seed":1,"config_sha256":"x"}`))
	f.Add([]byte(`{"engine_version":"1","config":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		output.IsManifest(data)
		cfg, _, err := output.ConfigFromManifest(data)
		if err != nil {
			return
		}
		again, err := document.DecodeConfig(cfg.JSON())
		if err != nil {
			t.Fatalf("the canonical document does not decode: %v", err)
		}
		if again.SHA256() != cfg.SHA256() {
			t.Fatal("the canonical document is not a fixed point")
		}
	})
}

// CheckInputs passes the recorded traces read with the same text, and
// names a trace read with another text or not read.
func TestCheckInputs(t *testing.T) {
	day := experiments.Input{Name: "day.csv", SHA256: "ab", Bytes: 3}
	m := []byte(`{"inputs": [{"name": "day.csv", "sha256": "ab", "bytes": 3}]}`)
	for _, c := range []struct {
		name     string
		manifest []byte
		got      []experiments.Input
		err      string
	}{
		{"same", m, []experiments.Input{day}, ""},
		{"no inputs recorded", []byte(`{"engine_version": "x"}`), nil, ""},
		{"other text", m, []experiments.Input{{Name: "day.csv", SHA256: "cd", Bytes: 3}}, "not the trace this manifest ran"},
		{"not read", m, nil, "the run did not read it"},
	} {
		err := output.CheckInputs(c.manifest, c.got)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
}
