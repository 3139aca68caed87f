package calculus_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/calculus"
)

// TestFlowBoundsWorkedExample: one 10 ms worker (R = 0.1/ms, T = 10 ms),
// the flow 2 + 20 rps, the others 8 + 50 rps. FIFO: theta* = T + (b_i +
// b')/R = 10 + 10/0.1 = 110 ms, the bound 110 ms; blind multiplexing:
// (R*T + b' + b_i)/(R - r') = (1 + 8 + 2)/0.05 = 220 ms, the FIFO family's
// member at theta = 0; at theta = 50 ms, t0 = (1 + 8 - 2.5)/0.05 = 130 and
// the bound 130 + 2/0.05 = 170 ms.
func TestFlowBoundsWorkedExample(t *testing.T) {
	t.Parallel()
	beta := calculus.Workers(1, 10)
	own, cross := calculus.Affine(0.02, 2), calculus.Affine(0.05, 8)
	if d, theta := calculus.FIFODelay(own, cross, beta); math.Abs(d-110) > 1e-9 || math.Abs(theta-110) > 1e-9 {
		t.Errorf("FIFO: %g ms at theta %g, want 110 at 110", d, theta)
	}
	if d := calculus.BlindDelay(own, cross, beta); math.Abs(d-220) > 1e-9 {
		t.Errorf("blind: %g ms, want 220", d)
	}
	for _, c := range []struct{ theta, want float64 }{{0, 220}, {50, 170}, {110, 110}, {200, 200}} {
		if d := calculus.ResidualDelay(own, cross, beta, c.theta); math.Abs(d-c.want) > 1e-9 {
			t.Errorf("theta %g: %g ms, want %g", c.theta, d, c.want)
		}
	}
	// The flow's rate past what the others leave: no bound.
	if d, _ := calculus.FIFODelay(calculus.Affine(0.06, 2), cross, beta); !math.IsInf(d, 1) {
		t.Errorf("r_i + r' > R: FIFO %g, want +Inf", d)
	}
	if d := calculus.BlindDelay(calculus.Affine(0.06, 2), cross, beta); !math.IsInf(d, 1) {
		t.Errorf("r_i + r' > R: blind %g, want +Inf", d)
	}
}

// TestFIFODelayIsTheFamilysMinimum: over random flows the theta FIFODelay
// reports attains the smallest ResidualDelay of a grid of thetas, equals
// the aggregate's bound T + (b_i + b')/R, and blind multiplexing is
// never below it.
func TestFIFODelayIsTheFamilysMinimum(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 5))
	for run := range 2000 {
		beta := calculus.Workers(1+rng.IntN(8), 1+rng.Float64()*50)
		r := beta.RatePerMS * rng.Float64()
		share := rng.Float64()
		own, cross := calculus.Affine(r*share, rng.Float64()*50), calculus.Affine(r*(1-share), rng.Float64()*200)
		d, theta := calculus.FIFODelay(own, cross, beta)
		agg := calculus.Delay(calculus.Affine(r, own.BurstReq+cross.BurstReq), beta)
		if math.Abs(d-agg) > 1e-9*agg || d != calculus.ResidualDelay(own, cross, beta, theta) {
			t.Fatalf("run %d: FIFO %g at theta %g, aggregate %g", run, d, theta, agg)
		}
		for k := range 200 {
			th := theta * 2 * float64(k) / 199
			if rd := calculus.ResidualDelay(own, cross, beta, th); rd < d*(1-1e-12) {
				t.Fatalf("run %d: theta %g gives %g below the minimum %g at %g", run, th, rd, d, theta)
			}
		}
		if bl := calculus.BlindDelay(own, cross, beta); bl < d*(1-1e-12) || math.Abs(bl-calculus.ResidualDelay(own, cross, beta, 0)) > 1e-9*bl {
			t.Fatalf("run %d: blind %g, FIFO %g, theta 0 %g", run, bl, d, calculus.ResidualDelay(own, cross, beta, 0))
		}
	}
}
