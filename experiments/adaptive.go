package experiments

import "github.com/ratelab/ratelab/experiments/limiter"

// AdaptiveMetrics are an adaptive concurrency gate's measures at a point
// (experiments/simulate, adaptive.go): its limit, the server's ideal
// concurrency (server.Spec.IdealConcurrency) and what the gate saw, per
// series window (Config.SeriesWindow, over the run's duration), and
// scalars of them.
//
// Converged: a window whose limit (at its end) and the limits of the
// windows of the following 10 s (to the next change at most, and at
// least min(10 s, half the time between the changes) of them) all lie
// within ±10% of their median. The changes are
// the run's start, each degrade event's start and end, and each workload
// part's start and end inside the run.
type AdaptiveMetrics struct {
	// LimitMean is the limit's time-weighted mean over the run.
	LimitMean float64 `json:"limit_mean"`
	// LimitFinal is the limit at the run's end.
	LimitFinal int `json:"limit_final"`
	// LimitSD is the steady-state oscillation: the standard deviation of
	// the windows' limits from the first converged window after the last
	// change to the end (nil when it never converged: an empty cell).
	LimitSD *float64 `json:"limit_sd,omitempty"`
	// ConvergeMS is the time from the run's start to its first converged
	// window (nil: never).
	ConvergeMS *float64 `json:"converge_ms,omitempty"`
	// ReconvergeMS is the longest time from a change after the start to
	// the first converged window after it (nil: none, or one never did).
	ReconvergeMS *float64 `json:"reconverge_ms,omitempty"`
	// IdealMean is the server's ideal concurrency's time-weighted mean.
	IdealMean float64 `json:"ideal_mean"`

	// Per window: the limit at the window's end, the ideal concurrency at
	// its start, the gate's most requests in flight, the samples (its
	// completions) in it and their mean RTT (µs, 0: none), and each of the gate's
	// estimates (limiter.Adaptive.Estimates) at the window's end, in
	// thousandths of its unit.
	Limit       []int32            `json:"limit"`
	Ideal       []int32            `json:"ideal"`
	InFlightMax []int32            `json:"in_flight_max"`
	Samples     []int32            `json:"samples"`
	RTTMeanUS   []int32            `json:"rtt_mean_us"`
	Estimates   []AdaptiveEstimate `json:"estimates,omitempty"`
}

// AdaptiveEstimate is one of a gate's estimates per window (thousandths
// of its unit: a "min_rtt_ms" in µs).
type AdaptiveEstimate struct {
	Name   string  `json:"name"`
	Values []int32 `json:"values"`
}

// AnyAdaptive reports whether a limiter of the config is an adaptive
// concurrency gate (its registry row says Adaptive): results.csv then has
// the adaptive columns (adaptiveColumns), empty at the other points.
func (c *Config) AnyAdaptive() bool {
	for i := range c.Limiters {
		if k, ok := limiter.Lookup(c.Limiters[i].Type); ok && k.Adaptive {
			return true
		}
	}
	return false
}

// adaptiveColumns are the adaptive gates' measures (AdaptiveMetrics).
var adaptiveColumns = measuredAll([]Column{
	adaptiveMetric("limit_mean", Fixed1, func(a *AdaptiveMetrics) (float64, bool) { return a.LimitMean, true }),
	adaptiveMetric("limit_final", Int, func(a *AdaptiveMetrics) (float64, bool) { return float64(a.LimitFinal), true }),
	adaptiveMetric("limit_sd", Fixed1, func(a *AdaptiveMetrics) (float64, bool) { return optional(a.LimitSD) }),
	adaptiveMetric("ideal_concurrency_mean", Fixed1, func(a *AdaptiveMetrics) (float64, bool) { return a.IdealMean, true }),
	adaptiveMetric("converge_ms", Fixed1, func(a *AdaptiveMetrics) (float64, bool) { return optional(a.ConvergeMS) }),
	adaptiveMetric("reconverge_ms", Fixed1, func(a *AdaptiveMetrics) (float64, bool) { return optional(a.ReconvergeMS) }),
})

func adaptiveMetric(key string, f Format, get func(a *AdaptiveMetrics) (float64, bool)) Column {
	return Column{Key: key, Format: f, Value: func(p *Point) (float64, bool) {
		if p.Metrics.Adaptive == nil {
			return 0, false
		}
		return get(p.Metrics.Adaptive)
	}}
}

func optional(x *float64) (float64, bool) {
	if x == nil {
		return 0, false
	}
	return *x, true
}
