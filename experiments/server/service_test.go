package server_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/server"
)

type fieldError = field.Error

// quantile is the nearest-rank quantile q (0..1) of sorted values.
func quantile(sorted []float64, q float64) float64 {
	return sorted[min(len(sorted)-1, int(math.Ceil(q*float64(len(sorted))))-1)]
}

func normalized(s server.Spec) server.Spec {
	s.Normalize()
	return s
}

// TestServiceDistributions: over a large seeded sample each distribution
// has the mean its spec says (MeanMS, the mean capacity and utilization
// use) and the quantiles it was given, for several seeds (a property of
// every seed, not of one lucky draw).
func TestServiceDistributions(t *testing.T) {
	const n = 200_000
	cases := []struct {
		name  string
		spec  server.Spec
		quant map[float64]float64 // quantile -> value
		tol   float64             // relative
	}{
		{"exponential", server.Spec{Service: server.ServiceExponential, ServiceMS: 8},
			map[float64]float64{0.5: 8 * math.Ln2, 0.99: 8 * math.Log(100)}, 0.02},
		{"lognormal", server.Spec{Service: server.ServiceLognormal, ServiceP50MS: 10, ServiceP99MS: 120},
			map[float64]float64{0.5: 10, 0.99: 120}, 0.03},
		{"lognormal narrow", server.Spec{Service: server.ServiceLognormal, ServiceP50MS: 3, ServiceP99MS: 4},
			map[float64]float64{0.5: 3, 0.99: 4}, 0.01},
		{"bimodal", server.Spec{Service: server.ServiceBimodal, ServiceSlowShare: 0.1, ServiceFastMS: 2, ServiceSlowMS: 50},
			map[float64]float64{0.5: 2, 0.89: 2, 0.91: 50}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := normalized(c.spec)
			spec.Workers = 1
			if errs := spec.Validate("server"); len(errs) > 0 {
				t.Fatal(errs)
			}
			if spec.ServiceMS != spec.MeanMS() {
				t.Fatalf("service_ms %g, want the mean %g", spec.ServiceMS, spec.MeanMS())
			}
			for seed := range uint64(3) {
				xs := spec.Draw(seed, n, nil)
				sum := 0.0
				for _, x := range xs {
					sum += x
				}
				mean := sum / n
				if math.Abs(mean-spec.MeanMS()) > 0.02*spec.MeanMS() {
					t.Errorf("seed %d: sample mean %g, want %g", seed, mean, spec.MeanMS())
				}
				slices.Sort(xs)
				for q, want := range c.quant {
					if got := quantile(xs, q); math.Abs(got-want) > c.tol*want {
						t.Errorf("seed %d: sample p%g = %g, want %g", seed, 100*q, got, want)
					}
				}
			}
		})
	}
}

// TestServiceEmpirical: a request with its own service time keeps it; the
// others draw the column's values, every value about equally often.
func TestServiceEmpirical(t *testing.T) {
	spec := server.Spec{Workers: 1, Service: server.ServiceEmpirical}
	spec.Normalize()
	spec.SetColumn(20, 30)
	given := make([]float64, 300_000)
	for i := range given {
		given[i] = math.NaN()
		if i < 3 {
			given[i] = float64(10 * (i + 1)) // 10, 20, 30
		}
	}
	xs := spec.Draw(7, len(given), given)
	count := map[float64]int{}
	for i, x := range xs {
		if i < 3 && x != given[i] {
			t.Fatalf("request %d took %g, its trace gives %g", i, x, given[i])
		}
		count[x]++
	}
	if len(count) != 3 {
		t.Fatalf("drew %v, want only the column's values", count)
	}
	for v, k := range count {
		if math.Abs(float64(k)/float64(len(xs))-1.0/3) > 0.01 {
			t.Errorf("value %g drawn %d times of %d", v, k, len(xs))
		}
	}
	if m, ok := spec.MaxMS(); !ok || m != 30 || spec.MeanMS() != 20 || spec.ServiceMS != 20 {
		t.Fatalf("max %g %v, mean %g, service_ms %g: want the column's 30 and 20", m, ok, spec.MeanMS(), spec.ServiceMS)
	}
}

// TestServiceDraws: fixed draws nothing; a draw is the same for the same
// seed and differs for another; request i keeps its rank across
// distributions (one uniform per request, the same stream).
func TestServiceDraws(t *testing.T) {
	fixed := normalized(server.Spec{})
	if fixed.Draw(1, 10, nil) != nil {
		t.Fatal("fixed service drew times")
	}
	exp := normalized(server.Spec{Service: server.ServiceExponential, ServiceMS: 5})
	logn := normalized(server.Spec{Service: server.ServiceLognormal, ServiceP50MS: 5, ServiceP99MS: 80})
	a, b, c := exp.Draw(3, 1000, nil), exp.Draw(3, 1000, nil), exp.Draw(4, 1000, nil)
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Fatal("draws are not a function of the seed")
	}
	l := logn.Draw(3, 1000, nil)
	for i := range a {
		for j := range a {
			if (a[i] < a[j]) != (l[i] < l[j]) {
				t.Fatalf("requests %d and %d swap ranks between exponential and lognormal", i, j)
			}
		}
	}
	// A prefix is the draw of fewer requests: a longer load keeps the
	// service times of the requests both have.
	if !slices.Equal(exp.Draw(3, 10, nil), a[:10]) {
		t.Fatal("request i does not take the i-th draw")
	}
}

func TestServiceValidation(t *testing.T) {
	cases := []struct {
		spec       server.Spec
		path, want string
	}{
		{server.Spec{Service: server.ServiceLognormal, ServiceP50MS: 10, ServiceP99MS: 5}, "server.service_p99_ms", "at least service_p50_ms"},
		{server.Spec{Service: server.ServiceLognormal, ServiceP50MS: 10}, "server.service_p99_ms", "is required"},
		{server.Spec{Service: server.ServiceLognormal, ServiceP50MS: -2, ServiceP99MS: 20}, "server.service_p50_ms", "must be more than 0 and at most"},
		{server.Spec{Service: server.ServiceBimodal, ServiceSlowShare: 0.5, ServiceFastMS: 1, ServiceSlowMS: 4e9}, "server.service_slow_ms", "must be more than 0 and at most"},
		{server.Spec{Service: server.ServiceLognormal, ServiceP50MS: 0.001, ServiceP99MS: 3_000_000}, "server.service_p99_ms", "mean service time"},
		{server.Spec{Service: server.ServiceBimodal, ServiceSlowShare: 1.5, ServiceFastMS: 1, ServiceSlowMS: 2}, "server.service_slow_share", "between 0 and 1"},
		{server.Spec{Service: server.ServiceBimodal, ServiceSlowShare: 0.5, ServiceFastMS: 3, ServiceSlowMS: 2}, "server.service_slow_ms", "at least service_fast_ms"},
		{server.Spec{Service: server.ServiceExponential, ServiceP50MS: 3}, "server.service_p50_ms", "leave it out"},
		{server.Spec{Service: "gamma"}, "server.service", "must be one of"},
		{server.Spec{Service: server.ServiceBimodal, ServiceSlowShare: math.NaN(), ServiceFastMS: 1, ServiceSlowMS: 2}, "server.service_slow_share", "between 0 and 1"},
	}
	for _, c := range cases {
		s := normalized(c.spec)
		errs := s.Validate("server")
		if !slices.ContainsFunc(errs, func(e fieldError) bool { return e.Path == c.path && strings.Contains(e.Msg, c.want) }) {
			t.Errorf("%+v: errors %v, want %s: %s", c.spec, errs, c.path, c.want)
		}
	}
}

// TestServerVariableService: with service times that vary, Server serves
// as the textbook FIFO c-server (each request starts when it is released or
// when the earliest worker frees, whichever is later) and counts in the
// system exactly the requests whose finish is after t; the queue model at
// its defaults serves the same.
func TestServerVariableService(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for trial := range 300 {
		workers := 1 + trial%5
		spec := normalized(server.Spec{Workers: workers, Service: server.ServiceExponential, ServiceMS: 1 + 10*r.Float64()})
		srv := server.New(spec)
		rec := &recorder{}
		q := server.NewQueue(spec, 1e9, 0, rec)
		free := make([]float64, workers)
		var fins []float64
		t0 := 0.0
		want := map[int32][2]float64{}
		for i := range 300 {
			t0 += r.ExpFloat64() * spec.ServiceMS / float64(workers) * 0.9
			if r.IntN(8) == 0 {
				t0 = math.Ceil(t0)
			}
			in := 0
			for _, f := range fins {
				if f > t0 {
					in++
				}
			}
			if got := srv.InSystem(t0); got != in {
				t.Fatalf("trial %d request %d: in system %d, want %d", trial, i, got, in)
			}
			if got := q.InSystem(t0); got != in {
				t.Fatalf("trial %d request %d: queue model in system %d, want %d", trial, i, got, in)
			}
			svc := max(0.25, math.Round(r.ExpFloat64()*spec.ServiceMS*4)/4)
			k := slices.Index(free, slices.Min(free))
			wantStart := max(t0, free[k])
			free[k] = wantStart + svc
			fins = append(fins, free[k])
			start, finish := srv.ServeFor(t0, svc)
			if start != wantStart || finish != wantStart+svc {
				t.Fatalf("trial %d request %d: start %g finish %g, want %g %g", trial, i, start, finish, wantStart, wantStart+svc)
			}
			want[int32(i)] = [2]float64{start, finish}
			q.OfferFor(int32(i), 0, t0, t0, svc)
		}
		q.Finish()
		for _, o := range rec.out {
			if !o.served || o.start != want[o.id][0] || o.finish != want[o.id][1] {
				t.Fatalf("trial %d: queue model %+v, want %v", trial, o, want[o.id])
			}
		}
	}
}

// TestQueueExpiryOwnService: expiry "at-dequeue" discards a request whose
// wait plus its own service time would pass the deadline.
func TestQueueExpiryOwnService(t *testing.T) {
	spec := normalized(server.Spec{Workers: 1, Service: server.ServiceExponential, ServiceMS: 10, DeadlineMS: 100, Expire: server.ExpireAtDequeue})
	rec := &recorder{}
	q := server.NewQueue(spec, 1e9, 0, rec)
	q.OfferFor(0, 0, 0, 0, 60)  // served 0..60
	q.OfferFor(1, 0, 0, 0, 50)  // waits 60: 60+50 > 100, expires
	q.OfferFor(2, 0, 0, 0, 40)  // waits 60: 60+40 = 100, served 60..100
	q.OfferFor(3, 0, 0, 0, 0.5) // waits 100: expires
	q.Finish()
	if o := rec.of(1); o.served || o.why != server.ShedExpired {
		t.Fatalf("request 1: %+v, want expired", o)
	}
	if o := rec.of(2); !o.served || o.start != 60 || o.finish != 100 {
		t.Fatalf("request 2: %+v, want served 60..100", o)
	}
	if o := rec.of(3); o.served {
		t.Fatalf("request 3: %+v, want expired", o)
	}
}

// TestBusyCeilMean: the seed lab's in-system formula divides the remaining
// work by the mean service time.
func TestBusyCeilMean(t *testing.T) {
	spec := normalized(server.Spec{Workers: 1, Service: server.ServiceBimodal, ServiceSlowShare: 0.5, ServiceFastMS: 10, ServiceSlowMS: 30, Occupancy: server.OccupancyBusyCeil})
	s := server.New(spec) // mean 20
	s.ServeFor(0, 30)
	s.ServeFor(0, 30)
	s.ServeFor(0, 10) // busy until 70: ceil(70/20) = 4 at 0
	if got := s.InSystem(0); got != 4 {
		t.Fatalf("in system %d, want ceil(70/20) = 4", got)
	}
	if got := s.InSystem(60); got != 1 {
		t.Fatalf("in system at 60: %d, want 1", got)
	}
}

// BenchmarkServiceDraw: the cost of one request's service time drawn by
// each distribution (Sampler.Next: a PCG uniform and the inverse
// distribution function), against the benchmarks of the simulations.
func BenchmarkServiceDraw(b *testing.B) {
	for _, c := range []struct {
		name string
		spec server.Spec
	}{
		{"exponential", server.Spec{Workers: 1, ServiceMS: 10, Service: server.ServiceExponential}},
		{"lognormal", server.Spec{Workers: 1, Service: server.ServiceLognormal, ServiceP50MS: 8, ServiceP99MS: 40}},
		{"bimodal", server.Spec{Workers: 1, Service: server.ServiceBimodal, ServiceSlowShare: 0.1, ServiceFastMS: 5, ServiceSlowMS: 50}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := normalized(c.spec)
			p := s.Sampler(1, server.ServiceStream, nil)
			sum := 0.0
			for range b.N {
				sum += p.Next()
			}
			if !(sum > 0) {
				b.Fatalf("draws summed to %g", sum)
			}
		})
	}
}
