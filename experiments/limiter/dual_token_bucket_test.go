package limiter_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
)

func dualParams(rate, burst, peak, peakBurst float64) limiter.Params {
	return limiter.Params{limiter.ParamRate: rate, limiter.ParamBurst: burst, limiter.ParamPeakRate: peak, limiter.ParamPeakBurst: peakBurst}
}

func TestDualTokenBucketTable(t *testing.T) {
	t.Parallel()
	dual := limiter.Spec{Type: limiter.TypeDualTokenBucket}
	for _, c := range []gateCase{
		{
			// Sustained 10/s burst 3, peak 100/s burst 1: the burst of 3
			// comes out 10 ms apart, not at once; then 10/s.
			name: "peak spreads the burst", spec: dual,
			params: dualParams(10, 3, 100, 1),
			events: []event{admit(0), reject(0), reject(5), admit(10), admit(20), reject(30), reject(99), admit(130), reject(200)},
		},
		{
			// A refused request takes no token from either bucket: the
			// peak bucket refuses at 0 and 5 ms and the sustained one
			// keeps its third token for 10 ms; at 20 ms the sustained
			// bucket refuses and the peak keeps its token.
			name: "refusals are free", spec: dual,
			params: dualParams(1, 3, 100, 2),
			events: []event{admit(0), admit(0), reject(0), reject(5), admit(10), reject(10), reject(20), admit(1010)},
		},
	} {
		t.Run(c.name, c.run)
	}
}

// TestDualTokenBucketWithAWidePeakIsATokenBucket: a peak bucket as large
// as the sustained one and refilling at 1e6/s never refuses what the
// sustained bucket passes, and the sustained bucket computes exactly as
// the token bucket: every decision equal.
func TestDualTokenBucketWithAWidePeakIsATokenBucket(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(60, uint64(run)))
		r, b := randomRate(rng), float64(1+rng.IntN(20))
		dual := limiter.NewDualTokenBucket(r, b, limiter.MaxRateRPS, b)
		tb := limiter.NewTokenBucket(r, b)
		for i, at := range randomTimes(rng, 50+rng.IntN(250)) {
			_, ok := dual.Offer(at, 0)
			_, want := tb.Offer(at, 0)
			if ok != want {
				t.Fatalf("run %d (rate %g burst %g), arrival %d at %g: dual ok=%v, token bucket ok=%v", run, r, b, i, at, ok, want)
			}
		}
	}
}

// TestDualTokenBucketStaysUnderBothCurves: the releases never exceed
// burst + rate*d nor peak_burst + peak*d in any closed window, so never
// the kind's curve min(...) (calculus.Dual), checked pair by pair.
func TestDualTokenBucketStaysUnderBothCurves(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(61, uint64(run)))
		r, b := randomRate(rng), float64(1+rng.IntN(20))
		peak, pb := r*(1+rng.Float64()*10), float64(1+rng.IntN(3))
		if run%5 == 0 { // a peak below the sustained rate
			peak = r * rng.Float64()
		}
		p := dualParams(r, b, peak, pb)
		g := newGate(t, limiter.TypeDualTokenBucket, p, nil, "", nil)
		rs := offerAll(t, g, randomTimes(rng, 50+rng.IntN(250)), nil, nil)
		ts := releaseTimes(rs)
		checkCurve(t, run, "dual: sustained", ts, r, b)
		checkCurve(t, run, "dual: peak", ts, peak, pb)
		curve, ok := limiter.ArrivalCurve(&limiter.Spec{Type: limiter.TypeDualTokenBucket}, p, 1)
		if !ok || curve.Kind != calculus.KindDual {
			t.Fatalf("curve %v", curve)
		}
		for i := range ts {
			for j := i; j < len(ts); j++ {
				if n, a := float64(j-i+1), curve.At(ts[j]-ts[i]); n > a+relTol*max(1, a) {
					t.Fatalf("run %d: %g releases in [%g, %g], above %v = %g", run, n, ts[i], ts[j], curve, a)
				}
			}
		}
	}
}
