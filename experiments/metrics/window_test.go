package metrics_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/metrics"
)

// quotient is t/w in exact integer arithmetic (t >= 0, w > 0, both
// finite): t = mt·2^et and w = mw·2^ew with integer mantissas, so
// t/w = mt·2^(et−ew) / mw, divided as integers; exact reports a zero
// remainder.
func quotient(t, w float64) (q *big.Int, exact bool) {
	mt, et := mantissa(t)
	mw, ew := mantissa(w)
	num, den := new(big.Int).SetUint64(mt), new(big.Int).SetUint64(mw)
	if d := et - ew; d >= 0 {
		num.Lsh(num, uint(d))
	} else {
		den.Lsh(den, uint(-d))
	}
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	return q, r.Sign() == 0
}

// mantissa is x = m·2^e with m an integer of at most 53 bits (x >= 0).
func mantissa(x float64) (m uint64, e int) {
	frac, exp := math.Frexp(x)
	return uint64(math.Ldexp(frac, 53)), exp - 53
}

// exactFloor is floor(t/w) and exactCeil ceil(t/w) in exact arithmetic on
// the float64 values (t >= 0, w > 0).
func exactFloor(t, w float64) float64 {
	q, _ := quotient(t, w)
	f, _ := new(big.Float).SetInt(q).Float64()
	return f
}

func exactCeil(t, w float64) float64 {
	q, exact := quotient(t, w)
	f, _ := new(big.Float).SetInt(q).Float64()
	if !exact {
		f++
	}
	return f
}

// TestQuotientIsTheRationalQuotient checks the integer quotient the
// window tests use as their oracle against math/big's rationals.
func TestQuotientIsTheRationalQuotient(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 2))
	for i := range 5000 {
		w := []float64{33.3, 0.1, 1000.0 / 3, 5e-324, 0.01 + rng.Float64()*1000}[rng.IntN(5)]
		at := []float64{0, 5e-324, float64(rng.IntN(1_000_000)) * w, rng.Float64() * 1e9}[rng.IntN(4)]
		at = max(math.Nextafter(at, math.Inf(2*rng.IntN(2)-1)), 0)
		rq := new(big.Rat).Quo(new(big.Rat).SetFloat64(at), new(big.Rat).SetFloat64(w))
		want := new(big.Int).Quo(rq.Num(), rq.Denom())
		q, exact := quotient(at, w)
		if q.Cmp(want) != 0 || exact != rq.IsInt() {
			t.Fatalf("case %d: quotient(%v, %v) = %v (exact %v), want %v (exact %v)", i, at, w, q, exact, want, rq.IsInt())
		}
	}
}

func TestWindowIndex(t *testing.T) {
	for _, c := range []struct {
		t, w        float64
		index, span float64
	}{
		{0, 100, 0, 0},
		{99.99999999999999, 100, 0, 1},
		{100, 100, 1, 1},
		{250, 100, 2, 3},
		// 233.09999999999997/33.3 rounds to 7, but the value is below 7*33.3.
		{233.09999999999997, 33.3, 6, 7},
		{200, 33.3, 6, 7},
		// 166.49999999999997/33.3 rounds to 5, but the value is below 5*33.3.
		{166.49999999999997, 33.3, 4, 5},
		{300, 33.3, 9, 10},
		{7.5, 2.5, 3, 3},
	} {
		if got := metrics.WindowIndex(c.t, c.w); got != c.index {
			t.Errorf("WindowIndex(%v, %v) = %v, want %v", c.t, c.w, got, c.index)
		}
		if c.t > 0 {
			if got := metrics.WindowCount(c.t, c.w); got != c.span {
				t.Errorf("WindowCount(%v, %v) = %v, want %v", c.t, c.w, got, c.span)
			}
		}
	}
	// At and a few ulps around k*w, against math/big.
	rng := rand.New(rand.NewPCG(15, 1))
	wrongQuotients := 0
	for i := range 300_000 {
		w := []float64{33.3, 100, 1000, 0.1, 1000.0 / 3, 2.5, float64(1+rng.IntN(99999)) / 100, 0.01 + rng.Float64()*1000}[rng.IntN(8)]
		at := float64(rng.IntN(1_000_000)) * w
		for range rng.IntN(4) {
			at = math.Nextafter(at, math.Inf(2*rng.IntN(2)-1))
		}
		at = max(at, 0)
		want := exactFloor(at, w)
		if got := metrics.WindowIndex(at, w); got != want {
			t.Fatalf("case %d: WindowIndex(%v, %v) = %v, want %v", i, at, w, got, want)
		}
		if math.Floor(at/w) != want {
			wrongQuotients++
		}
		if at > 0 {
			if got, want := metrics.WindowCount(at, w), exactCeil(at, w); got != want {
				t.Fatalf("case %d: WindowCount(%v, %v) = %v, want %v", i, at, w, got, want)
			}
		}
	}
	if wrongQuotients == 0 {
		t.Error("floor(t/w) was never wrong: the edges were not exercised")
	}
}

func TestWindowIndexDoesNotAllocate(t *testing.T) {
	x := 0.0
	if a := testing.AllocsPerRun(1000, func() { x += metrics.WindowIndex(233.09999999999997, 33.3) }); a != 0 {
		t.Errorf("%g allocations", a)
	}
}
