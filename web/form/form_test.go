package form

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/workload"
)

// TestFormRoundTrip: every preset, put in the form and posted back, gives
// the preset's own normalized config, so the form can express it exactly.
func TestFormRoundTrip(t *testing.T) {
	for _, p := range presets.All() {
		cfg, err := presets.Config(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		v := FromConfig(cfg).Values()
		fv := Values{}
		for k := range v {
			fv[k] = v.Get(k)
		}
		f := FromValues(fv)
		_, got := f.Document()
		if got == nil {
			t.Errorf("preset %s: the form gives errors: %v", p.Name, f.Problems)
			continue
		}
		if !bytes.Equal(got.JSON(), cfg.JSON()) {
			t.Errorf("preset %s: form round trip changed the config:\n%s\nwant\n%s", p.Name, got.JSON(), cfg.JSON())
		}
	}
}

func TestFormKey(t *testing.T) {
	for path, want := range map[string]string{
		"workload.parts[2].segments[1].rate_rps": "parts.2.segments",
		"workload.parts[0].rate_rps":             "parts.0.rate_rps",
		"workload.duration_ms":                   "duration_ms",
		"workload.parts":                         "parts",
		"workload":                               "parts",
		"limiters[0].burst[3]":                   "limiters.0.burst",
		"limiters[1].name":                       "limiters.1.name",
		"limiters":                               "limiters",
		"server.workers":                         "server.workers",
		"metrics.rolling_window_ms":              "metrics.rolling_window_ms",
		"reports[0].columns[2].value":            "reports",
		"seed":                                   "seed",
	} {
		if got := Key(path); got != want {
			t.Errorf("Key(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestPartFieldsMatchEngine keeps the form's per-type inputs in step with
// the fields the engine accepts for each part type: every input the form
// shows is accepted, and every field the engine names is shown.
func TestPartFieldsMatchEngine(t *testing.T) {
	all := []string{"client", "group", "clients", "weight", "segments", "rate_rps", "start_ms", "end_ms", "arrival",
		"bursts", "base_rps", "multiplier", "duration_ms", "ramp_ms", "csv"}
	if got := len(partTypes()); got != len(workload.PartTypes()) {
		t.Fatalf("the form knows %d part types, the engine %d", got, len(workload.PartTypes()))
	}
	for _, typ := range workload.PartTypes() {
		for _, name := range all {
			raw := json.RawMessage(fmt.Sprintf(`{"type":%q,%q:1}`, typ, name))
			accepted := len(workload.CheckFields("p", raw)) == 0
			if shown := slices.Contains(strings.Fields(partTypesFor(name)), string(typ)); shown != accepted {
				t.Errorf("%s.%s: form shows it %v, engine accepts it %v", typ, name, shown, accepted)
			}
		}
	}
}

func TestParseRows(t *testing.T) {
	rows, err := parseRows("20,1000\n 600 , 200 ;\n\n5,5", 2, 2)
	if err != nil || len(rows) != 3 || rows[1][0] != 600 || rows[2][1] != 5 {
		t.Errorf("parseRows = %v, %v", rows, err)
	}
	for _, bad := range []string{"1", "1,2,3", "1,x"} {
		if _, err := parseRows(bad, 2, 2); err == nil {
			t.Errorf("parseRows(%q) accepted", bad)
		}
	}
	if rows, err := parseRows("100,5,10\n200,5", 2, 3); err != nil || len(rows[0]) != 3 || len(rows[1]) != 2 {
		t.Errorf("bursts rows = %v, %v", rows, err)
	}
}
