package presets_test

import (
	"slices"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/experiments/presets"
)

// withObjectives are the presets whose source or description states a
// target, with it as objectives (issue 22), so their pages open on an
// answer: the seed posts' deadline, the SLO, the flash crowd's recovery,
// the fairness presets' Jain's index, the delay budget's bound and the
// p99 under which the adaptive presets pick the best static limit.
var withObjectives = map[string][]experiments.Objective{
	"admission-control": {{Metric: "sojourn_p99_ms", Op: "<=", Value: 200}},
	"token-vs-leaky":    {{Metric: "sojourn_p99_ms", Op: "<=", Value: 200}},
	"load-shedding":     {{Metric: "sojourn_p99_ms", Op: "<=", Value: 200}},
	"collapse":          {{Metric: "sojourn_p99_ms", Op: "<=", Value: 200}},
	"slo-load-control":  {{Metric: "critical_success_pct", Op: ">=", Value: 99}},
	"flash-crowd":       {{Metric: "recovery_ms", Op: "<=", Value: 5000}},
	"heterogeneous":     {{Metric: "jain_index", Op: ">=", Value: 0.95}},
	"synchronized":      {{Metric: "jain_index", Op: ">=", Value: 0.95}},
	"poisson-120":       {{Metric: "jain_index", Op: ">=", Value: 0.95}},
	"delay-budget":      {{Metric: "end_to_end_bound_ms", Op: "<=", Value: 210}},
	// the adaptive presets' best static limit (issue 28)
	"gradient2-modest-overload": {{Metric: "sojourn_p99_ms", Op: "<=", Value: 50}},
	"capacity-drop":             {{Metric: "sojourn_p99_ms", Op: "<=", Value: 100}},
	"latency-knee":              {{Metric: "sojourn_p99_ms", Op: "<=", Value: 100}},
}

// Presets whose client policies (or servers' clients) model how clients
// behave, not a choice: their policies are scenarios. retry-storm's
// policies stay choices (its question is which to adopt).
var policiesAreScenarios = []string{"collapse", "metastable", "retry-storm-shed"}

// Every preset with objectives answers them: each limiter has a
// recommended setting or, with none meeting every objective, the closest;
// the sweep has a best overall setting. The others carry none.
func TestPresetObjectives(t *testing.T) {
	for _, p := range presets.All() {
		cfg, err := presets.Config(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		want := withObjectives[p.Name]
		if !slices.Equal(cfg.Objectives, want) {
			t.Errorf("%s: objectives %v, want %v", p.Name, cfg.Objectives, want)
		}
		if got := cfg.Scenario(experiments.ScenarioPolicies); got != slices.Contains(policiesAreScenarios, p.Name) {
			t.Errorf("%s: policies are scenarios: %v", p.Name, got)
		}
		if len(want) == 0 || testing.Short() && p.Name != "delay-budget" && p.Name != "admission-control" {
			continue
		}
		a := decide.Decide(runPreset(t, p.Name))
		if a == nil || a.Best < 0 {
			t.Errorf("%s: no answer", p.Name)
			continue
		}
		for _, ch := range a.Choices {
			if ch.Setting < 0 {
				t.Errorf("%s: limiter %s has neither a recommended nor a closest setting", p.Name, ch.Limiter)
			}
		}
		best := &a.Settings[a.Best]
		t.Logf("%s: best overall %s %s (meets all %v, margin %.4f, binding %q), %d of %d settings feasible",
			p.Name, best.Limiter, best.Name(), best.MeetsAll, best.Margin, a.Scenarios[max(best.BindingScenario, 0)].Name(), a.Feasible, len(a.Settings))
	}
}
