package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestHistogramRun: delays recorded through Runs (each ended after a
// while, as the forward pass ends its at each batch of arrivals), half of
// them at the bucket of the delay before, make the histogram Record makes:
// every bucket's count, every percentile, the count and the maximum,
// after a Reset too.
func TestHistogramRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var one, two Histogram
	for round := range 3 {
		one.Reset()
		two.Reset()
		var r Run
		ms := 0.0
		for i := range 5000 {
			if rng.IntN(2) == 0 { // else the delay before, again
				ms = []float64{-3, 0.49999999999999994, 0.5, 7.5, 4095.5, 70_000, math.NaN(), rng.ExpFloat64() * 50}[rng.IntN(8)]
			}
			one.Record(ms)
			r = r.Add(&two, Bucket(ms))
			if i%(100+round) == 0 {
				r.End(&two)
				r = Run{}
			}
		}
		r.End(&two)
		if one.low != two.low {
			t.Fatalf("round %d: the counts below %d ms differ", round, lowDelaysMS)
		}
		if (one.high == nil) != (two.high == nil) || one.high != nil && *one.high != *two.high {
			t.Fatalf("round %d: the counts from %d ms differ", round, lowDelaysMS)
		}
		for _, p := range []float64{1, 50, 90, 99, 99.9, 100} {
			if one.Quantile(p) != two.Quantile(p) {
				t.Fatalf("round %d: p%g %d, recorded by runs %d", round, p, one.Quantile(p), two.Quantile(p))
			}
		}
		if one.Count() != two.Count() || one.Max() != two.Max() {
			t.Fatalf("round %d: count %d max %d, by runs %d and %d", round, one.Count(), one.Max(), two.Count(), two.Max())
		}
	}
}
