package decide

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// point is a token-bucket (or none) point with the metrics the tests read.
type point struct {
	li          int
	rate, burst float64
	goodput     float64
	p99         int
	reject      float64
}

func result(objs []experiments.Objective, specs []limiter.Spec, pts []point) *experiments.Result {
	res := &experiments.Result{Config: &experiments.Config{Limiters: specs, Objectives: objs}}
	for i, p := range pts {
		params := limiter.Params{}
		if specs[p.li].Type == limiter.TypeTokenBucket {
			params = limiter.Params{"rate_rps": p.rate, "burst": p.burst}
		}
		res.Points = append(res.Points, experiments.Point{
			Index: i, LimiterIndex: p.li, Limiter: specs[p.li].Label(), Type: specs[p.li].Type, Params: params,
			Metrics: experiments.Metrics{GoodputRPS: p.goodput, Sojourn: experiments.Delays{P99: p.p99}, RejectPct: p.reject},
		})
	}
	return res
}

var tb = limiter.Spec{Type: limiter.TypeTokenBucket, Name: "tb"}
var none = limiter.Spec{Type: limiter.TypeNone, Name: "open"}

func TestRecommendationHighestGoodputAmongFeasible(t *testing.T) {
	objs := []experiments.Objective{{Metric: "sojourn_p99_ms", Op: "<=", Value: 200}, {Metric: "reject_pct", Op: "<=", Value: 10}}
	res := result(objs, []limiter.Spec{tb}, []point{
		{rate: 100, burst: 10, goodput: 90, p99: 50, reject: 9},
		{rate: 100, burst: 50, goodput: 99, p99: 180, reject: 1},   // feasible, best
		{rate: 100, burst: 200, goodput: 100, p99: 400, reject: 0}, // infeasible: p99
	})
	a := Decide(res)
	ch := a.Choices[0]
	if ch.Point != 1 || ch.Feasible != 2 {
		t.Fatalf("point %d feasible %d, want 1 and 2", ch.Point, ch.Feasible)
	}
	// slacks: p99 (200-180)/200 = 0.1; reject (10-1)/10 = 0.9: p99 binds.
	if ch.Binding == nil || ch.Binding.Objective.Metric != "sojourn_p99_ms" || !near(ch.Binding.Slack, 0.1) {
		t.Fatalf("binding %+v", ch.Binding)
	}
	if !a.Verdicts[1].MeetsAll || a.Verdicts[2].MeetsAll {
		t.Fatalf("verdicts %+v", a.Verdicts)
	}
}

func TestTiesGoToTheSmallestSizeThenRate(t *testing.T) {
	objs := []experiments.Objective{{Metric: "goodput_rps", Op: ">=", Value: 50}}
	res := result(objs, []limiter.Spec{tb}, []point{
		{rate: 200, burst: 40, goodput: 80},
		{rate: 200, burst: 20, goodput: 80},
		{rate: 100, burst: 20, goodput: 80},
		{rate: 100, burst: 40, goodput: 80},
	})
	if got := Decide(res).Choices[0].Point; got != 2 {
		t.Fatalf("tie went to point %d, want 2 (burst 20, then rate 100)", got)
	}
}

func TestNothingFeasibleGivesTheClosestAndItsMisses(t *testing.T) {
	objs := []experiments.Objective{{Metric: "sojourn_p99_ms", Op: "<", Value: 100}, {Metric: "reject_pct", Op: "<=", Value: 5}}
	res := result(objs, []limiter.Spec{tb}, []point{
		{rate: 100, burst: 10, goodput: 90, p99: 150, reject: 7},  // misses 2, violation 0.5 + 0.4
		{rate: 100, burst: 20, goodput: 95, p99: 100, reject: 6},  // strict: 100 fails; misses 2, violation 0 + 0.2
		{rate: 100, burst: 30, goodput: 99, p99: 300, reject: 10}, // misses 2, 2 + 1
	})
	ch := Decide(res).Choices[0]
	if ch.Feasible != 0 || ch.Point != 1 || ch.Binding != nil {
		t.Fatalf("choice %+v", ch)
	}
	// The most violated first (reject_pct, 20% past; p99 at its strict target).
	if len(ch.Misses) != 2 || ch.Misses[0].Objective.Metric != "reject_pct" || ch.Misses[1].Objective.Metric != "sojourn_p99_ms" {
		t.Fatalf("misses %+v", ch.Misses)
	}
}

func TestLimiterWithoutParameters(t *testing.T) {
	objs := []experiments.Objective{{Metric: "reject_pct", Op: "<=", Value: 1}, {Metric: "burst", Op: "<=", Value: 10}}
	res := result(objs, []limiter.Spec{tb, none}, []point{
		{li: 0, rate: 100, burst: 10, goodput: 90},
		{li: 1, goodput: 120},
	})
	a := Decide(res)
	if len(a.Choices) != 2 || a.Choices[1].Point != 1 {
		t.Fatalf("choices %+v", a.Choices)
	}
	// none has no burst: the objective on it cannot pass, and is missing.
	ch := a.Choices[1]
	if ch.Feasible != 0 || len(ch.Misses) != 1 || ch.Misses[0].HasValue {
		t.Fatalf("none's choice %+v", ch)
	}
	if a.Choices[0].Feasible != 1 {
		t.Fatalf("token bucket's choice %+v", a.Choices[0])
	}
}

func TestNoObjectivesNoAnswer(t *testing.T) {
	if Decide(result(nil, []limiter.Spec{tb}, []point{{}})) != nil {
		t.Fatal("an answer without objectives")
	}
}

func TestObjectivesDecodeAndValidate(t *testing.T) {
	base := `{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":10}]},"limiters":[{"type":"none"}],`
	cfg, err := document.DecodeConfig([]byte(base + `"objectives":[{"metric":"sojourn_p99_ms","op":"<=","value":200}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Objectives[0].Column(); got != "pass_sojourn_p99_ms_le_200" {
		t.Fatalf("column %q", got)
	}
	for doc, want := range map[string]string{
		`"objectives":[{"metric":"nope","op":"<=","value":1}]}`:                                                 "objectives[0].metric: unknown metric \"nope\": did you mean ",
		`"objectives":[{"metric":"reject_pct","op":"==","value":1}]}`:                                           "objectives[0].op: unknown op",
		`"objectives":[{"metric":"reject_pct","op":"<","value":1,"x":2}]}`:                                      "objectives[0].x: is not a known field",
		`"objectives":[{"metric":"reject_pct","op":"<","value":"a"}]}`:                                          "objectives[0].value: must be a number",
		`"objectives":[{"metric":"reject_pct","op":"<","value":1},{"metric":"reject_pct","op":"<","value":1}]}`: "objectives[1]: the same objective as objectives[0] (reject_pct < 1)",
	} {
		_, err := document.DecodeConfig([]byte(base + doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", doc, err, want)
		}
	}
}

func TestParseObjectives(t *testing.T) {
	objs, errs := experiments.ParseObjectives("sojourn_p99_ms <= 200\n\n# comment\njain_index>=0.95\n")
	if len(errs) != 0 || len(objs) != 2 || objs[1] != (experiments.Objective{Metric: "jain_index", Op: ">=", Value: 0.95}) {
		t.Fatalf("%+v %v", objs, errs)
	}
	if got := experiments.FormatObjectives(objs); got != "sojourn_p99_ms <= 200\njain_index >= 0.95\n" {
		t.Fatalf("format %q", got)
	}
	_, errs = experiments.ParseObjectives("reject_pct 5\nreject_pct < x")
	if len(errs) != 2 || errs[0].Path != "objectives[0]" || errs[1].Path != "objectives[1].value" {
		t.Fatalf("errors %v", errs)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestFront(t *testing.T) {
	res := result(nil, []limiter.Spec{tb}, []point{
		{goodput: 90, p99: 50},
		{goodput: 95, p99: 100},
		{goodput: 94, p99: 120}, // beaten by point 1
		{goodput: 99, p99: 400},
		{goodput: 99, p99: 500}, // beaten by point 3
	})
	got := Front(res.Points, experiments.ColumnByKey("sojourn_p99_ms"), true, experiments.ColumnByKey("goodput_rps"), false)
	if len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 3 {
		t.Fatalf("front %v, want [0 1 3]", got)
	}
	if !LowerIsBetter(nil, "sojourn_p99_ms") || LowerIsBetter(nil, "goodput_rps") ||
		LowerIsBetter([]experiments.Objective{{Metric: "rolling_max", Op: ">=", Value: 1}}, "rolling_max") {
		t.Fatal("LowerIsBetter")
	}
}

// withStats gives a point replication statistics of some columns:
// key → mean, half-width (n = 5 runs).
func withStats(p *experiments.Point, stats map[string][2]float64) {
	for _, key := range []string{"goodput_rps", "sojourn_p99_ms", "reject_pct", "jain_index"} {
		if s, ok := stats[key]; ok {
			p.Stats = append(p.Stats, experiments.Stat{Key: key, Mean: s[0], HalfWidth: s[1], N: 5})
		}
	}
}

// With replications an objective is judged on the pessimistic end of its
// interval: a point whose mean meets a cap but whose upper end does not
// fails, and a floor reads the lower end.
func TestIntervalsAreJudgedOnThePessimisticEnd(t *testing.T) {
	objs := []experiments.Objective{{Metric: "sojourn_p99_ms", Op: "<=", Value: 200}, {Metric: "goodput_rps", Op: ">=", Value: 80}}
	res := result(objs, []limiter.Spec{tb}, []point{
		{rate: 100, burst: 10}, // mean p99 190 ± 20: upper 210 fails
		{rate: 100, burst: 20}, // p99 150 ± 10 passes; goodput 85 ± 10: lower 75 fails
		{rate: 100, burst: 30}, // p99 180 ± 15 (195), goodput 90 ± 5 (85): feasible
		{rate: 100, burst: 40}, // p99 199 ± 1 (200 == cap passes), goodput 95 ± 15 (80 == floor passes): feasible, higher mean goodput
	})
	withStats(&res.Points[0], map[string][2]float64{"sojourn_p99_ms": {190, 20}, "goodput_rps": {99, 1}})
	withStats(&res.Points[1], map[string][2]float64{"sojourn_p99_ms": {150, 10}, "goodput_rps": {85, 10}})
	withStats(&res.Points[2], map[string][2]float64{"sojourn_p99_ms": {180, 15}, "goodput_rps": {90, 5}})
	withStats(&res.Points[3], map[string][2]float64{"sojourn_p99_ms": {199, 1}, "goodput_rps": {95, 15}})
	a := Decide(res)
	want := []bool{false, false, true, true}
	for i, v := range a.Verdicts {
		if v.MeetsAll != want[i] {
			t.Errorf("point %d meets all: %v, want %v (%+v)", i, v.MeetsAll, want[i], v.Checks)
		}
	}
	c := a.Verdicts[0].Checks[0]
	if !c.Interval || c.Measured != 210 || c.Mean != 190 || c.HalfWidth != 20 || c.Pass {
		t.Errorf("p99 check of point 0: %+v", c)
	}
	if g := a.Verdicts[1].Checks[1]; g.Measured != 75 || g.Pass {
		t.Errorf("goodput check of point 1: %+v", g)
	}
	ch := a.Choices[0]
	if ch.Feasible != 2 || ch.Point != 3 {
		t.Fatalf("recommended %d of %d feasible, want point 3 (mean goodput 95) of 2", ch.Point, ch.Feasible)
	}
	// Binding: p99 slack (200-200)/200 = 0; goodput (80-80)/80 = 0: the first.
	if ch.Binding == nil || ch.Binding.Objective.Metric != "sojourn_p99_ms" || ch.Binding.Slack != 0 {
		t.Errorf("binding %+v", ch.Binding)
	}
}

// A strict objective at the interval's end fails; nothing feasible gives
// the closest point by its pessimistic violation; an interval of one run
// (N < 2) is judged on the mean.
func TestIntervalsStrictClosestAndSingleRun(t *testing.T) {
	objs := []experiments.Objective{{Metric: "reject_pct", Op: "<", Value: 10}}
	res := result(objs, []limiter.Spec{tb}, []point{
		{rate: 100, burst: 10, reject: 5}, // 8 ± 2: upper 10 fails (strict)
		{rate: 100, burst: 20, reject: 5}, // 9 ± 4: upper 13 fails by 0.3
		{rate: 100, burst: 30, reject: 5}, // 11 ± 0.5: upper 11.5 fails by 0.15
	})
	withStats(&res.Points[0], map[string][2]float64{"reject_pct": {8, 2}})
	withStats(&res.Points[1], map[string][2]float64{"reject_pct": {9, 4}})
	withStats(&res.Points[2], map[string][2]float64{"reject_pct": {11, 0.5}})
	ch := Decide(res).Choices[0]
	if ch.Feasible != 0 || ch.Point != 0 {
		t.Fatalf("point %d feasible %d, want closest 0 (violation 0) and none feasible", ch.Point, ch.Feasible)
	}
	one := result(objs, []limiter.Spec{tb}, []point{{rate: 100, burst: 10, reject: 50}})
	one.Points[0].Stats = []experiments.Stat{{Key: "reject_pct", Mean: 9, HalfWidth: 0, N: 1}}
	if v := Decide(one).Verdicts[0]; !v.MeetsAll || v.Checks[0].Interval || v.Checks[0].Measured != 9 {
		t.Errorf("one run: %+v", v)
	}
}

// Ties among feasible replicated points go by mean goodput, then size.
func TestIntervalTiesByMeanGoodput(t *testing.T) {
	objs := []experiments.Objective{{Metric: "sojourn_p99_ms", Op: "<=", Value: 500}}
	res := result(objs, []limiter.Spec{tb}, []point{
		{rate: 100, burst: 40, goodput: 100}, // the first run's goodput is higher, the mean lower
		{rate: 100, burst: 20, goodput: 50},
		{rate: 100, burst: 10, goodput: 50},
	})
	withStats(&res.Points[0], map[string][2]float64{"goodput_rps": {80, 3}, "sojourn_p99_ms": {10, 1}})
	withStats(&res.Points[1], map[string][2]float64{"goodput_rps": {90, 30}, "sojourn_p99_ms": {10, 1}})
	withStats(&res.Points[2], map[string][2]float64{"goodput_rps": {90, 1}, "sojourn_p99_ms": {10, 1}})
	if got := Decide(res).Choices[0].Point; got != 2 {
		t.Fatalf("recommended %d, want 2 (mean goodput 90, then the smaller burst)", got)
	}
}
