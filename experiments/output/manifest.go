package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
)

// A manifest.json read back as a config: `lab run --config manifest.json`
// runs the sweep the manifest records.

// IsManifest reports whether data looks like a manifest.json rather than
// a config document: a JSON object with the keys engine_version and
// config (a config document has neither).
func IsManifest(data []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	_, engine := top["engine_version"]
	_, config := top["config"]
	return engine && config
}

// manifestIn is a manifest as read: every field a manifest has, so an
// unknown one is an error.
type manifestIn struct {
	EngineVersion string              `json:"engine_version"`
	Config        json.RawMessage     `json:"config"`
	Seed          *uint64             `json:"seed"`
	Go            json.RawMessage     `json:"go"`
	Outputs       json.RawMessage     `json:"outputs"`
	ConfigSHA256  *string             `json:"config_sha256"`
	Source        json.RawMessage     `json:"source"`
	Partial       json.RawMessage     `json:"partial"`
	Inputs        []experiments.Input `json:"inputs"`
}

// ConfigFromManifest decodes the config a manifest.json records, strictly
// (experiments.DecodeConfig), and checks it against the manifest: the
// seed, and the config_sha256 when the manifest has one (manifests
// written before it existed have none). A config_sha256 that differs is
// an error when the manifest's engine is this one (the config was
// edited); a manifest of another engine may normalize to another
// document, so then it is a note. notes tell the caller what may make the
// outputs differ from the manifest's.
func ConfigFromManifest(data []byte) (cfg *experiments.Config, notes []string, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m manifestIn
	if err := dec.Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("manifest: %w", err)
	}
	if dec.More() {
		return nil, nil, errors.New("manifest: text after the manifest's object")
	}
	if len(m.Config) == 0 || string(m.Config) == "null" {
		return nil, nil, errors.New("manifest: config: missing")
	}
	cfg, err = document.DecodeConfig(m.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("manifest: config: %w", err)
	}
	if m.Seed != nil && *m.Seed != cfg.Seed {
		return nil, nil, fmt.Errorf("manifest: seed %d differs from its config's seed %d (edited?): edit config.seed alone", *m.Seed, cfg.Seed)
	}
	sameEngine := m.EngineVersion == experiments.EngineVersion
	if !sameEngine {
		notes = append(notes, fmt.Sprintf("the manifest was written by engine %q, this is %q: outputs may differ", m.EngineVersion, experiments.EngineVersion))
	}
	if m.ConfigSHA256 != nil && *m.ConfigSHA256 != cfg.SHA256() {
		if sameEngine {
			return nil, nil, fmt.Errorf("manifest: config_sha256 %s is not the sha256 of its config (%s): the config was edited after the run; run the edited config as a config document instead", *m.ConfigSHA256, cfg.SHA256())
		}
		notes = append(notes, "its config normalizes to another document under this engine (config_sha256 differs)")
	}
	return cfg, notes, nil
}

// CheckInputs compares the traces a run read (experiments.Result.Inputs)
// with those the manifest it ran from recorded: a recorded trace that the
// run read with another text, or did not read, is an error, since the
// outputs would not be the manifest's. A manifest without inputs (no
// trace, or written before they were recorded) checks nothing.
func CheckInputs(manifest []byte, got []experiments.Input) error {
	var m struct {
		Inputs []experiments.Input `json:"inputs"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	for _, want := range m.Inputs {
		i := slices.IndexFunc(got, func(in experiments.Input) bool { return in.Name == want.Name })
		switch {
		case i < 0:
			return fmt.Errorf("manifest: trace %s: the run did not read it", want.Name)
		case got[i] != want:
			return fmt.Errorf("manifest: trace %s: its text has sha256 %s (%d bytes), the manifest recorded %s (%d bytes): not the trace this manifest ran",
				want.Name, got[i].SHA256, got[i].Bytes, want.SHA256, want.Bytes)
		}
	}
	return nil
}

// OutputError is a file a run from a manifest wrote with bytes other than
// the manifest recorded: the outputs are not the manifest's.
type OutputError struct {
	Name, Got, Want string
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("%s: sha256 %s, the manifest recorded %s: the outputs are not the manifest's", e.Name, e.Got, e.Want)
}

// CheckOutputs compares the files a run from a manifest wrote (as Write
// lists them) with the
// outputs the manifest recorded, by sha256 (an *OutputError for the first
// that differs or is missing). A manifest of another engine checks
// nothing: its outputs may differ (ConfigFromManifest notes it); a
// manifest.json is never compared (it names the build).
func CheckOutputs(manifest []byte, files []Output) error {
	var m struct {
		EngineVersion string   `json:"engine_version"`
		Outputs       []Output `json:"outputs"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	if m.EngineVersion != experiments.EngineVersion {
		return nil
	}
	for _, want := range m.Outputs {
		if want.Name == experiments.FileManifest {
			continue
		}
		i := slices.IndexFunc(files, func(f Output) bool { return f.Name == want.Name })
		if i < 0 {
			return &OutputError{Name: want.Name, Got: "(not written)", Want: want.SHA256}
		}
		if got := files[i].SHA256; got != want.SHA256 {
			return &OutputError{Name: want.Name, Got: got, Want: want.SHA256}
		}
	}
	return nil
}
