package web

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/ratelab/ratelab/experiments/workload"
)

// TestPartFieldsMatchEngine keeps the form's per-type inputs in step with
// the fields the engine accepts for each part type: every input the form
// shows is accepted, and every field the engine names is shown.
func TestPartFieldsMatchEngine(t *testing.T) {
	all := []string{"client", "group", "clients", "weight", "segments", "rate_rps", "start_ms", "end_ms", "arrival",
		"bursts", "base_rps", "multiplier", "duration_ms", "ramp_ms", "csv"}
	if got := len(partFields); got != len(workload.PartTypes()) {
		t.Fatalf("the form knows %d part types, the engine %d", got, len(workload.PartTypes()))
	}
	for _, typ := range workload.PartTypes() {
		for _, name := range all {
			raw := json.RawMessage(fmt.Sprintf(`{"type":%q,%q:1}`, typ, name))
			accepted := len(workload.CheckFields("p", raw)) == 0
			if shown := slices.Contains(partFields[typ], name); shown != accepted {
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
