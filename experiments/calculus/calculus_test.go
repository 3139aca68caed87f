package calculus_test

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/server"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestTokenBucketBounds(t *testing.T) {
	// The seed lab's case: (100 rps, burst 20) into one 10 ms worker.
	a := calculus.Affine(calculus.PerMS(100), 20)
	b := calculus.Workers(1, 10)
	if got := calculus.Delay(a, b); !near(got, 210) {
		t.Errorf("delay bound %g, want 210 = T + b/R = 10 + 20/0.1", got)
	}
	if got := calculus.Backlog(a, b); !near(got, 21) {
		t.Errorf("backlog bound %g, want 21 = b + r*T", got)
	}
	if got := calculus.Output(a, b); !near(got.BurstReq, 21) || got.RatePerMS != a.RatePerMS {
		t.Errorf("output curve %v, want 21 + 0.1*d", got)
	}
	if got := calculus.Delay(calculus.Affine(0.2, 1), b); !math.IsInf(got, 1) {
		t.Errorf("r > R: delay %g, want +Inf", got)
	}
	if got := calculus.Backlog(calculus.Affine(0.2, 1), b); !math.IsInf(got, 1) {
		t.Errorf("r > R: backlog %g, want +Inf", got)
	}
}

// bruteDeviations samples the deviations on a fine grid of d, taking the
// right limit of the curve at each sample (At is right-continuous).
func bruteDeviations(a calculus.Curve, b calculus.RateLatency, horizon float64) (v, h float64) {
	const n = 200000
	for i := 0; i <= n; i++ {
		d := horizon * float64(i) / n
		v = math.Max(v, a.At(d)-b.At(d))
		h = math.Max(h, b.LatencyMS+a.At(d)/b.RatePerMS-d)
	}
	return v, h
}

func TestDeviationsMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 200; i++ {
		b := calculus.Workers(1+rng.IntN(4), 1+rng.Float64()*20)
		var a calculus.Curve
		switch i % 4 {
		case 0:
			a = calculus.Affine(rng.Float64()*b.RatePerMS, 1+float64(rng.IntN(50)))
		case 1:
			r := rng.Float64() * b.RatePerMS
			a = calculus.Dual(r, 1+float64(rng.IntN(50)), r+rng.Float64()*2, 1)
		case 2:
			l := 1 + rng.Float64()*50
			a = calculus.SlidingLog(float64(1+rng.IntN(int(math.Max(1, b.RatePerMS*l)))), l)
		case 3:
			l := 1 + rng.Float64()*50
			a = calculus.FixedWindow(float64(1+rng.IntN(int(math.Max(1, b.RatePerMS*l)))), l)
		}
		if !calculus.Stable(a, b) {
			continue
		}
		horizon := 4 * (b.LatencyMS + a.PeriodMS + a.BurstReq/math.Max(1e-9, b.RatePerMS-a.Rate()))
		horizon = math.Min(horizon, 5000)
		v, h := bruteDeviations(a, b, horizon)
		// The sampled supremum can only be below the exact one, and close.
		gv, gh := calculus.Backlog(a, b), calculus.Delay(a, b)
		if v > gv+1e-9 || gv-v > 1e-2*math.Max(1, gv) {
			t.Errorf("%v vs %+v: backlog %g, sampled %g", a, b, gv, v)
		}
		if h > gh+1e-9 || gh-h > 1e-2*math.Max(1, gh) {
			t.Errorf("%v vs %+v: delay %g, sampled %g", a, b, gh, h)
		}
	}
}

func TestConvolveAndChain(t *testing.T) {
	b1, b2 := calculus.RateLatency{RatePerMS: 0.5, LatencyMS: 4}, calculus.RateLatency{RatePerMS: 0.2, LatencyMS: 10}
	c := calculus.Convolve(b1, b2)
	if c.RatePerMS != 0.2 || c.LatencyMS != 14 {
		t.Fatalf("convolution %+v, want R 0.2, T 14", c)
	}
	// Check against the definition inf_s b1(s) + b2(t-s) numerically.
	for _, tt := range []float64{0, 3, 10, 14, 15, 30, 100} {
		best := math.Inf(1)
		for i := 0; i <= 10000; i++ {
			s := tt * float64(i) / 10000
			best = math.Min(best, b1.At(s)+b2.At(tt-s))
		}
		if !near(best, c.At(tt)) && math.Abs(best-c.At(tt)) > 1e-3 {
			t.Errorf("(b1 ⊗ b2)(%g) = %g by definition, %g by formula", tt, best, c.At(tt))
		}
	}
	a := calculus.Affine(0.1, 20)
	ch := calculus.ChainBounds(a, []calculus.Hop{b1, b2})
	if !near(ch.ConcatenatedMS, 14+20/0.2) {
		t.Errorf("concatenated %g, want 114", ch.ConcatenatedMS)
	}
	// Per hop: 4 + 20/0.5 = 44, then burst 20 + 0.1*4 = 20.4: 10 + 102 = 112.
	if !near(ch.PerHopSumMS, 44+112) {
		t.Errorf("per-hop sum %g, want 156", ch.PerHopSumMS)
	}
}

func TestCalculator(t *testing.T) {
	b := calculus.Workers(1, 1) // 1000 rps, 1 ms
	if got := calculus.MaxBurst(b, 51); !near(got, 50) {
		t.Errorf("max burst %g, want 50", got)
	}
	if got := calculus.DelayBound(b, 50); !near(got, 51) {
		t.Errorf("delay bound %g, want 51", got)
	}
	if got := calculus.MaxBurst(b, 0.5); got != 0 {
		t.Errorf("budget below latency: %g, want 0", got)
	}
}

func bruteEmpirical(ts []float64, d float64) int {
	best := 0
	for _, x := range ts { // windows (x-d, x] ending at a point are enough
		n := 0
		for _, y := range ts {
			if y > x-d && y <= x {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

func TestEmpirical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		ts := make([]float64, rng.IntN(200))
		for i := range ts {
			ts[i] = math.Floor(rng.Float64() * 300) // ties on purpose
		}
		sort.Float64s(ts)
		grid := calculus.Grid(300)
		got := calculus.Empirical(ts, grid)
		for g, d := range grid {
			if want := bruteEmpirical(ts, d); got[g] != want {
				t.Fatalf("trial %d d=%g: %d, want %d", trial, d, got[g], want)
			}
		}
	}
	// A token-bucket-like output stays under its curve.
	ts := []float64{0, 0, 0, 10, 20, 30}
	if got := calculus.Empirical(ts, []float64{1, 10, 11}); got[0] != 3 || got[1] != 3 || got[2] != 4 {
		t.Errorf("empirical %v, want [3 3 4] (half-open windows: 0 and 10 never share one of length 10)", got)
	}
}

func TestGrid(t *testing.T) {
	g := calculus.Grid(5000)
	if g[0] != 1 || g[len(g)-1] != 5000 || len(g) != 12 {
		t.Errorf("grid %v", g)
	}
	if g := calculus.Grid(1e9); len(g) != 16 || g[len(g)-1] != calculus.GridMaxMS {
		t.Errorf("long runs: grid %v, want 16 lengths up to a minute", g)
	}
	for i := 1; i < len(g); i++ {
		if g[i] <= g[i-1] {
			t.Fatalf("grid not increasing: %v", g)
		}
	}
}

// TestWorkersServiceCurve checks the claim of Workers on the engine's own
// server: for c FIFO workers of service S, R*(t) >= inf_s R(s) + beta(t-s)
// with R = c/S and T = S, at every instant just before a finish (where R*
// is smallest), on random bursty releases.
func TestWorkersServiceCurve(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for trial := 0; trial < 300; trial++ {
		c := 1 + rng.IntN(4)
		svc := float64(1 + rng.IntN(20))
		srv := server.New(server.Spec{Workers: c, ServiceMS: svc})
		beta := calculus.Workers(c, svc)
		n := 1 + rng.IntN(120)
		rel := make([]float64, n)
		at := 0.0
		for i := range rel {
			if rng.IntN(3) == 0 {
				at += rng.Float64() * 3 * svc
			}
			rel[i] = at
		}
		fin := make([]float64, n)
		for i, r := range rel {
			_, fin[i] = srv.Serve(r)
			if i > 0 && fin[i] < fin[i-1] {
				t.Fatalf("finishes out of order: %g after %g", fin[i], fin[i-1])
			}
		}
		for k := range fin {
			tt := fin[k] - 1e-9 // R*(tt) = k: requests 0..k-1 finished
			lower := math.Inf(1)
			for i := 0; i <= n; i++ { // s just before rel[i], or after all
				s, rs := tt, float64(n)
				if i < n {
					if rel[i] > tt {
						break
					}
					s, rs = rel[i], float64(i)
					if i > 0 && rel[i-1] == rel[i] {
						continue // R(s-) counts only times before rel[i]
					}
				}
				lower = math.Min(lower, rs+beta.At(tt-s))
			}
			lower = math.Min(lower, float64(sort.SearchFloat64s(rel, tt+1e-12))) // s = t
			if float64(k) < lower-1e-6 {
				t.Fatalf("c=%d S=%g: R*(%g) = %d < %g", c, svc, tt, k, lower)
			}
		}
	}
}
