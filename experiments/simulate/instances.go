package simulate

import (
	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// configuredSpanMS is the span over which a gate's Nominal is read as a
// long-run rate (its slope): long beside any window or period the lab
// allows a limiter a rate over.
const configuredSpanMS = 1e9

// measureInstances measures a replicated point's instances against the
// limit one gate of its settings keeps (experiments.ReplicaMetrics), with
// clients clients sharing it: nothing for a gate of one instance.
func measureInstances(cfg *experiments.Config, spec *limiter.Spec, params limiter.Params, clients int, m *experiments.Metrics) {
	if m.Instances == nil || !spec.Replicated() {
		return
	}
	r := m.Replicas // the store's counts, when filed (gateHooks.file)
	if r == nil {
		r = new(experiments.ReplicaMetrics)
	}
	r.Note = limiter.DivideNote(spec, params)
	window := cfg.Metrics.RollingWindowMS
	one := spec.Single()
	var limit float64 // what one gate of the settings lets through in a rolling window
	if c, ok := limiter.ArrivalCurve(one, params, clients); ok {
		r.ConfiguredRPS, limit = c.Rate()*1000, c.At(window)
	} else if far, ok := limiter.Nominal(one, params, clients, configuredSpanMS); ok {
		zero, _ := limiter.Nominal(one, params, clients, 0)
		r.ConfiguredRPS = (far - zero) / (configuredSpanMS / 1000)
		limit, _ = limiter.Nominal(one, params, clients, window)
	}

	if r.ConfiguredRPS > 0 {
		r.EffectiveRatio = m.AdmittedRPS / r.ConfiguredRPS
	}
	if limit > 0 {
		r.OverAdmission = float64(m.RollingMax) / limit
	}
	total, busiest := 0, 0
	for _, in := range m.Instances {
		total += in.Offered
		busiest = max(busiest, in.Offered)
	}
	if total > 0 {
		r.SkewRatio = float64(busiest) * float64(len(m.Instances)) / float64(total)
		r.BusiestSharePct = 100 * float64(busiest) / float64(total)
	}
	m.Replicas = r
}
