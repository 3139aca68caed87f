package form

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
)

// The seed lab's models in the form: each engine error lands on its input.
func TestModelInputErrors(t *testing.T) {
	cfg, err := presets.Config("load-shedding")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, text, want string }{
		{"server.door", "closed", "server.door"},
		{"server.bound", "x", "server.bound"},
		{"output.decimals", "java", "output.decimals"},
		{"metrics.score_until", "later", "metrics.score_until"},
		{ModelsKey, `{"servers": [{"name": "a", "door": "closed"}]}`, ModelsKey},
		{ModelsKey, `{"loads": 3}`, ModelsKey},
		{ModelsKey, `{"tiers": []}`, ModelsKey},
		{ModelsKey, `{"policies": [{"name": "p", "retries": -1}]}`, ModelsKey},
	} {
		f := FromConfig(cfg)
		if c.key == ModelsKey {
			f.Models = c.text
		} else {
			f.Settings[c.key] = c.text
		}
		if _, got := f.Document(); got != nil {
			t.Errorf("%s = %q: accepted", c.key, c.text)
			continue
		}
		if len(f.Err(c.want)) == 0 {
			t.Errorf("%s = %q: errors %v, none on %s", c.key, c.text, f.Problems, c.want)
		}
	}
}

func TestModelKeys(t *testing.T) {
	for path, want := range map[string]string{
		"servers[1].door":      ModelsKey,
		"loads[2].parts[0]":    ModelsKey,
		"classes[0].share":     ModelsKey,
		"class_draw.generator": ModelsKey,
		"slo.class":            ModelsKey,
		"policies[1].retries":  ModelsKey,
		"trigger.end_ms":       ModelsKey,
		"output.decimals":      "output.decimals",
		"server.door":          "server.door",
		"metrics.percentiles":  "metrics.percentiles",
	} {
		if got := Key(path); got != want {
			t.Errorf("Key(%q) = %q, want %q", path, got, want)
		}
	}
}

// The service distribution in the form: chosen and set, it reaches the
// config and comes back; p99 below p50 lands on its input.
func TestServiceDistributionInputs(t *testing.T) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	f := FromConfig(cfg)
	f.Settings["server.service"] = "lognormal"
	f.Settings["server.service_p50_ms"] = "6"
	f.Settings["server.service_p99_ms"] = "60"
	_, got := f.Document()
	if got == nil {
		t.Fatalf("refused: %v", f.Problems)
	}
	if got.Server.Service != "lognormal" || got.Server.ServiceP50MS != 6 || got.Server.ServiceP99MS != 60 {
		t.Fatalf("server %+v", got.Server)
	}
	back := FromConfig(got)
	if back.Setting("server.service_p99_ms") != "60" || back.Setting("server.service") != "lognormal" {
		t.Fatalf("settings %v", back.Settings)
	}
	f.Settings["server.service_p99_ms"] = "3"
	if _, got := f.Document(); got != nil || len(f.Err("server.service_p99_ms")) == 0 {
		t.Fatalf("p99 below p50: errors %v", f.Problems)
	}
}

// A policy's given zero ("retries": 0 over a part's retries) survives the
// form: into the models input and back out, the same config document.
func TestPolicyGivenZeroThroughTheForm(t *testing.T) {
	cfg, err := presets.Config("retry-storm")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workload.Parts[0].Retries = 2
	cfg.Workload.Parts[0].TimeoutMS = 300
	cfg.Policies[0].Given = append(cfg.Policies[0].Given, "retries")
	f := FromConfig(cfg)
	if !strings.Contains(f.Models, `"retries": 0`) {
		t.Fatalf("models input without the given zero:\n%s", f.Models)
	}
	_, got := f.Document()
	if got == nil {
		t.Fatalf("refused: %v", f.Problems)
	}
	if !bytes.Equal(got.JSON(), cfg.JSON()) || !got.Policies[0].Gives("retries") {
		t.Fatalf("round trip:\n%s\nwant\n%s", got.JSON(), cfg.JSON())
	}
}
