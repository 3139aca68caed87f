package calculus_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/calculus"
)

// The dual bucket with a peak burst p: At is min(b + r*d, p + M*d), and
// the deviations against a server equal their sampled suprema, whichever
// line has the smaller rate.
func TestDualWithPeakBurst(t *testing.T) {
	c := calculus.Dual(0.1, 20, 1, 1) // 100 req/s burst 20, peak 1000 req/s
	for _, tc := range []struct{ d, want float64 }{
		{0, 1}, {1, 2}, {5, 6}, {20.0 / 0.9 * 0.5, 1 + 20.0/0.9*0.5}, {1000, 120},
	} {
		if got := c.At(tc.d); !near(got, tc.want) {
			t.Errorf("At(%g) = %g, want %g", tc.d, got, tc.want)
		}
	}
	if got := c.Burst(); got != 1 {
		t.Errorf("burst %g, want 1 (the peak bucket's)", got)
	}
	if e := c.Envelope(); e.RatePerMS != 0.1 || e.BurstReq != 20 {
		t.Errorf("envelope %v, want 20 + 0.1*d", e)
	}
	// A peak below the sustained rate: the peak line is the long-run one.
	if e := calculus.Dual(0.5, 3, 0.2, 4).Envelope(); e.RatePerMS != 0.2 || e.BurstReq != 4 {
		t.Errorf("envelope %v, want 4 + 0.2*d", e)
	}

	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 300; i++ {
		b := calculus.Workers(1+rng.IntN(4), 1+rng.Float64()*20)
		r := rng.Float64() * b.RatePerMS
		m := r + rng.Float64()*2
		if i%3 == 0 { // the peak line has the smaller rate
			m, r = r, r+rng.Float64()*2
		}
		a := calculus.Dual(r, 1+float64(rng.IntN(50)), m, 1+float64(rng.IntN(5)))
		if !calculus.Stable(a, b) {
			continue
		}
		horizon := math.Min(4*(b.LatencyMS+a.BurstReq/math.Max(1e-9, b.RatePerMS-a.Rate())), 5000)
		v, h := bruteDeviations(a, b, horizon)
		gv, gh := calculus.Backlog(a, b), calculus.Delay(a, b)
		if v > gv+1e-9 || gv-v > 1e-2*math.Max(1, gv) {
			t.Errorf("%v vs %+v: backlog %g, sampled %g", a, b, gv, v)
		}
		if h > gh+1e-9 || gh-h > 1e-2*math.Max(1, gh) {
			t.Errorf("%v vs %+v: delay %g, sampled %g", a, b, gh, h)
		}
	}
}
