package charts

import (
	"slices"
	"strings"
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

// TestTableSettingFilter: the results table's second filter keeps the
// points whose setting meets every objective in every scenario, as the
// answer judges, beside the per-point one. paretoDoc: only rate 80 keeps
// reject_pct <= 30 under both loads, though lower rates pass under the
// light one.
func TestTableSettingFilter(t *testing.T) {
	res := runDoc(t, strings.Replace(paretoDoc, "%s", "", 1))
	rows := func(q Query) []int {
		v := NewView(res, -1)
		v.Query = q
		var out []int
		for _, r := range newTable(v, "r").Rows {
			out = append(out, r.Point)
		}
		return out
	}
	perPoint, setting := rows(Query{Feasible: true}), rows(Query{SettingFeasible: true})
	if !slices.Equal(setting, []int{4, 5}) {
		t.Errorf("points whose setting meets all: %v, want [4 5]", setting)
	}
	if len(perPoint) <= len(setting) {
		t.Errorf("points meeting all %v: want more than the setting filter's %v", perPoint, setting)
	}
}
