package shadow

import (
	"math"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// ObjectiveMetrics are the results columns a what-if setting measures,
// which a shadow replay's objectives may name: the share limited
// (reject_pct), the passed requests' rate over the log's span
// (goodput_rps), the most passed requests released in one aligned second
// (downstream_peak_rps: per second here, where a sweep counts 100 ms
// windows), and how long the limiter held the passed requests
// (gate_delay_p99_ms, gate_delay_max_ms).
func ObjectiveMetrics() []string {
	return []string{"reject_pct", "goodput_rps", "downstream_peak_rps", "gate_delay_p99_ms", "gate_delay_max_ms"}
}

// DefaultObjectives are a replay's objectives when none are given: at
// most 1% limited. Under the answer rule that is the least permissive
// setting limiting the fewest requests (the largest margin) among those
// within the goodput tolerance of the best.
func DefaultObjectives() []experiments.Objective {
	return []experiments.Objective{{Metric: "reject_pct", Op: "<=", Value: 1}}
}

// ValidateObjectives checks a replay's objectives: the metrics its what-if
// settings measure (ObjectiveMetrics), an operator, a finite value. Paths
// are objectives[i].
func ValidateObjectives(objs []experiments.Objective) field.List {
	var errs field.List
	for i, o := range objs {
		path := field.Index("objectives", i)
		if !slices.Contains(ObjectiveMetrics(), o.Metric) {
			errs.Add(field.Join(path, "metric"), "%q is not measured by a shadow replay: name one of %s", o.Metric, strings.Join(ObjectiveMetrics(), ", "))
		}
		if !slices.Contains([]string{"<=", "<", ">=", ">"}, o.Op) {
			errs.Add(field.Join(path, "op"), "%q: use <=, <, >= or >", o.Op)
		}
		if math.IsNaN(o.Value) || math.IsInf(o.Value, 0) {
			errs.Add(field.Join(path, "value"), "must be a finite number")
		}
	}
	return errs
}

// Recommendation is the what-if sweep's answer under the lab's answer
// rule (experiments/decide, the rule the run page's answer panel uses):
// the setting recommended among those meeting every objective, else the
// closest.
type Recommendation struct {
	Objectives []experiments.Objective
	// Setting is the recommended (or, when Feasible is 0, the closest)
	// setting: an index into Result.WhatIf, -1 when there is none.
	Setting  int
	Feasible int
	// Binding is the objective that binds the recommendation (an index
	// into Objectives, -1 when none does), Margin its relative slack.
	Binding int
	Margin  float64
	// Misses are the objectives (indexes) the closest setting fails.
	Misses []int
}

// SpanS is the log's span in seconds: from the first request's aligned
// second to the last's, both included (at least 1).
func (r *Result) SpanS() float64 {
	if r.Requests == 0 || math.IsNaN(r.FirstMS) {
		return 1
	}
	return math.Floor(r.LastMS/1000) - math.Floor(r.FirstMS/1000) + 1
}

// asSweep is the what-if sweep as a sweep's result: one limiter (the
// first stage's type), a point per setting with the first stage's
// parameters, and the columns ObjectiveMetrics names measured, so
// experiments/decide answers it as it answers a sweep.
func (r *Result) asSweep(stages []*limiter.Spec, objs []experiments.Objective) *experiments.Result {
	first := *stages[0]
	cfg := &experiments.Config{Limiters: []limiter.Spec{first}, Objectives: objs}
	res := &experiments.Result{Config: cfg}
	span := r.SpanS()
	for i, w := range r.WhatIf {
		s := w.Stages[0]
		p := experiments.Point{Index: i, LimiterIndex: 0, Limiter: first.Label(), Type: s.Type, Params: s.Points()[0]}
		m := &p.Metrics
		m.Arrivals = int(r.Requests)
		m.Rejected = int(w.Limited)
		m.Admitted = int(r.Requests - w.Limited)
		if r.Requests > 0 {
			m.RejectPct = 100 * float64(w.Limited) / float64(r.Requests)
		}
		m.GoodputRPS = float64(r.Requests-w.Limited) / span
		m.DownstreamPeakRPS = float64(w.PassedPeakRPS)
		m.GateDelay = experiments.Delays{P50: int(w.DelayP50MS), P99: int(math.Ceil(w.DelayP99MS)), Max: int(math.Ceil(w.MaxDelayMS))}
		res.Points = append(res.Points, p)
	}
	return res
}

// recommend answers the objectives over the what-if settings.
func (r *Result) recommend(objs []experiments.Objective) *Recommendation {
	rec := &Recommendation{Objectives: objs, Setting: -1, Binding: -1}
	if len(r.WhatIf) == 0 || len(objs) == 0 {
		return rec
	}
	a := decide.Decide(r.asSweep(r.WhatIf[0].Stages, objs))
	if a == nil || a.Best < 0 {
		return rec
	}
	s := &a.Settings[a.Best]
	rec.Setting, rec.Feasible = s.Points[0], a.Feasible
	if a.Feasible > 0 && s.HasMargin {
		rec.Binding, rec.Margin = s.Binding, s.Margin
	}
	for j, o := range s.Outcomes {
		if !o.Pass {
			rec.Misses = append(rec.Misses, j)
		}
	}
	return rec
}

// Recommended is the recommended (or closest) what-if setting, nil
// without a what-if sweep.
func (r *Result) Recommended() *WhatIf {
	if r.Recommendation == nil || r.Recommendation.Setting < 0 {
		return nil
	}
	return r.WhatIf[r.Recommendation.Setting]
}
