package server_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/server"
)

// WouldStart answers what StartAt would, at any time no earlier than the
// last query and in any order among such times, without changing the
// server (StartAt, which drops finished requests, is asked on a replayed
// copy): 300 seeded runs, fixed service with 1 to 4 workers (the ring)
// and exponential service with 2 to 4 (the heaps).
func TestWouldStartIsStartAtWithoutServing(t *testing.T) {
	type served struct{ at, svc float64 }
	for run := range 300 {
		rng := rand.New(rand.NewPCG(77, uint64(run)))
		spec := server.Spec{Workers: 1 + rng.IntN(4), ServiceMS: float64(1 + rng.IntN(20)), DeadlineMS: server.DefaultDeadlineMS}
		if run%2 == 1 {
			spec.Workers = 2 + rng.IntN(3)
			spec.Service = "exponential"
		}
		spec.Normalize()
		a := server.New(spec)
		var history []served
		startAt := func(x float64) float64 {
			b := server.New(spec)
			for _, h := range history {
				b.ServeFor(h.at, h.svc)
			}
			return b.StartAt(x)
		}
		now := 0.0
		for i := range 60 {
			now += rng.ExpFloat64() * spec.ServiceMS / float64(spec.Workers)
			for range 3 { // probes ahead, in random order
				x := now + rng.Float64()*3*spec.ServiceMS
				if got, want := a.WouldStart(x), startAt(x); got != want {
					t.Fatalf("run %d (%d workers, %s) request %d: WouldStart(%g) = %g, StartAt %g", run, spec.Workers, spec.Service, i, x, got, want)
				}
			}
			svc := spec.ServiceMS
			if !spec.FixedService() {
				svc *= 0.5 + rng.Float64()
			}
			a.ServeFor(now, svc)
			history = append(history, served{now, svc})
		}
	}
}
