package limiter_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// leased is a token-bucket spec of n instances under sharing lease.
func leased(n float64, balancer string, params limiter.Params, options map[string]string) *limiter.Spec {
	s := &limiter.Spec{Type: limiter.TypeTokenBucket}
	for name, v := range params {
		s.SetValues(name, limiter.Values{v})
	}
	s.SetValues(limiter.ParamInstances, limiter.Values{n})
	s.SetOption(limiter.OptionBalancer, balancer)
	s.SetOption(limiter.OptionSharing, limiter.SharingLease)
	for name, v := range options {
		s.SetOption(name, v)
	}
	s.Normalize()
	return s
}

// sharer is what lease-shared instances tell a test.
type sharer interface {
	limiter.Replicated
	limiter.Syncer
	Shares() (enforced []float64, leased float64)
}

// Lease-shared instances under skewed load, scaling events and lease
// server outages: at every moment (shares move only at the server's
// events) the leases the server holds and, with lease_expired zero, the
// shares the instances enforce never sum above the capacity, so no
// window of lease_ms sees them above it; what the instances admit stays
// under their curve (the token bucket's with burst + instances tokens,
// and burst + the newcomers more after a scale-out). Local
// instances of the same settings do go above the capacity's curve (the
// check can fail).
func TestLeaseSharesNeverSumAboveTheCapacity(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(29, 5))
	runs := 60
	if testing.Short() {
		runs = 15
	}
	localAbove := 0
	for run := range runs {
		n := 2 + rng.IntN(4)
		rate := float64(10 + rng.IntN(200))
		burst := float64(1 + rng.IntN(30))
		p := limiter.Params{limiter.ParamRate: rate, limiter.ParamBurst: burst,
			limiter.ParamLeaseMS: float64(200 + rng.IntN(3000)), limiter.ParamRefreshMS: float64(50 + rng.IntN(1000))}
		if run%3 == 1 {
			p[limiter.ParamOutageStart] = float64(rng.IntN(5000))
			p[limiter.ParamOutageEnd] = p[limiter.ParamOutageStart] + float64(rng.IntN(4000))
		}
		if run%4 == 2 {
			p[limiter.ParamScaleAt] = float64(rng.IntN(8000))
			p[limiter.ParamScaleTo] = float64(1 + rng.IntN(6))
		}
		options := map[string]string{limiter.OptionLeaseAlgorithm: []string{limiter.LeaseProportional, limiter.LeaseFair}[run%2]}
		balancer := []string{limiter.BalancerHash, limiter.BalancerRandom, limiter.BalancerRoundRobin}[run%3]
		s := leased(float64(n), balancer, p, options)
		if errs := s.Validate("limiter"); len(errs) > 0 {
			t.Fatal(errs)
		}
		clients := 8
		weights := make([]float64, clients)
		gate, err := limiter.New(s, s.Points()[0], weights, nil)
		if err != nil {
			t.Fatal(err)
		}
		g := gate.(sharer)
		loc := replicated(limiter.TypeTokenBucket, float64(n), balancer, limiter.SharingLocal, limiter.Params{limiter.ParamRate: rate, limiter.ParamBurst: burst})
		l, _ := limiter.New(loc, loc.Points()[0], weights, nil)
		check := func(at float64) {
			enforced, held := g.Shares()
			sum := 0.0
			for _, x := range enforced {
				sum += x
			}
			if held > rate*(1+1e-12) || sum > rate*(1+1e-12) {
				t.Fatalf("run %d (%s, %v) at %g: leases held %g, shares enforced %v (sum %g), capacity %g", run, s.Options[limiter.OptionLeaseAlgorithm], p, at, held, enforced, sum, rate)
			}
		}
		check(0)
		var admitted, local []float64
		tm := 0.0
		for range 3000 {
			// client 0 sends half of everything: hash puts it on one instance
			tm += rng.ExpFloat64() * 1000 / (rate * (0.5 + 2*rng.Float64()))
			for g.NextSyncMS() <= tm {
				at := g.NextSyncMS()
				g.Sync(at)
				check(at)
			}
			client := int32(0)
			if rng.IntN(2) == 0 {
				client = int32(1 + rng.IntN(clients-1))
			}
			if release, ok := g.Offer(tm, client); ok {
				admitted = append(admitted, release)
			}
			if release, ok := l.Offer(tm, client); ok {
				local = append(local, release)
			}
		}
		curve, ok := limiter.ArrivalCurve(s, s.Points()[0], clients)
		if !ok {
			t.Fatalf("run %d: no curve", run)
		}
		for _, w := range []float64{0, 100, 1000, 5000} {
			if got := mostInWindow(admitted, w); float64(got) > curve.At(w)+1e-9 {
				t.Fatalf("run %d: lease admitted %d in %g ms, above its curve %v: %g", run, got, w, curve, curve.At(w))
			}
			if float64(mostInWindow(local, w)) > curve.At(w) {
				localAbove++
			}
		}
	}
	if localAbove == 0 {
		t.Fatal("local instances never went above the lease bound: the check cannot fail")
	}
}

// Lease sharing takes the gates a lease can retune, and says so at the
// sharing field; its parameters belong to it.
func TestLeaseValidate(t *testing.T) {
	t.Parallel()
	s := &limiter.Spec{Type: limiter.TypeFixedWindow}
	s.SetValues(limiter.ParamLimit, limiter.Values{10})
	s.SetValues(limiter.ParamInstances, limiter.Values{3})
	s.SetOption(limiter.OptionSharing, limiter.SharingLease)
	s.Normalize()
	errs := s.Validate("limiters[0]")
	if len(errs) != 1 || errs[0].Path != "limiters[0].sharing" || !strings.Contains(errs[0].Msg, "token-bucket") {
		t.Fatalf("fixed-window under lease: %v", errs)
	}
	d := replicated(limiter.TypeTokenBucket, 3, limiter.BalancerRoundRobin, limiter.SharingDivided, limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 1})
	d.SetValues(limiter.ParamLeaseMS, limiter.Values{1000})
	errs = d.Validate("limiters[0]")
	if len(errs) != 1 || errs[0].Path != "limiters[0].lease_ms" {
		t.Fatalf("lease_ms under divided: %v", errs)
	}
	ok := leased(3, limiter.BalancerRoundRobin, limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 1, limiter.ParamOutageStart: 100, limiter.ParamOutageEnd: 200}, nil)
	if errs := ok.Validate("limiters[0]"); len(errs) > 0 {
		t.Fatalf("a lease server's outage: %v", errs)
	}
}
