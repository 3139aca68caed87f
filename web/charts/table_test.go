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

// TestQueryCleanColumns: the table's columns have one form (each key
// once, sorted, no key that cannot name a column), so permutations share
// a cached page; a sort by a chosen column stays, by another is dropped;
// the settings table's sort must be a key.
func TestQueryCleanColumns(t *testing.T) {
	q := Query{Cols: " type,admitted,,type,<script>,workload.parts[0].rate_rps", Sort: "admitted", SettingsSort: "worst_reject_pct", SettingsDesc: true}.Clean()
	if q.Cols != "admitted,type,workload.parts[0].rate_rps" || q.Sort != "admitted" || q.SettingsSort != "worst_reject_pct" || !q.SettingsDesc {
		t.Errorf("cleaned %+v", q)
	}
	q = Query{Cols: "type", Sort: "admitted", Desc: true, SettingsSort: "a b", SettingsDesc: true}.Clean()
	if q.Sort != "" || q.Desc || q.SettingsSort != "" || q.SettingsDesc {
		t.Errorf("an unshown sort or a bad settings sort kept: %+v", q)
	}
}
