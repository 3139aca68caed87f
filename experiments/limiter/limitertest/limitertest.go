// Package limitertest registers a throwaway gate type for tests that show
// a new gate needs no edit outside its own file and registry row: the
// config, validation, sweep, results, form, API and CLI help all take it
// from the registry.
package limitertest

import (
	"testing"

	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// Type is the throwaway gate's type name.
const Type limiter.Type = "test-spacer"

// GapParam is its own parameter, which no built-in gate has.
const GapParam = "gap_ms"

// Spacer admits a request when at least gap_ms have passed since the last
// admission, else rejects it: a policer whose output obeys 1 + d/gap.
type Spacer struct {
	gapMS float64
	next  float64
}

// Offer admits at t when t is at or after the next allowed instant.
func (s *Spacer) Offer(t float64, _ int32) (float64, bool) {
	if t < s.next {
		return 0, false
	}
	s.next = t + s.gapMS
	return t, true
}

// Kind is the throwaway gate's registry row.
func Kind() *limiter.Kind {
	return &limiter.Kind{
		Type:  Type,
		Model: "test spacer: at most one admission per gap_ms",
		Params: []limiter.Param{{Name: GapParam, Admits: limiter.AdmitsSmaller, Label: "Gap", Unit: "ms", Min: 0.5, Max: 60_000,
			Doc: "least time between two admissions"}},
		Options: []limiter.Option{{Name: "edge", Label: "Edge", Choices: []string{"closed", "open"},
			Doc: "whether an arrival exactly gap_ms after the last admission passes"}},
		Size:    GapParam,
		Stage:   true,
		Example: limiter.Params{GapParam: 10},
		New: func(_ *limiter.Spec, p limiter.Params, _ limiter.Env) (limiter.Gate, error) {
			return &Spacer{gapMS: p[GapParam]}, nil
		},
		Curve: func(p limiter.Params) calculus.Curve { return calculus.Shaper(1 / p[GapParam]) },
		Nominal: func(p limiter.Params, windowMS float64) float64 {
			return windowMS / p[GapParam]
		},
	}
}

// Register adds the throwaway gate to the registry for the rest of the test.
func Register(t testing.TB) *limiter.Kind {
	t.Helper()
	k := Kind()
	t.Cleanup(limiter.Register(k))
	return k
}
