package metrics_test

import (
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/metrics"
)

// hdrBucketTop is HdrHistogram's own arithmetic for 3 significant digits
// (subBucketCount 2048, unit 1): bucketIndex = max(0, floor(log2(v |
// 2047)) - 10); the value's sub-bucket is v >> bucketIndex; the bucket's
// highest equivalent value is its lowest plus its width minus 1.
func hdrBucketTop(v int) int {
	bucket := max(0, 63-bits.LeadingZeros64(uint64(v|2047))-10)
	lowest := (v >> bucket) << bucket
	return lowest + 1<<bucket - 1
}

func TestHdrTopEdges(t *testing.T) {
	for _, c := range []struct{ v, want int }{
		{0, 0}, {1, 1}, {2047, 2047}, {2048, 2049}, {2049, 2049}, {2050, 2051},
		{4095, 4095}, {4096, 4099}, {4097, 4099}, {8191, 8191}, {8192, 8199},
		{9910, 9911}, // the seed lab's no-control p99 at 300 rps
		{60000, 60031},
	} {
		if got := metrics.HdrTop(c.v); got != c.want {
			t.Errorf("HdrTop(%d) = %d, want %d", c.v, got, c.want)
		}
	}
	for v := 0; v <= metrics.MaxDelayMS; v++ {
		if got, want := metrics.HdrTop(v), hdrBucketTop(v); got != want {
			t.Fatalf("HdrTop(%d) = %d, HdrHistogram's bucket top %d", v, got, want)
		}
	}
}

func TestRoundHalfUpExact(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{0.49999999999999994, 0}, // floor(x + 0.5) gives 1
		{0.5, 1}, {1.5, 2}, {2.5, 3}, {-0.5, 0}, {-1.5, -1}, {-0.5000000000000001, -1},
		{1e300, 1e300}, {4503599627370495.5, 4503599627370496}, {0, 0},
	} {
		if got := metrics.RoundHalfUp(c.x); got != c.want {
			t.Errorf("RoundHalfUp(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	half := big.NewFloat(0.5)
	for range 200_000 {
		x := (r.Float64() - 0.3) * math.Pow(2, float64(r.IntN(60)-5))
		if r.IntN(4) == 0 {
			x = math.Trunc(x) + 0.5 // ties
		}
		// Exact: floor(x + 1/2) in big arithmetic.
		s := new(big.Float).SetPrec(200).SetFloat64(x)
		s.Add(s, half)
		i, acc := s.Int(nil) // truncates toward zero
		if s.Sign() < 0 && acc != big.Exact {
			i.Sub(i, big.NewInt(1))
		}
		want, _ := new(big.Float).SetInt(i).Float64()
		if got := metrics.RoundHalfUp(x); got != want {
			t.Fatalf("RoundHalfUp(%v) = %v, want %v", x, got, want)
		}
	}
}

func TestClampMS(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want int32
	}{{-3, 0}, {-0.4, 0}, {0.49999999999999994, 0}, {0.5, 1}, {59999.5, 60000}, {60000.4, 60000}, {1e12, 60000}, {math.NaN(), 0}} {
		if got := metrics.ClampMS(c.x); got != c.want {
			t.Errorf("ClampMS(%v) = %d, want %d", c.x, got, c.want)
		}
	}
}
