package form

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
)

// TestModelInputErrorPaths: a wrong type or an unknown field in the models
// input is reported at its field path, as the API and the CLI report it
// (policies[0].jitter: must be a string), not as Go's decoder words it
// ("Go struct field models.policies.Behaviour.jitter of type string", or
// an unknown field without its place).
func TestModelInputErrorPaths(t *testing.T) {
	cfg, err := presets.Config("retry-storm")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ text, path string }{
		{`{"policies": [{"name": "a", "retries": 2, "jitter": -1}]}`, "policies[0].jitter"},
		{`{"policies": [{"name": "a"}, {"name": "b", "retry": 3}]}`, "policies[1].retry"},
		{`{"trigger": {"start_ms": "5s", "end_ms": 7000}}`, "trigger.start_ms"},
		{`{"servers": [{"name": "a", "workers": "two"}]}`, "servers[0].workers"},
		{`{"tiers": []}`, ModelsKey},
	} {
		f := FromConfig(cfg)
		f.Models = c.text
		if _, got := f.Document(); got != nil {
			t.Errorf("%s: accepted", c.text)
			continue
		}
		found := false
		for _, e := range f.Problems {
			found = found || e.Path == c.path
			if strings.Contains(e.Msg, "Go struct") || strings.Contains(e.Msg, "Behaviour") {
				t.Errorf("%s: message in Go's words: %s: %s", c.text, e.Path, e.Msg)
			}
		}
		if !found {
			t.Errorf("%s: errors %v, none at %s", c.text, f.Problems, c.path)
		}
		if len(f.Err(ModelsKey)) == 0 {
			t.Errorf("%s: no error on the models input", c.text)
		}
	}
}
