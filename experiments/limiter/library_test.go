package limiter_test

import (
	"testing"

	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// Helpers of the library-exact gates' tests (nginx, Envoy, Guava,
// Resilience4j).

// libGate builds a gate through its registry row with the given options
// (the rest at their defaults) and clients clients of weight 1.
func libGate(t testing.TB, typ limiter.Type, p limiter.Params, options map[string]string, clients int) limiter.Gate {
	t.Helper()
	s := limiter.Spec{Type: typ}
	for name, v := range options {
		s.SetOption(name, v)
	}
	for name, v := range p {
		s.SetValues(name, limiter.Values{v})
	}
	s.Normalize()
	if errs := s.Validate("limiter"); len(errs) > 0 {
		t.Fatalf("%s %v: %v", typ, p, errs)
	}
	weights := make([]float64, max(clients, 1))
	for i := range weights {
		weights[i] = 1
	}
	g, err := limiter.New(&s, p, weights, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// libraryCase is a table case of a library gate: events replayed in order.
type libraryCase struct {
	name    string
	typ     limiter.Type
	params  limiter.Params
	options map[string]string
	clients int
	events  []event
}

func runLibCases(t *testing.T, cases []libraryCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := libGate(t, c.typ, c.params, c.options, c.clients)
			for i, e := range c.events {
				release, ok := g.Offer(e.t, e.client)
				if ok != e.ok || (ok && release != e.release) {
					t.Fatalf("event %d (t=%g client %d): got ok=%v release=%g, want ok=%v release=%g",
						i, e.t, e.client, ok, release, e.ok, e.release)
				}
			}
		})
	}
}

// checkKindCurve asserts the sorted release times obey the kind's arrival
// curve at every pair (brute force, as checkCurve for affine curves).
func checkKindCurve(t *testing.T, run int, typ limiter.Type, p limiter.Params, ts []float64) {
	t.Helper()
	c, ok := limiter.ArrivalCurve(&limiter.Spec{Type: typ}, p, 1)
	if !ok {
		t.Fatalf("%s has no arrival curve", typ)
	}
	if c.Kind == calculus.KindAffine {
		checkCurve(t, run, string(typ), ts, c.RatePerMS*1000, c.BurstReq)
		return
	}
	for i := range ts {
		for j := i; j < len(ts); j++ {
			if n := float64(j - i + 1); n > c.At(ts[j]-ts[i])+relTol {
				t.Fatalf("run %d: %s %v: %g releases in [%g, %g] exceed its curve %v = %g",
					run, typ, p, n, ts[i], ts[j], c, c.At(ts[j]-ts[i]))
			}
		}
	}
}
