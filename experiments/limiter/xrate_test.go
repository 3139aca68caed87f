package limiter_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// The token bucket against golang.org/x/time/rate, Limiter.AllowN(t, 1).
//
// Both model the same bucket — starts full, refills continuously at r
// tokens/s up to b, a request takes one token or is refused — but their
// arithmetic differs:
//
//   - ratelab refills tokens = min(b, tokens + dt_ms * (r/1000)) on every
//     arrival, rejected ones included, in float64 milliseconds;
//   - x/time/rate keeps time.Time (whole nanoseconds), computes
//     dt.Seconds() * r, and updates its state only on success; it refuses
//     when the deficit 1 - tokens needs a wait of at least 1 ns (a shorter
//     wait truncates to 0, so it admits a deficit under r*1e-9 tokens).
//
// So where every quantity is exact in binary the decisions agree exactly;
// elsewhere they can differ only when the bucket holds 1 token to within
// rounding.

// xrateAt is t ms after an arbitrary epoch, rounded to the nanosecond.
var xrateEpoch = time.Unix(1_700_000_000, 0)

func xrateAt(tMS float64) time.Time {
	return xrateEpoch.Add(time.Duration(math.Round(tMS * 1e6)))
}

// TestTokenBucketAgreesWithXTimeRateWhenExact uses arrival times on a grid
// of 1/64 s (15.625 ms, a whole number of ns) and rates whose tokens per ms
// and per s are dyadic (31.25 to 2000 rps), so both implementations compute
// every token count exactly: every decision must agree.
func TestTokenBucketAgreesWithXTimeRateWhenExact(t *testing.T) {
	t.Parallel()
	rates := []float64{31.25, 62.5, 125, 250, 500, 1000, 2000}
	decisions, rejects := 0, 0
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(10, uint64(run)))
		r, b := rates[rng.IntN(len(rates))], 1+rng.IntN(10)
		ours := limiter.NewTokenBucket(r, float64(b))
		theirs := rate.NewLimiter(rate.Limit(r), b)
		tick := 0
		for i := range 50 + rng.IntN(250) {
			if rng.IntN(3) != 0 { // a third of the arrivals tie
				tick += rng.IntN(8)
			}
			at := float64(tick) * 15.625
			_, ok := ours.Offer(at, 0)
			want := theirs.AllowN(xrateAt(at), 1)
			if ok != want {
				t.Fatalf("run %d (r=%g b=%d), arrival %d at %g ms: ratelab ok=%v, x/time/rate ok=%v (ratelab tokens %g)",
					run, r, b, i, at, ok, want, ours.Tokens())
			}
			decisions++
			if !ok {
				rejects++
			}
		}
	}
	if rejects == 0 || rejects == decisions {
		t.Fatalf("%d rejects of %d decisions: the comparison never exercised both answers", rejects, decisions)
	}
}

// TestTokenBucketDisagreesWithXTimeRateOnlyAtOneToken runs random float
// times and rates. At the first decision where the two differ, ratelab's
// bucket (before taking a token) must hold 1 token to within 1e-6: the
// float and nanosecond rounding described above, never a different model.
// After a disagreement the states differ by a token, so the list stops
// there.
func TestTokenBucketDisagreesWithXTimeRateOnlyAtOneToken(t *testing.T) {
	t.Parallel()
	lists, disagreed, decisions := 0, 0, 0
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(11, uint64(run)))
		r, b := randomRate(rng), 1+rng.IntN(20)
		ours := limiter.NewTokenBucket(r, float64(b))
		theirs := rate.NewLimiter(rate.Limit(r), b)
		lists++
		for _, at := range randomTimes(rng, 50+rng.IntN(250)) {
			_, ok := ours.Offer(at, 0)
			want := theirs.AllowN(xrateAt(at), 1)
			decisions++
			if ok == want {
				continue
			}
			before := ours.Tokens()
			if ok {
				before++
			}
			if math.Abs(before-1) > 1e-6 {
				t.Fatalf("run %d (r=%g b=%d) at %g ms: ratelab ok=%v with %g tokens, x/time/rate ok=%v: not a rounding difference",
					run, r, b, at, ok, before, want)
			}
			disagreed++
			break
		}
	}
	t.Logf("%d of %d random lists (%d decisions) met a one-token rounding disagreement", disagreed, lists, decisions)
}

// Benchmark (b): one token-bucket decision beside x/time/rate's AllowN on
// the same arrival times (every 0.37 ms, rate 1000 rps, burst 20: about a
// third of the requests are refused). Target: ratelab at least 4× cheaper.

func BenchmarkTokenBucketOffer(b *testing.B) {
	g := limiter.NewTokenBucket(1000, 20)
	admitted := 0
	for i := 0; b.Loop(); i++ {
		if _, ok := g.Offer(float64(i)*0.37, 0); ok {
			admitted++
		}
	}
	b.ReportMetric(float64(admitted)/float64(b.N), "admit/op")
}

// BenchmarkTokenBucketGate is the same decision through the Gate interface,
// as the engine's loop makes it.
func BenchmarkTokenBucketGate(b *testing.B) {
	var g limiter.Gate = limiter.NewTokenBucket(1000, 20)
	admitted := 0
	for i := 0; b.Loop(); i++ {
		if _, ok := g.Offer(float64(i)*0.37, 0); ok {
			admitted++
		}
	}
	b.ReportMetric(float64(admitted)/float64(b.N), "admit/op")
}

func BenchmarkXTimeRateAllowN(b *testing.B) {
	l := rate.NewLimiter(1000, 20)
	step := 370 * time.Microsecond
	admitted := 0
	for i := 0; b.Loop(); i++ {
		if l.AllowN(xrateEpoch.Add(time.Duration(i)*step), 1) {
			admitted++
		}
	}
	b.ReportMetric(float64(admitted)/float64(b.N), "admit/op")
}
