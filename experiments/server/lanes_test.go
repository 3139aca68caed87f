package server_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/server"
)

// TestLanesServeAsTheServer: over random releases (ties, bursts, idle
// gaps) at 1 to 40 workers, Lanes gives every request the start and
// finish the Server gives it, bit for bit; it models no service
// distribution and no shape.
func TestLanesServeAsTheServer(t *testing.T) {
	for run := range 300 {
		rng := rand.New(rand.NewPCG(uint64(run), 5))
		spec := server.Spec{Workers: []int{1, 2, 3, 7, 40}[rng.IntN(5)], ServiceMS: []float64{1, 0.3, 10, 33.3}[rng.IntN(4)], DeadlineMS: 200}
		spec.Normalize()
		srv := server.New(spec)
		l, ok := server.NewLanes(spec)
		if !ok {
			t.Fatalf("%+v: no lanes", spec)
		}
		at := 0.0
		for k := range 2000 {
			switch rng.IntN(4) {
			case 0: // a tie
			case 1:
				at += rng.Float64() * 100
			default:
				at += rng.ExpFloat64() * spec.ServiceMS / float64(spec.Workers) / 1.2
			}
			s1, f1 := srv.ServeFor(at, spec.ServiceMS)
			s2, f2 := l.Serve(at)
			if s1 != s2 || f1 != f2 {
				t.Fatalf("run %d, %+v, request %d at %g: the server serves [%g, %g], lanes [%g, %g]", run, spec, k, at, s1, f1, s2, f2)
			}
		}
	}
	for _, s := range []server.Spec{{Workers: 2, ServiceMS: 1, Knee: 1}, {Workers: 1, ServiceMS: 1, Service: "exponential"}} {
		s.Normalize()
		if _, ok := server.NewLanes(s); ok {
			t.Errorf("%+v: lanes for a server they do not model", s)
		}
	}
}
