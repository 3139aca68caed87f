package limiter_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
)

// Property tests: every gate is driven directly (limiter.New + Offer) over
// propertyRuns seeded random arrival lists, and its releases are checked by
// brute force over all pairs of releases, never with the engine's own
// metrics.

const propertyRuns = 1000

// relTol is the float tolerance of the curve checks: token counts are sums
// of a few hundred float64 products, each off by at most half an ulp, so
// their error stays far below 1e-9 tokens; a real violation is a whole
// request.
const relTol = 1e-9

// randomTimes is a non-decreasing list of n arrival times in ms, in one of
// three moods: exponential gaps, whole-millisecond gaps, or tight bursts
// separated by pauses; a fifth of the arrivals tie with the one before.
func randomTimes(rng *rand.Rand, n int) []float64 {
	ts := make([]float64, n)
	mean := 0.1 + rng.Float64()*20
	mode := rng.IntN(3)
	t := rng.Float64() * 10
	for i := range ts {
		switch {
		case i > 0 && rng.IntN(5) == 0: // a tie
		case mode == 0:
			t += rng.ExpFloat64() * mean
		case mode == 1:
			t += float64(rng.IntN(int(mean) + 2))
		case rng.IntN(12) == 0:
			t += rng.Float64() * 300
		default:
			t += rng.Float64() * mean / 10
		}
		ts[i] = t
	}
	return ts
}

func randomRate(rng *rand.Rand) float64 {
	if rng.IntN(2) == 0 {
		return float64(1 + rng.IntN(1000)) // whole rps, as people configure
	}
	return 0.5 + rng.Float64()*2000
}

type released struct {
	t, release float64
	client     int32
}

// offerAll replays times through the gate and returns the admitted
// requests; it also checks what every gate promises: releases at or after
// the arrival, in non-decreasing order.
func offerAll(t *testing.T, g limiter.Gate, ts []float64, clients []int32, srv *server.Server) []released {
	t.Helper()
	var out []released
	last := math.Inf(-1)
	for i, at := range ts {
		var c int32
		if clients != nil {
			c = clients[i]
		}
		r, ok := g.Offer(at, c)
		if !ok {
			continue
		}
		if r < at || r < last {
			t.Fatalf("arrival %d at %g released at %g (previous release %g)", i, at, r, last)
		}
		last = r
		if srv != nil {
			srv.Serve(r)
		}
		out = append(out, released{at, r, c})
	}
	return out
}

func newGate(t *testing.T, typ limiter.Type, p limiter.Params, weights []float64, shares string, srv limiter.Occupancy) limiter.Gate {
	t.Helper()
	spec := limiter.Spec{Type: typ}
	if shares != "" {
		spec.SetOption("shares", shares)
	}
	spec.Normalize()
	if weights == nil {
		weights = []float64{1}
	}
	g, err := limiter.New(&spec, p, weights, srv)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// maxInWindow is, by brute force, the largest number of the sorted times in
// any window [x, x+l) — the rolling maximum.
func maxInWindow(ts []float64, l float64) int {
	best := 0
	for i := range ts {
		n := 0
		for j := i; j < len(ts) && ts[j] < ts[i]+l; j++ {
			n++
		}
		best = max(best, n)
	}
	return best
}

// checkCurve asserts that the sorted times never exceed the arrival curve
// b + r*d: for every pair i <= j, the j-i+1 releases in the closed window
// [ts[i], ts[j]] of length d number at most b + rateRPS*d/1000.
func checkCurve(t *testing.T, run int, what string, ts []float64, rateRPS, b float64) {
	t.Helper()
	for i := range ts {
		for j := i; j < len(ts); j++ {
			d := ts[j] - ts[i]
			if n := float64(j - i + 1); n > b+rateRPS*d/1000+relTol {
				t.Fatalf("run %d: %s: %g releases in [%g, %g] (d = %g ms) exceed b + r*d = %g + %g*%g/1000 = %g",
					run, what, n, ts[i], ts[j], d, b, rateRPS, d, b+rateRPS*d/1000)
			}
		}
	}
}

func releaseTimes(rs []released) []float64 {
	ts := make([]float64, len(rs))
	for i, r := range rs {
		ts[i] = r.release
	}
	return ts
}

func TestTokenBucketStaysUnderItsArrivalCurve(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(1, uint64(run)))
		rate, burst := randomRate(rng), float64(1+rng.IntN(20))
		g := newGate(t, limiter.TypeTokenBucket, limiter.Params{limiter.ParamRate: rate, limiter.ParamBurst: burst}, nil, "", nil)
		rs := offerAll(t, g, randomTimes(rng, 50+rng.IntN(250)), nil, nil)
		for _, r := range rs {
			if r.release != r.t {
				t.Fatalf("run %d: a policer delayed a request from %g to %g", run, r.t, r.release)
			}
		}
		checkCurve(t, run, "token bucket", releaseTimes(rs), rate, burst)
	}
}

func TestLeakyBucketSpacesReleases(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(2, uint64(run)))
		rate, queue := randomRate(rng), float64(1+rng.IntN(20))
		interval := 1000 / rate
		g := newGate(t, limiter.TypeLeakyBucket, limiter.Params{limiter.ParamRate: rate, limiter.ParamQueue: queue}, nil, "", nil)
		rs := offerAll(t, g, randomTimes(rng, 50+rng.IntN(250)), nil, nil)
		for i, r := range rs {
			// Waiting behind at most queue-1 pending releases.
			if wait := r.release - r.t; wait > (queue-1)*interval*(1+relTol)+relTol {
				t.Fatalf("run %d: waited %g ms, more than (queue-1)*interval = %g", run, wait, (queue-1)*interval)
			}
			if i == 0 {
				continue
			}
			// next = previous + interval is one float addition, so the gap
			// may fall short of the interval by rounding only.
			if gap := r.release - rs[i-1].release; gap < interval*(1-relTol) {
				t.Fatalf("run %d: releases %g and %g are %g ms apart, less than 1000/rate = %g",
					run, rs[i-1].release, r.release, gap, interval)
			}
		}
		checkCurve(t, run, "leaky bucket", releaseTimes(rs), rate, 1)
	}
}

// inWindow reports whether a lies in (t - l, t], that is t - a < l, in
// exact (big.Float) arithmetic: a > t - l rounds its subtraction.
func inWindow(a, t, l float64) bool {
	if g := t - a; math.Abs(g-l) > 1e-6*(math.Abs(t)+math.Abs(a)+l) {
		return g < l // far from the boundary: rounding cannot matter
	}
	d := new(big.Float).SetPrec(2200).SetFloat64(t)
	d.Sub(d, new(big.Float).SetPrec(2200).SetFloat64(a))
	return d.Cmp(new(big.Float).SetFloat64(l)) < 0
}

// TestSlidingWindowLogIsExact compares every decision with the definition
// (admit when fewer than limit admissions lie in (t - window, t]) computed
// exactly over the whole list of admissions, then checks that no window of
// length window holds more than limit.
func TestSlidingWindowLogIsExact(t *testing.T) {
	t.Parallel()
	// 182.1 - 33.3 rounds down to 148.8, but 148.8 and 182.1 are less than
	// 33.3 apart: the second request finds the first still in its window.
	g := limiter.NewSlidingWindowLog(1, 33.3)
	if _, ok := g.Offer(148.8, 0); !ok {
		t.Fatal("first request refused")
	}
	if _, ok := g.Offer(182.1, 0); ok {
		t.Error("182.1 admitted with 148.8 inside (182.1 - 33.3, 182.1]: two in one window of 33.3 ms, limit 1")
	}

	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(3, uint64(run)))
		limit := 1 + rng.IntN(10)
		if run%4 == 0 { // past the log's initial ring of 64
			limit = 60 + rng.IntN(200)
		}
		window := []float64{10, 100, 33.3, 1000, 1 + rng.Float64()*500}[rng.IntN(5)]
		decimal := run%3 == 0 // times rounded to 0.1 ms, as traces have them
		g := newGate(t, limiter.TypeSlidingLog, limiter.Params{limiter.ParamLimit: float64(limit), limiter.ParamWindow: window}, nil, "", nil)
		var admitted []float64
		for _, at := range randomTimes(rng, 50+rng.IntN(250)) {
			if decimal {
				at = math.Round(at*10) / 10
			}
			n := 0
			for _, a := range admitted {
				if inWindow(a, at, window) {
					n++
				}
			}
			want := n < limit
			_, ok := g.Offer(at, 0)
			if ok != want {
				t.Fatalf("run %d: at %g with %d admissions in (t-%g, t]: ok = %v, want %v", run, at, n, window, ok, want)
			}
			if ok {
				admitted = append(admitted, at)
			}
		}
		// Any window (x - L, x] holding k admissions can slide right until
		// x is an admission, so checking windows that end at an admission
		// covers them all.
		for j, x := range admitted {
			n := 0
			for _, a := range admitted[:j+1] {
				if inWindow(a, x, window) {
					n++
				}
			}
			if n > limit {
				t.Fatalf("run %d: %d admissions in (%g, %g], limit %d", run, n, x-window, x, limit)
			}
		}
	}
}

func TestFixedWindowRollingMaxAtMostTwiceTheLimit(t *testing.T) {
	t.Parallel()
	sawEdge := false
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(4, uint64(run)))
		limit := 1 + rng.IntN(10)
		window := []float64{10, 100, 1000, 1 + float64(rng.IntN(300))}[rng.IntN(4)]
		g := newGate(t, limiter.TypeFixedWindow, limiter.Params{limiter.ParamLimit: float64(limit), limiter.ParamWindow: window}, nil, "", nil)
		count := map[int64]int{}
		var admitted []float64
		for _, at := range randomTimes(rng, 50+rng.IntN(250)) {
			k := exactWindow(at, window)
			_, ok := g.Offer(at, 0)
			if want := count[k] < limit; ok != want {
				t.Fatalf("run %d: at %g, window %d holds %d of %d: ok = %v, want %v", run, at, k, count[k], limit, ok, want)
			}
			if ok {
				count[k]++
				admitted = append(admitted, at)
			}
		}
		m := maxInWindow(admitted, window)
		if m > 2*limit {
			t.Fatalf("run %d: %d releases in one window of %g ms, more than 2*limit = %d", run, m, window, 2*limit)
		}
		sawEdge = sawEdge || m > limit
	}
	if !sawEdge {
		t.Error("no random workload ever exceeded limit in a rolling window: the property was never exercised")
	}
}

func TestSlidingWindowCounterBounds(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(5, uint64(run)))
		limit := 1 + rng.IntN(10)
		window := []float64{10, 100, 1000, 1 + float64(rng.IntN(300))}[rng.IntN(4)]
		g := newGate(t, limiter.TypeSlidingCounter, limiter.Params{limiter.ParamLimit: float64(limit), limiter.ParamWindow: window}, nil, "", nil)
		count := map[int64]int{}
		var admitted []float64
		for _, at := range randomTimes(rng, 50+rng.IntN(250)) {
			if _, ok := g.Offer(at, 0); ok {
				k := exactWindow(at, window)
				count[k]++
				if count[k] > limit {
					t.Fatalf("run %d: %d admissions in aligned window %d, limit %d", run, count[k], k, limit)
				}
				admitted = append(admitted, at)
			}
		}
		if m := maxInWindow(admitted, window); m > 2*limit {
			t.Fatalf("run %d: %d releases in one window of %g ms, more than 2*limit = %d", run, m, window, 2*limit)
		}
	}
}

// TestAdmissionNeverExceedsItsLimit checks every decision of an admission
// gate in front of one worker against the occupancy computed from scratch
// (finish times of the admitted requests), and with c workers that the
// server never holds more than limit.
func TestAdmissionNeverExceedsItsLimit(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(6, uint64(run)))
		limit := 1 + rng.IntN(8)
		workers := 1
		if run%2 == 1 {
			workers = 1 + rng.IntN(4)
		}
		spec := server.Spec{Workers: workers, ServiceMS: 0.5 + rng.Float64()*20}
		srv := server.New(spec)
		g := newGate(t, limiter.TypeAdmission, limiter.Params{limiter.ParamLimit: float64(limit)}, nil, "", srv)
		var finishes []float64
		busyUntil := 0.0
		for _, at := range randomTimes(rng, 50+rng.IntN(250)) {
			inSystem := 0
			for _, f := range finishes {
				if f > at {
					inSystem++
				}
			}
			_, ok := g.Offer(at, 0)
			if workers == 1 && ok != (inSystem < limit) {
				t.Fatalf("run %d: at %g with %d in the system: ok = %v, limit %d", run, at, inSystem, ok, limit)
			}
			if !ok {
				continue
			}
			srv.Serve(at)
			if srv.Len() > limit {
				t.Fatalf("run %d: %d in the system after admitting at %g, limit %d", run, srv.Len(), at, limit)
			}
			busyUntil = math.Max(busyUntil, at) + spec.ServiceMS
			finishes = append(finishes, busyUntil)
		}
	}
}

// TestPerClientBucketsStayUnderTheirShares checks each client's releases
// against its own curve b_i + r_i*d, with b_i and r_i the client's share of
// burst and rate, and the whole output against b + r*d.
func TestPerClientBucketsStayUnderTheirShares(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(7, uint64(run)))
		n := 1 + rng.IntN(5)
		weights := make([]float64, n)
		total := 0.0
		for i := range weights {
			weights[i] = float64(1 + rng.IntN(4))
			total += weights[i]
		}
		shares := limiter.SharesEqual
		if run%2 == 1 {
			shares = limiter.SharesWeighted
		}
		rate, burst := randomRate(rng), float64(n*(1+rng.IntN(10)))
		g := newGate(t, limiter.TypePerClient, limiter.Params{limiter.ParamRate: rate, limiter.ParamBurst: burst}, weights, shares, nil)
		ts := randomTimes(rng, 50+rng.IntN(250))
		clients := make([]int32, len(ts))
		for i := range clients {
			clients[i] = int32(rng.IntN(n))
		}
		rs := offerAll(t, g, ts, clients, nil)
		checkCurve(t, run, "all clients", releaseTimes(rs), rate, burst)
		for c := range n {
			share := 1 / float64(n)
			if shares == limiter.SharesWeighted {
				share = weights[c] / total
			}
			var mine []float64
			for _, r := range rs {
				if r.client == int32(c) {
					mine = append(mine, r.release)
				}
			}
			checkCurve(t, run, "client share", mine, rate*share, burst*share)
		}
	}
}
