package server_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/server"
)

type served struct{ release, start, finish float64 }

func TestServerFIFO(t *testing.T) {
	cases := []struct {
		name    string
		workers int
		service float64
		events  []served
	}{
		{"one worker queues in release order", 1, 10, []served{
			{0, 0, 10}, {0, 10, 20}, {5, 20, 30}, {30, 30, 40}, {100, 100, 110},
		}},
		{"one worker, a release exactly at a finish starts at once", 1, 10, []served{
			{0, 0, 10}, {10, 10, 20}, {20, 20, 30},
		}},
		{"two workers", 2, 10, []served{
			{0, 0, 10}, {0, 0, 10}, // both workers busy until 10
			{0, 10, 20},  // waits for the first free worker
			{3, 10, 20},  // and the second
			{3, 20, 30},  // then the third finish
			{25, 25, 35}, // one worker free (the other busy until 30)
			{25, 30, 40},
		}},
		{"fractional service", 1, 2.5, []served{
			{0, 0, 2.5}, {1, 2.5, 5}, {1, 5, 7.5}, {7.5, 7.5, 10},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := server.New(server.Spec{Workers: c.workers, ServiceMS: c.service})
			for i, e := range c.events {
				start, finish := s.Serve(e.release)
				if start != e.start || finish != e.finish {
					t.Fatalf("request %d released at %g: start %g finish %g, want %g %g", i, e.release, start, finish, e.start, e.finish)
				}
			}
		})
	}
}

func TestServerInSystem(t *testing.T) {
	s := server.New(server.Spec{Workers: 1, ServiceMS: 10})
	for range 1000 { // grows its ring several times
		s.Serve(0)
	}
	// Request k (from 0) finishes at 10(k+1); it is in the system while
	// its finish is after t.
	for _, c := range []struct {
		t    float64
		want int
	}{{0, 1000}, {9.999, 1000}, {10, 999}, {5000, 500}, {5005, 500}, {9990, 1}, {10000, 0}, {20000, 0}} {
		if got := s.InSystem(c.t); got != c.want {
			t.Errorf("InSystem(%g) = %d, want %d", c.t, got, c.want)
		}
	}
	if s.Len() != 0 {
		t.Errorf("Len = %d after everything finished", s.Len())
	}
}

func TestServerRefusesTimeGoingBackwards(t *testing.T) {
	s := server.New(server.Spec{Workers: 1, ServiceMS: 10})
	s.Serve(5)
	defer func() {
		if recover() == nil {
			t.Error("Serve at an earlier time did not panic")
		}
	}()
	s.Serve(4)
}

// TestServerMatchesWorkerPool compares the server with an independent model:
// each request takes the worker that frees first, starting at
// max(release, that worker's free time).
func TestServerMatchesWorkerPool(t *testing.T) {
	for run := range 1000 {
		rng := rand.New(rand.NewPCG(20, uint64(run)))
		workers := 1 + rng.IntN(5)
		service := 0.5 + rng.Float64()*20
		s := server.New(server.Spec{Workers: workers, ServiceMS: service})
		free := make([]float64, workers)
		var finishes []float64
		at := 0.0
		for i := range 50 + rng.IntN(300) {
			if rng.IntN(4) != 0 {
				at += rng.ExpFloat64() * service / float64(workers)
			}
			w := 0
			for k := range free {
				if free[k] < free[w] {
					w = k
				}
			}
			wantStart := math.Max(at, free[w])
			free[w] = wantStart + service
			inSystem := 0
			for _, f := range finishes {
				if f > at {
					inSystem++
				}
			}
			if got := s.InSystem(at); got != inSystem {
				t.Fatalf("run %d request %d: InSystem(%g) = %d, want %d", run, i, at, got, inSystem)
			}
			start, finish := s.Serve(at)
			if start != wantStart || finish != wantStart+service {
				t.Fatalf("run %d request %d at %g (%d workers): start %g finish %g, want %g %g",
					run, i, at, workers, start, finish, wantStart, wantStart+service)
			}
			finishes = append(finishes, finish)
		}
	}
}

func TestSpecDefaultsAndLimits(t *testing.T) {
	var s server.Spec
	s.Normalize()
	if s.Workers != 1 || s.ServiceMS != 10 || s.DeadlineMS != 200 {
		t.Fatalf("defaults %+v, want 1 worker, 10 ms, 200 ms", s)
	}
	if s.RateRPS() != 100 {
		t.Errorf("RateRPS = %g, want 100", s.RateRPS())
	}
	bad := server.Spec{Workers: -1, ServiceMS: math.NaN(), DeadlineMS: -1}
	errs := bad.Validate("server")
	if len(errs) != 3 {
		t.Fatalf("Validate found %d errors in %+v, want 3: %v", len(errs), bad, errs)
	}
	for i, p := range []string{"server.workers", "server.service_ms", "server.deadline_ms"} {
		if errs[i].Path != p {
			t.Errorf("error %d at %q, want %q", i, errs[i].Path, p)
		}
	}
}
