package charts

import (
	"testing"
)

// TestResultsTableNamesOuterParameter: in a sweep of two parameters each
// results row names the limiter's other value; rows such as
// "sliding-window-log | window_ms = 100" appeared twice with different
// numbers.
func TestResultsTableNamesOuterParameter(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[
		{"type":"poisson","rate_rps":90}]},
		"limiters":[{"type":"sliding-window-log","limit":[5,10],"window_ms":[100,200]}]}`)
	seen := map[string]bool{}
	for _, row := range newTable(NewView(res, -1), "x").Rows {
		key := row.Cells[0] + " | " + row.Cells[1]
		if seen[key] {
			t.Errorf("two rows read %q", key)
		}
		seen[key] = true
	}
}
