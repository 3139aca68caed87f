package decide

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// cell is one point of a synthetic sweep: a limiter's parameter values in
// one scenario (load, seed, server, policy, swept field values) and the
// metrics the rule reads.
type cell struct {
	li             int
	params         limiter.Params
	server, policy string
	load, seed     string
	axes           []float64
	goodput        float64
	p99            int
	reject         float64
	late           int
	stats          map[string][2]float64 // key → mean, half-width (5 runs)
	bound          *experiments.Bounds
}

// sweep builds a Result of cells in the given order under cfg (its
// limiters and objectives set by the caller).
func sweep(cfg *experiments.Config, cells []cell) *experiments.Result {
	res := &experiments.Result{Config: cfg}
	for i, c := range cells {
		spec := &cfg.Limiters[c.li]
		p := experiments.Point{Index: i, LimiterIndex: c.li, Limiter: spec.Label(), Type: spec.Type, Params: c.params,
			ServerName: c.server, PolicyName: c.policy, LoadName: c.load, Seed: c.seed, Axes: c.axes, Bounds: c.bound,
			Metrics: experiments.Metrics{GoodputRPS: c.goodput, Sojourn: experiments.Delays{P99: c.p99}, RejectPct: c.reject, Late: c.late}}
		if p.Params == nil {
			p.Params = limiter.Params{}
		}
		if c.stats != nil {
			withStats(&p, c.stats)
		}
		res.Points = append(res.Points, p)
	}
	return res
}

// tbp is a token bucket's point: rate and burst, the other parameters at
// their registry defaults (as a decoded config has them).
func tbp(rate, burst float64) limiter.Params {
	return limiter.WithDefaults(limiter.TypeTokenBucket, limiter.Params{limiter.ParamRate: rate, limiter.ParamBurst: burst})
}

// tbName is the name of tbp(rate, burst), written from the registry's rows.
func tbName(rate, burst float64) string {
	return limiter.FormatParams(limiter.TypeTokenBucket, tbp(rate, burst))
}

func objectives(lines string) []experiments.Objective {
	objs, errs := experiments.ParseObjectives(lines)
	if len(errs) > 0 {
		panic(errs.Error())
	}
	return objs
}

func tol(pct float64) *experiments.Decision {
	return &experiments.Decision{GoodputTolerancePct: &pct}
}

// recommended is the limiter's recommended setting.
func recommended(t *testing.T, a *Answer, li int) *Setting {
	t.Helper()
	for _, ch := range a.Choices {
		if ch.LimiterIndex == li {
			if ch.Setting < 0 {
				t.Fatalf("limiter %d: no setting", li)
			}
			return &a.Settings[ch.Setting]
		}
	}
	t.Fatalf("no choice for limiter %d", li)
	return nil
}

// Loads, seeds and swept fields are scenarios; servers and policies are
// part of the setting; decision.scenarios moves them.
func TestSettingsAndScenarios(t *testing.T) {
	objs := objectives("reject_pct <= 50")
	var cells []cell
	for _, burst := range []float64{5, 10} {
		for _, srv := range []string{"fifo", "lifo"} {
			for _, load := range []string{"steady", "bursty"} {
				for _, seed := range []string{"1", "2"} {
					cells = append(cells, cell{params: tbp(100, burst), server: srv, load: load, seed: seed, goodput: 90, reject: 10})
				}
			}
		}
	}
	a := Decide(sweep(&experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objs}, cells))
	if len(a.Settings) != 4 || len(a.Scenarios) != 4 {
		t.Fatalf("%d settings, %d scenarios; want 4 and 4", len(a.Settings), len(a.Scenarios))
	}
	if got := a.Settings[1].Name(); got != tbName(100, 5)+", server lifo" {
		t.Errorf("setting 1: %q", got)
	}
	if got := a.Scenarios[3].Name(); got != "load bursty, seed 2" {
		t.Errorf("scenario 3: %q", got)
	}
	if got := a.Settings[2].Points; len(got) != 4 || got[0] != 8 || got[3] != 11 {
		t.Errorf("setting 2's points %v, want [8 9 10 11]", got)
	}
	for i := range cells {
		if s, k := a.SettingOf[i], a.ScenarioOf[i]; a.Settings[s].Points[k] != i {
			t.Errorf("point %d: setting %d scenario %d, whose point is %d", i, s, k, a.Settings[s].Points[k])
		}
	}
	// Servers as scenarios: 2 settings of 8 scenarios.
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objs,
		Decision: &experiments.Decision{Scenarios: []string{experiments.ScenarioLoads, experiments.ScenarioServers}}}
	a = Decide(sweep(cfg, cells))
	if len(a.Settings) != 2 || len(a.Scenarios) != 8 || a.Scenarios[4].Name() != "server lifo, load steady, seed 1" {
		t.Fatalf("servers as scenarios: %d settings, %d scenarios, scenario 4 %q", len(a.Settings), len(a.Scenarios), a.Scenarios[4].Name())
	}
	// Loads as a setting axis (decision.scenarios without loads): seeds stay scenarios.
	cfg.Decision.Scenarios = []string{}
	a = Decide(sweep(cfg, cells))
	if len(a.Settings) != 8 || len(a.Scenarios) != 2 || a.Settings[1].Name() != tbName(100, 5)+", server fifo, load bursty" {
		t.Fatalf("no scenario axes: %d settings, %d scenarios, setting 1 %q", len(a.Settings), len(a.Scenarios), a.Settings[1].Name())
	}
}

// Swept fields are scenarios by default, settings when decision.scenarios
// leaves "fields" out.
func TestSweptFieldsAreScenarios(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("reject_pct <= 50")}
	cfg.Server.Lists = map[string][]float64{"workers": {1, 2}}
	var cells []cell
	for _, burst := range []float64{5, 10} {
		for _, w := range []float64{1, 2} {
			cells = append(cells, cell{params: tbp(100, burst), axes: []float64{w}, goodput: 90})
		}
	}
	a := Decide(sweep(cfg, cells))
	if len(a.Settings) != 2 || len(a.Scenarios) != 2 || a.Scenarios[1].Name() != "server.workers 2" {
		t.Fatalf("%d settings, scenarios %+v", len(a.Settings), a.Scenarios)
	}
	cfg.Decision = &experiments.Decision{Scenarios: []string{experiments.ScenarioLoads}}
	a = Decide(sweep(cfg, cells))
	if len(a.Settings) != 4 || len(a.Scenarios) != 1 || a.Settings[1].Name() != tbName(100, 5)+", server.workers 2" {
		t.Fatalf("fields as settings: %d settings, %d scenarios, %q", len(a.Settings), len(a.Scenarios), a.Settings[1].Name())
	}
}

// The best setting under one load fails under the other: the
// recommendation meets every objective under both, its worst values are
// over both loads, and it names the binding load.
func TestRecommendationHoldsUnderEveryLoad(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("sojourn_p99_ms <= 150\nreject_pct <= 20")}
	res := sweep(cfg, []cell{
		{params: tbp(100, 10), load: "steady", goodput: 100, p99: 40, reject: 5},
		{params: tbp(100, 10), load: "bursty", goodput: 90, p99: 120, reject: 15},
		{params: tbp(120, 12), load: "steady", goodput: 125, p99: 50, reject: 2},  // the best under steady
		{params: tbp(120, 12), load: "bursty", goodput: 95, p99: 140, reject: 25}, // fails under bursty
	})
	a := Decide(res)
	s := recommended(t, a, 0)
	if s.Index != 0 || !s.MeetsAll || a.Feasible != 1 {
		t.Fatalf("recommended %q (meets all %v), want rate 100 burst 10", s.Name(), s.MeetsAll)
	}
	if s.WorstGoodputRPS != 90 || s.Outcomes[0].Measured != 120 || s.Outcomes[1].Measured != 15 {
		t.Errorf("worst values: goodput %v, p99 %v, reject %v", s.WorstGoodputRPS, s.Outcomes[0].Measured, s.Outcomes[1].Measured)
	}
	// Margins under bursty: p99 (150-120)/150 = 0.2, reject (20-15)/20 = 0.25.
	if !near(s.Margin, 0.2) || s.Binding != 0 || a.Scenarios[s.BindingScenario].Name() != "load bursty" {
		t.Errorf("margin %v binding %d in %q", s.Margin, s.Binding, a.Scenarios[s.BindingScenario].Name())
	}
	if ch := a.Choices[0]; ch.Point != 1 || ch.Binding == nil || ch.Binding.Objective.Metric != "sojourn_p99_ms" {
		t.Errorf("choice point %d binding %+v, want point 1 (bursty)", ch.Point, ch.Binding)
	}
	if o := a.Settings[1].Outcomes[1]; o.Pass || o.Met != 1 || o.Scenario != 1 {
		t.Errorf("the other setting's reject: %+v", o)
	}
}

// A zero target never binds and counts in no margin; it decides
// feasibility and breaks the ties after the margin by its absolute slack.
func TestZeroTargets(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("late <= 0\nreject_pct <= 20\nsojourn_p99_ms <= -0")}
	if cfg.Objectives[2].Value != 0 {
		t.Fatal("parse -0")
	}
	cfg.Objectives = cfg.Objectives[:2]
	res := sweep(cfg, []cell{
		{params: tbp(100, 10), goodput: 100, reject: 10, late: 1},   // infeasible: late
		{params: tbp(100, 20), goodput: 100, reject: 10, late: 0},   // margin 0.5, late slack 0
		{params: tbp(200, 20), goodput: 100, reject: 10, late: 0},   // same; more permissive
		{params: tbp(300, 20), goodput: 100.5, reject: 15, late: 0}, // margin 0.25: within 1% of 100.5, smaller margin
	})
	a := Decide(res)
	s := recommended(t, a, 0)
	if s.Index != 1 || s.Binding != 1 || !near(s.Margin, 0.5) {
		t.Fatalf("recommended %q margin %v binding %d; want rate 100 burst 20, margin 0.5 on reject_pct", s.Name(), s.Margin, s.Binding)
	}
	if a.Settings[0].MeetsAll || a.Settings[0].Outcomes[0].Pass {
		t.Error("late = 1 meets late <= 0")
	}
	// Every target 0: no margin, no binding; the ties go to the slack.
	cfg.Objectives = objectives("late <= 0\nrejected <= 0")
	res = sweep(cfg, []cell{
		{params: tbp(100, 10), goodput: 100},
		{params: tbp(100, 20), goodput: 100},
	})
	res.Points[0].Metrics.Late, res.Points[1].Metrics.Late = 0, -2 // a slack of 2 (synthetic)
	a = Decide(res)
	s = recommended(t, a, 0)
	if s.HasMargin || s.Binding != -1 || s.BindingScenario != -1 || s.Index != 1 || a.Choices[0].Binding != nil {
		t.Fatalf("all zero targets: %+v", s)
	}
}

// Within the goodput tolerance the margin decides; outside it, goodput.
// The tolerance is the config's decision.goodput_tolerance_pct.
func TestGoodputTolerance(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("sojourn_p99_ms <= 150\ngoodput_rps >= 150")}
	cells := []cell{
		{params: tbp(200, 10), goodput: 178.8, p99: 54},  // margins 0.64, 0.192
		{params: tbp(220, 10), goodput: 179.3, p99: 139}, // 0.073: the knife edge
		{params: tbp(100, 10), goodput: 170, p99: 20},    // outside 1%
	}
	if s := recommended(t, Decide(sweep(cfg, cells)), 0); s.Index != 0 {
		t.Fatalf("default tolerance: %q, want rate 200", s.Name())
	}
	cfg.Decision = tol(0)
	if s := recommended(t, Decide(sweep(cfg, cells)), 0); s.Index != 1 {
		t.Fatalf("tolerance 0: %q, want rate 220", s.Name())
	}
	cfg.Decision = tol(10)
	if s := recommended(t, Decide(sweep(cfg, cells)), 0); s.Index != 0 {
		t.Fatalf("tolerance 10: %q, want rate 200 (margin 0.192 over 0.133)", s.Name())
	}
}

// Ties after margin and zero slacks go to the less permissive setting,
// parameter by parameter in the registry row's order: a larger rate or
// burst admits more, a longer window less; then the earlier point.
func TestPermissivenessTies(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("reject_pct <= 20")}
	res := sweep(cfg, []cell{
		{params: tbp(200, 5), goodput: 90, reject: 10},
		{params: tbp(100, 40), goodput: 90, reject: 10},
		{params: tbp(100, 20), goodput: 90, reject: 10},
	})
	if s := recommended(t, Decide(res), 0); s.Index != 2 {
		t.Fatalf("token bucket: %q, want rate 100 burst 20", s.Name())
	}
	fw := limiter.Spec{Type: limiter.TypeFixedWindow}
	cfg = &experiments.Config{Limiters: []limiter.Spec{fw}, Objectives: objectives("reject_pct <= 20")}
	w := func(limit, window float64) limiter.Params {
		return limiter.Params{limiter.ParamLimit: limit, limiter.ParamWindow: window}
	}
	res = sweep(cfg, []cell{
		{params: w(100, 500), goodput: 90, reject: 10},
		{params: w(100, 1000), goodput: 90, reject: 10}, // a longer window admits less
		{params: w(200, 2000), goodput: 90, reject: 10}, // limit first: 200 admits more
	})
	if s := recommended(t, Decide(res), 0); s.Index != 1 {
		t.Fatalf("fixed window: %q, want limit 100 window 1000", s.Name())
	}
	// The same values: the earlier point.
	res = sweep(cfg, []cell{
		{params: w(100, 1000), server: "a", goodput: 90, reject: 10},
		{params: w(100, 1000), server: "b", goodput: 90, reject: 10},
	})
	if s := recommended(t, Decide(res), 0); s.Index != 0 {
		t.Fatalf("same values: %q, want the first", s.Name())
	}
}

// A parameter whose row admits more neither way is skipped.
func TestAdmitsNoneIsSkipped(t *testing.T) {
	k := &limiter.Kind{Type: "decide-test-gate", Model: "test", Stage: false,
		Params: []limiter.Param{
			{Name: "decide_mode", Label: "Mode", Unit: "", Integer: true, Min: 0, Max: 9, Admits: limiter.AdmitsNone},
			{Name: limiter.ParamBurst, Label: "Burst", Unit: "requests", Integer: true, Min: 1, Max: 100, Admits: limiter.AdmitsLarger},
		},
		New: func(*limiter.Spec, limiter.Params, limiter.Env) (limiter.Gate, error) { return limiter.None{}, nil }}
	t.Cleanup(limiter.Register(k))
	cfg := &experiments.Config{Limiters: []limiter.Spec{{Type: k.Type}}, Objectives: objectives("reject_pct <= 20")}
	res := sweep(cfg, []cell{
		{params: limiter.Params{"decide_mode": 1, limiter.ParamBurst: 9}, goodput: 90},
		{params: limiter.Params{"decide_mode": 2, limiter.ParamBurst: 3}, goodput: 90},
	})
	if s := recommended(t, Decide(res), 0); s.Index != 1 {
		t.Fatalf("%q, want burst 3 (mode has no direction)", s.Name())
	}
}

// Best overall: the rule over every limiter's settings; across limiters
// the margin, then the config's order (permissiveness within one only).
func TestBestOverall(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb, {Type: limiter.TypeFixedWindow}}, Objectives: objectives("reject_pct <= 20")}
	fw := limiter.Params{limiter.ParamLimit: 1, limiter.ParamWindow: 1000}
	res := sweep(cfg, []cell{
		{li: 0, params: tbp(300, 50), goodput: 90, reject: 10},
		{li: 1, params: fw, goodput: 90, reject: 10},
	})
	a := Decide(res)
	if a.Best != 0 || !a.Settings[0].BestOverall || a.Settings[1].BestOverall || !a.Settings[1].Recommended {
		t.Fatalf("best %d: the config's first limiter on a tie", a.Best)
	}
	res.Points[1].Metrics.RejectPct = 5
	if a = Decide(res); a.Best != 1 {
		t.Fatalf("best %d, want the larger margin (the second limiter)", a.Best)
	}
}

// A setting without a point in some scenario (a cancelled sweep) is never
// recommended, nor the closest.
func TestMissingScenarioNeverRecommended(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("reject_pct <= 20")}
	res := sweep(cfg, []cell{
		{params: tbp(100, 10), load: "a", goodput: 80, reject: 10},
		{params: tbp(100, 10), load: "b", goodput: 80, reject: 10},
		{params: tbp(200, 10), load: "a", goodput: 150, reject: 0}, // its load b never ran
	})
	res.Partial = &experiments.Partial{PointsDone: 3, PointsTotal: 4}
	a := Decide(res)
	if s := recommended(t, a, 0); s.Index != 0 || a.Settings[1].Complete || a.Settings[1].MeetsAll || a.Feasible != 1 {
		t.Fatalf("recommended %q; the incomplete one %+v", s.Name(), a.Settings[1])
	}
	res.Points[0].Metrics.RejectPct = 30 // nothing feasible: the closest is complete too
	a = Decide(res)
	if s := recommended(t, a, 0); s.Index != 0 || a.Feasible != 0 {
		t.Fatalf("closest %q", s.Name())
	}
	// Only incomplete settings: no choice.
	res.Points = res.Points[2:]
	res.Points[0].Index = 0
	res.Points = append(res.Points, res.Points[0])
	res.Points[1].LoadName, res.Points[1].Params, res.Points[1].Index = "b", tbp(300, 10), 1
	if a = Decide(res); a.Choices[0].Setting != -1 || a.Best != -1 {
		t.Fatalf("choice %+v best %d", a.Choices[0], a.Best)
	}
}

// Nothing feasible: the closest setting misses the fewest objectives in
// any one scenario (not in all), then violates the least; each
// objective's settings meeting it alone, and the pair that never holds.
func TestClosestAndConflicts(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("sojourn_p99_ms <= 50\ngoodput_rps >= 180\nreject_pct <= 50")}
	res := sweep(cfg, []cell{
		// misses p99 under a, goodput under b: one per scenario; violation 0.2 + 0.5
		{params: tbp(100, 10), load: "a", goodput: 190, p99: 60},
		{params: tbp(100, 10), load: "b", goodput: 90, p99: 40},
		// misses p99 and goodput under a: two in one scenario; violation 0.02 + 0.0056
		{params: tbp(200, 10), load: "a", goodput: 179, p99: 51},
		{params: tbp(200, 10), load: "b", goodput: 190, p99: 40},
		// misses goodput: one per scenario; violation 0.5
		{params: tbp(300, 10), load: "a", goodput: 90, p99: 10},
		{params: tbp(300, 10), load: "b", goodput: 100, p99: 10},
		// meets goodput alone; misses p99: violation 1
		{params: tbp(400, 10), load: "a", goodput: 200, p99: 100},
		{params: tbp(400, 10), load: "b", goodput: 200, p99: 100},
	})
	a := Decide(res)
	s := recommended(t, a, 0)
	if a.Feasible != 0 || s.Index != 2 || s.Missed != 1 || !near(s.Violation, 0.5) {
		t.Fatalf("closest %q missed %d violation %v; want rate 300 (one miss, 0.5)", s.Name(), s.Missed, s.Violation)
	}
	if m := a.Settings[1].Missed; m != 2 {
		t.Errorf("rate 200 misses %d in one scenario, want 2", m)
	}
	if got := a.MeetAlone; len(got) != 3 || got[0] != 1 || got[1] != 1 || got[2] != 4 {
		t.Errorf("meet alone %v, want [1 1 4]", got)
	}
	if c := a.Conflict; c == nil || c.A != 0 || c.B != 1 {
		t.Errorf("conflict %+v, want p99 and goodput", c)
	}
	ch := a.Choices[0]
	if ch.Binding != nil || len(ch.Misses) != 1 || ch.Misses[0].Objective.Metric != "goodput_rps" || ch.Misses[0].Measured != 90 {
		t.Errorf("misses %+v", ch.Misses)
	}
	// An objective nobody meets: no pair is named.
	cfg.Objectives = append(cfg.Objectives, objectives("goodput_rps >= 1000")...)
	if a = Decide(res); a.Conflict != nil || a.MeetAlone[3] != 0 {
		t.Errorf("with an unmeetable objective: conflict %+v meet alone %v", a.Conflict, a.MeetAlone)
	}
}

// Replicated scenarios: each judged on its interval's pessimistic end,
// the worst goodput is the lowest mean, the guarantee the worst run.
func TestReplicatedScenarios(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("sojourn_p99_ms <= 100"), Replications: 3}
	b := func(bound, measured float64) *experiments.Bounds {
		return &experiments.Bounds{Bounded: true, EndToEndBoundMS: bound, EndToEndMaxMS: measured}
	}
	res := sweep(cfg, []cell{
		{params: tbp(100, 10), load: "a", stats: map[string][2]float64{"sojourn_p99_ms": {80, 10}, "goodput_rps": {95, 5}}, bound: b(150, 90)},
		{params: tbp(100, 10), load: "b", stats: map[string][2]float64{"sojourn_p99_ms": {85, 10}, "goodput_rps": {92, 1}}, bound: b(170, 95)},
		{params: tbp(100, 20), load: "a", stats: map[string][2]float64{"sojourn_p99_ms": {60, 10}, "goodput_rps": {99, 5}}},
		{params: tbp(100, 20), load: "b", stats: map[string][2]float64{"sojourn_p99_ms": {95, 10}, "goodput_rps": {98, 1}}}, // mean passes, 105 fails
	})
	for i := range res.Points[:2] {
		for r, m := range []float64{70, 120, 80} {
			q := res.Points[i]
			q.Replica, q.Bounds = r, b(160, m+float64(i))
			res.Replicas = append(res.Replicas, q)
		}
	}
	a := Decide(res)
	s := recommended(t, a, 0)
	if s.Index != 0 || a.Settings[1].MeetsAll {
		t.Fatalf("recommended %q; burst 20 meets all %v (upper end 105)", s.Name(), a.Settings[1].MeetsAll)
	}
	if s.WorstGoodputRPS != 92 || s.Outcomes[0].Measured != 95 || !s.Outcomes[0].Interval || s.BindingScenario != 1 {
		t.Errorf("worst goodput %v, worst p99 %+v", s.WorstGoodputRPS, s.Outcomes[0])
	}
	g := s.Guarantee
	if !g.Bounded || g.BoundMS != 170 || g.MeasuredMS != 121 || g.Scenario != 1 || g.Runs != 6 || g.Scenarios != 2 {
		t.Errorf("guarantee %+v", g)
	}
	if got := g.Label(); got != "worst measured over 2 scenarios and 6 runs" {
		t.Errorf("label %q", got)
	}
	if got := a.Settings[1].Guarantee; got.Bounded || got.Note != "no bound" {
		t.Errorf("without bounds: %+v", got)
	}
}

// The guarantee: the largest bound over the scenarios, none when one
// scenario has none, beside the worst measurement.
func TestGuaranteeOverScenarios(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("reject_pct <= 50")}
	res := sweep(cfg, []cell{
		{params: tbp(100, 10), load: "a", bound: &experiments.Bounds{Bounded: true, EndToEndBoundMS: 100, EndToEndMaxMS: 60}},
		{params: tbp(100, 10), load: "b", bound: &experiments.Bounds{Bounded: true, EndToEndBoundMS: 80, EndToEndMaxMS: 70}},
		{params: tbp(200, 10), load: "a", bound: &experiments.Bounds{Bounded: true, EndToEndBoundMS: 100, EndToEndMaxMS: 60}},
		{params: tbp(200, 10), load: "b", bound: &experiments.Bounds{Note: "unbounded (r > R)", EndToEndMaxMS: 300}},
	})
	a := Decide(res)
	if g := a.Settings[0].Guarantee; !g.Bounded || g.BoundMS != 100 || g.MeasuredMS != 70 || g.Label() != "worst measured over 2 scenarios" {
		t.Errorf("bounded: %+v %q", g, g.Label())
	}
	if g := a.Settings[1].Guarantee; g.Bounded || g.Note != "unbounded (r > R)" || g.MeasuredMS != 300 {
		t.Errorf("unbounded: %+v", g)
	}
}

// The decision section: defaults filled with objectives, validated with
// field paths; -0 is 0; a metric that is not one gets "did you mean".
func TestDecisionConfig(t *testing.T) {
	base := `{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":10}]},"limiters":[{"type":"none"}]`
	cfg, err := document.DecodeConfig([]byte(base + `,"objectives":[{"metric":"reject_pct","op":"<=","value":-0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Decision == nil || strings.Join(cfg.Decision.Scenarios, ",") != "loads,fields" || cfg.GoodputTolerancePct() != 1 {
		t.Fatalf("decision %+v", cfg.Decision)
	}
	if c := cfg.Objectives[0].Column(); c != "pass_reject_pct_le_0" {
		t.Errorf("-0's column %q", c)
	}
	if !strings.Contains(string(cfg.JSON()), `"decision": {
    "scenarios": [
      "loads",
      "fields"
    ],
    "goodput_tolerance_pct": 1
  }`) {
		t.Errorf("canonical document:\n%s", cfg.JSON())
	}
	if again, err := document.DecodeConfig(cfg.JSON()); err != nil || string(again.JSON()) != string(cfg.JSON()) {
		t.Errorf("the canonical document does not read back to itself: %v", err)
	}
	cfg, err = document.DecodeConfig([]byte(base + `,"objectives":[{"metric":"reject_pct","op":"<=","value":1}],"decision":{"scenarios":["policies","loads"],"goodput_tolerance_pct":0}}`))
	if err != nil || strings.Join(cfg.Decision.Scenarios, ",") != "loads,policies" || cfg.GoodputTolerancePct() != 0 || cfg.Scenario("fields") {
		t.Fatalf("given decision: %+v %v", cfg, err)
	}
	cfg, err = document.DecodeConfig([]byte(base + `,"objectives":[{"metric":"reject_pct","op":"<=","value":1}],"decision":{"scenarios":[]}}`))
	if err != nil || len(cfg.Decision.Scenarios) != 0 || cfg.Scenario("loads") {
		t.Fatalf("no scenario axes: %+v %v", cfg.Decision, err)
	}
	if plain, err := document.DecodeConfig([]byte(base + `}`)); err != nil || plain.Decision != nil || strings.Contains(string(plain.JSON()), "decision") {
		t.Errorf("a config without objectives got a decision: %v", err)
	}
	for doc, want := range map[string]string{
		`,"decision":{"scenarios":["seeds"]}}`:                                                          `decision.scenarios[0]: unknown axis "seeds"`,
		`,"decision":{"scenarios":["loads","loads"]}}`:                                                  `decision.scenarios[1]: "loads" is listed twice`,
		`,"decision":{"goodput_tolerance_pct":-1}}`:                                                     `decision.goodput_tolerance_pct: must be from 0 to 100`,
		`,"decision":{"tolerance":1}}`:                                                                  `decision.tolerance: is not a known field`,
		`,"objectives":[{"metric":"goodput","op":">=","value":1}]}`:                                     `objectives[0].metric: unknown metric "goodput": did you mean goodput_rps?`,
		`,"objectives":[{"metric":"p99_ms","op":"<=","value":1}]}`:                                      `did you mean`,
		`,"objectives":[{"metric":"late","op":"<=","value":0},{"metric":"late","op":"<=","value":-0}]}`: `objectives[1]: the same objective as objectives[0] (late <= 0)`,
	} {
		_, err := document.DecodeConfig([]byte(base + doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", doc, err, want)
		}
	}
	if got := experiments.NearestMetric("sojourn_p99"); got != "sojourn_p99_ms" {
		t.Errorf("nearest to sojourn_p99: %q", got)
	}
}

// BenchmarkDecide: the answer of a sweep of 10,000 points (a token bucket
// of 50 × 50 settings under 4 loads) with 3 objectives.
func BenchmarkDecide(b *testing.B) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("sojourn_p99_ms <= 100\nreject_pct <= 10\nlate <= 0")}
	var cells []cell
	for i := range 50 {
		for j := range 50 {
			for k, load := range []string{"a", "b", "c", "d"} {
				cells = append(cells, cell{params: tbp(float64(100+i), float64(1+j)), load: load,
					goodput: float64(90 + (i*7+j*3+k)%11), p99: (i*13 + j*5 + k*17) % 140, reject: float64((i + j + k) % 15)})
			}
		}
	}
	res := sweep(cfg, cells)
	b.ReportAllocs()
	for b.Loop() {
		Decide(res)
	}
}

// Recommended and best overall only for settings meeting every objective:
// a limiter with nothing feasible flags its closest setting Closest, and
// with nothing feasible anywhere the best overall is ClosestOverall.
func TestClosestIsNotRecommended(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb, {Type: limiter.TypeFixedWindow}}, Objectives: objectives("reject_pct <= 20")}
	fw := limiter.Params{limiter.ParamLimit: 1, limiter.ParamWindow: 1000}
	res := sweep(cfg, []cell{
		{li: 0, params: tbp(100, 10), goodput: 90, reject: 30}, // the token bucket's closest
		{li: 0, params: tbp(200, 10), goodput: 90, reject: 40},
		{li: 1, params: fw, goodput: 80, reject: 10}, // feasible
	})
	a := Decide(res)
	flags := func(s *Setting) [4]bool { return [4]bool{s.Recommended, s.BestOverall, s.Closest, s.ClosestOverall} }
	for i, want := range [][4]bool{{false, false, true, false}, {}, {true, true, false, false}} {
		if got := flags(&a.Settings[i]); got != want {
			t.Errorf("setting %d %q: recommended, best, closest, closest overall %v, want %v", i, a.Settings[i].Name(), got, want)
		}
	}
	res.Points[2].Metrics.RejectPct = 50 // nothing feasible anywhere
	a = Decide(res)
	for i, want := range [][4]bool{{false, false, true, true}, {}, {false, false, true, false}} {
		if got := flags(&a.Settings[i]); got != want {
			t.Errorf("nothing feasible: setting %d %q: recommended, best, closest, closest overall %v, want %v", i, a.Settings[i].Name(), got, want)
		}
	}
}

// A missing value (no bound, never recovered) ranks worse than any
// measured miss when choosing the closest setting: the review's
// delay-budget case, end_to_end_bound_ms <= 15.
func TestClosestMissingValueRanksLast(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("end_to_end_bound_ms <= 15")}
	bounded := func(ms float64) *experiments.Bounds { return &experiments.Bounds{Bounded: true, EndToEndBoundMS: ms} }
	for _, tc := range []struct {
		name  string
		cells []cell
		want  int // the closest setting
	}{
		{"unbounded first", []cell{
			{params: tbp(150, 5), goodput: 150, bound: &experiments.Bounds{Note: "r > R"}}, // no bound at all
			{params: tbp(80, 1), goodput: 80, bound: bounded(20)},                          // misses by 33%
		}, 1},
		{"unbounded last", []cell{
			{params: tbp(80, 1), goodput: 80, bound: bounded(20)},
			{params: tbp(150, 5), goodput: 150, bound: &experiments.Bounds{Note: "r > R"}},
		}, 0},
		{"a far measured miss beats no value", []cell{
			{params: tbp(150, 5), goodput: 150},
			{params: tbp(80, 1), goodput: 80, bound: bounded(1500)},
		}, 1},
		{"no value in one scenario only", []cell{
			{params: tbp(150, 5), load: "a", goodput: 150, bound: bounded(16)},
			{params: tbp(150, 5), load: "b", goodput: 150},
			{params: tbp(80, 1), load: "a", goodput: 80, bound: bounded(30)},
			{params: tbp(80, 1), load: "b", goodput: 80, bound: bounded(30)},
		}, 1},
	} {
		a := Decide(sweep(cfg, tc.cells))
		s := recommended(t, a, 0)
		if a.Feasible != 0 || s.Index != tc.want || !s.Closest {
			t.Errorf("%s: closest %q (unmeasured %d, violation %v), want setting %d", tc.name, s.Name(), s.Unmeasured, s.Violation, tc.want)
		}
	}
}

// The point that represents a setting (Choice.Point, Setting.Point(-1)):
// its binding scenario when it meets every objective; else the scenario
// of its worst value of its most violated objective (a missing value
// first), the miss the answer names first.
func TestShownScenario(t *testing.T) {
	cfg := &experiments.Config{Limiters: []limiter.Spec{tb}, Objectives: objectives("sojourn_p99_ms <= 100\nreject_pct <= 20\nend_to_end_bound_ms <= 500")}
	b := &experiments.Bounds{Bounded: true, EndToEndBoundMS: 50}
	for _, tc := range []struct {
		name      string
		cells     []cell // one setting under loads a, b, c
		wantPoint int
		wantFirst string // the first miss named, "" when feasible
	}{
		{"feasible: the binding scenario", []cell{
			{load: "a", p99: 50, reject: 5, bound: b},
			{load: "b", p99: 90, reject: 5, bound: b}, // binds: 10% to spare
			{load: "c", p99: 60, reject: 15, bound: b},
		}, 1, ""},
		{"the most violated objective's worst scenario, not the one with the most misses", []cell{
			{load: "a", p99: 110, reject: 22, bound: b}, // two misses, each small
			{load: "b", p99: 50, reject: 60, bound: b},  // one miss: reject 200% past
			{load: "c", p99: 50, reject: 5, bound: b},
		}, 1, "reject_pct"},
		{"a missing value before any measured miss", []cell{
			{load: "a", p99: 50, reject: 90, bound: b},
			{load: "b", p99: 50, reject: 5, bound: b},
			{load: "c", p99: 50, reject: 5}, // no bound
		}, 2, "end_to_end_bound_ms"},
	} {
		for i := range tc.cells {
			tc.cells[i].params, tc.cells[i].goodput = tbp(100, 10), 90
		}
		a := Decide(sweep(cfg, tc.cells))
		ch := a.Choices[0]
		s := &a.Settings[ch.Setting]
		if ch.Point != tc.wantPoint || s.Point(-1) != tc.wantPoint {
			t.Errorf("%s: choice point %d, setting point %d, want %d", tc.name, ch.Point, s.Point(-1), tc.wantPoint)
		}
		first := ""
		if len(ch.Misses) > 0 {
			first = ch.Misses[0].Objective.Metric
		}
		if first != tc.wantFirst {
			t.Errorf("%s: first miss %q, want %q", tc.name, first, tc.wantFirst)
		}
	}
}
