package decide_test

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// run decodes and runs a config document.
func run(t *testing.T, doc string) *experiments.Result {
	t.Helper()
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// settingsRows reads settings.csv into rows keyed by header.
func settingsRows(t *testing.T, res *experiments.Result) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(string(output.SettingsCSV(res)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

// holdsEverywhere checks what must show: the recommended setting meets
// every objective in every scenario (read from the points' own verdicts),
// some setting that is the best under one scenario fails under another,
// and settings.csv names the recommendation's binding scenario.
func holdsEverywhere(t *testing.T, res *experiments.Result, wantSetting, wantScenario string) {
	t.Helper()
	a := decide.Decide(res)
	ch := a.Choices[0]
	if ch.Feasible == 0 || ch.Setting < 0 {
		t.Fatalf("nothing feasible: %+v", ch)
	}
	rec := &a.Settings[ch.Setting]
	if got := rec.Name(); got != wantSetting {
		t.Errorf("recommended %q, want %q", got, wantSetting)
	}
	for k, p := range rec.Points {
		if p < 0 || !a.Verdicts[p].MeetsAll {
			t.Errorf("the recommendation fails in scenario %q", a.Scenarios[k].Name())
		}
	}
	// Some scenario's best point (highest goodput among the passing ones)
	// belongs to a setting failing elsewhere: the old point-wise answer.
	trap := false
	for k := range a.Scenarios {
		best := -1
		for i := range a.Settings {
			p := a.Settings[i].Points[k]
			if a.Verdicts[p].MeetsAll && (best < 0 || res.Points[p].Metrics.GoodputRPS > res.Points[a.Settings[best].Points[k]].Metrics.GoodputRPS) {
				best = i
			}
		}
		if best >= 0 && !a.Settings[best].MeetsAll {
			trap = true
		}
	}
	if !trap {
		t.Error("no scenario's best setting fails under another scenario: the sweep shows nothing")
	}
	var got string
	for _, r := range settingsRows(t, res) {
		if r["recommended"] == "true" {
			got = r["binding_scenario"]
			if r["meets_all"] != "true" || r["best_overall"] != "true" {
				t.Errorf("settings.csv row %v", r)
			}
		}
	}
	if got != wantScenario || a.Scenarios[rec.BindingScenario].Name() != wantScenario {
		t.Errorf("binding scenario %q in settings.csv, want %q", got, wantScenario)
	}
}

const twoLoads = `{"version": 1, "seed": 1,
  "workload": {"duration_ms": 10000, "parts": [{"type": "poisson", "rate_rps": 90}]},
  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 200},
  "limiters": [{"type": "admission", "limit": [1, 2, 4, 6, 8, 10, 12, 16]}],
  "loads": [
    {"name": "poisson"},
    {"name": "bursty", "parts": [{"type": "demand-curve", "segments": [{"rate_rps": 50, "duration_ms": 200}, {"rate_rps": 300, "duration_ms": 100}]}]}
  ],
  "objectives": [
    {"metric": "sojourn_p99_ms", "op": "<=", "value": 100},
    {"metric": "reject_pct", "op": "<=", "value": 40}
  ]TAIL}`

// Two loads: limit 12 is the best point under the Poisson load and fails
// p99 under the bursty one; the recommendation holds under both and
// names the bursty load. Within 1% of the best worst-case goodput (limit
// 10's 91.3) only limit 10 remains; with a tolerance of 2% limit 8
// (89.6, margin 0.17 against limit 10's 0) wins.
func TestTwoLoads(t *testing.T) {
	res := run(t, strings.Replace(twoLoads, "TAIL", "", 1))
	holdsEverywhere(t, res, "limit=10", "load bursty")
	res = run(t, strings.Replace(twoLoads, "TAIL", `, "decision": {"goodput_tolerance_pct": 2}`, 1))
	holdsEverywhere(t, res, "limit=8", "load bursty")
}

// A seed list: limit 10 meets p99 <= 95 under seed 1 (94 ms, the best
// goodput there) but not under seeds 2 and 3.
func TestSeedList(t *testing.T) {
	res := run(t, `{"version": 1, "seed": [1, 2, 3],
  "workload": {"duration_ms": 10000, "parts": [{"type": "poisson", "rate_rps": 90}]},
  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 200},
  "limiters": [{"type": "admission", "limit": [2, 4, 6, 8, 10, 12]}],
  "objectives": [{"metric": "sojourn_p99_ms", "op": "<=", "value": 95}, {"metric": "reject_pct", "op": "<=", "value": 10}]}`)
	holdsEverywhere(t, res, "limit=8", "seed 3")
}

// Replications of two loads: each load one scenario, judged on its
// interval's pessimistic end; the guarantee is the worst of every run.
func TestReplicatedLoads(t *testing.T) {
	res := run(t, strings.Replace(strings.Replace(twoLoads, `"seed": 1,`, `"seed": 1, "replications": 3,`, 1), "TAIL", "", 1))
	a := decide.Decide(res)
	if len(a.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want 2 (replications are one scenario)", len(a.Scenarios))
	}
	rec := &a.Settings[a.Choices[0].Setting]
	for _, o := range rec.Outcomes {
		if !o.Interval {
			t.Errorf("%s judged without its interval", o.Objective)
		}
	}
	if g := rec.Guarantee; g.Runs != 6 || g.Scenarios != 2 || !strings.Contains(g.Label(), "2 scenarios and 6 runs") {
		t.Errorf("guarantee %+v", g)
	}
	holdsEverywhere(t, res, rec.Name(), "load bursty")
}

// The knife edge of issue 22: rate 220 wins on raw goodput by 0.5 req/s
// with 7.3% slack on p99 and no bound; within 1% of the best goodput the
// rule takes the setting with the margin.
func TestKnifeEdge(t *testing.T) {
	if testing.Short() {
		t.Skip("35 points of 20 s")
	}
	res := run(t, `{"version": 1, "seed": 1,
  "workload": {"duration_ms": 20000, "parts": [{"type": "poisson", "rate_rps": 180}]},
  "server": {"workers": 2, "service_ms": 10, "deadline_ms": 200},
  "limiters": [{"type": "token-bucket", "rate_rps": [100, 120, 140, 160, 180, 200, 220], "burst": [1, 5, 10, 20, 50]}],
  "objectives": [{"metric": "sojourn_p99_ms", "op": "<=", "value": 150}, {"metric": "goodput_rps", "op": ">=", "value": 150}, {"metric": "reject_pct", "op": "<=", "value": 25}]}`)
	a := decide.Decide(res)
	rec := &a.Settings[a.Best]
	want := limiter.FormatParams(limiter.TypeTokenBucket, limiter.WithDefaults(limiter.TypeTokenBucket, limiter.Params{limiter.ParamRate: 200, limiter.ParamBurst: 20}))
	if rec.Name() != want || rec.Binding != 1 || rec.Margin < 0.19 || !rec.Guarantee.Bounded {
		t.Errorf("recommended %q margin %v binding %d guarantee %+v", rec.Name(), rec.Margin, rec.Binding, rec.Guarantee)
	}
	g := 0.0
	for i := range a.Settings {
		g = max(g, a.Settings[i].WorstGoodputRPS)
	}
	if rec.WorstGoodputRPS >= g || rec.WorstGoodputRPS < 0.99*g {
		t.Errorf("goodput %v of the best %v: not the knife edge within 1%%", rec.WorstGoodputRPS, g)
	}
}

// A cancelled sweep (its first points only, Result.Partial): the settings
// of the missing points are listed without them, incomplete, and never
// recommended; the answer is over the complete settings.
func TestPartialSweep(t *testing.T) {
	res := run(t, strings.Replace(twoLoads, "TAIL", "", 1))
	res.Points = res.Points[:13] // limit 16 never ran, limit 12 only under poisson
	res.Partial = &experiments.Partial{PointsDone: 13, PointsTotal: 16}
	a := decide.Decide(res)
	if len(a.Settings) != 8 || len(a.Scenarios) != 2 {
		t.Fatalf("%d settings, %d scenarios; want 8 and 2", len(a.Settings), len(a.Scenarios))
	}
	for i, s := range a.Settings {
		if s.Complete != (i < 6) || (!s.Complete && (s.MeetsAll || s.Recommended)) {
			t.Errorf("setting %d %q: complete %v meets all %v recommended %v", i, s.Name(), s.Complete, s.MeetsAll, s.Recommended)
		}
	}
	if got := a.Settings[a.Best].Name(); got != "limit=10" {
		t.Errorf("best %q, want limit=10", got)
	}
	rows := settingsRows(t, res)
	if len(rows) != 8 || rows[7]["limit"] != "16" || rows[7]["meets_all"] != "" || rows[7]["worst_sojourn_p99_ms"] != "" || rows[7]["worst_goodput_rps"] != "" {
		t.Errorf("settings.csv's missing setting: %v", rows[7])
	}
}
