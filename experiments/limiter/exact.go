package limiter

import "math"

// Exact decisions for the token buckets split in shares (per-client and
// hierarchical). A share bucket is kept as the time a at which it was last
// full and the number k of tokens taken since, so its content at t is,
// while it has not filled up again,
//
//	burst*w/W - k + (t - a) * rate*w/(1000*W)
//
// for a client of weight w, W the float64 sum of the weights (n for equal
// shares). Nothing is accumulated in float64: every question about the
// bucket is the sign of a short expression in the float64 values t, a,
// rate, burst, w, W and the integer k. Scaled by 1000*W it is
//
//	(t - a)*rate*w + 1000*(burst*w - j*W)
//
// (burst = 0 and j = k: has it filled up again; j = k + 1: does it hold
// one token). shareSign decides it with a float64 filter whose error bound
// is proved below, and, when the value is too close to zero for the filter
// (a tie, as when whole-millisecond arrivals meet a whole number of
// tokens), with an exact sum of the products' float64 parts.

// unit is the unit roundoff of float64: a rounded operation is off by at
// most unit times its result's magnitude (away from the subnormal range).
const unit = 0x1p-53

// tiny absorbs the absolute error of results in the subnormal range.
const tiny = 0x1p-1000

// twoSum returns s = fl(a + b) and the exact error e = a + b - s.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bv := s - a
	e = (a - (s - bv)) + (b - bv)
	return s, e
}

// twoProd returns p = fl(a * b) and the exact error e = a*b - p.
func twoProd(a, b float64) (p, e float64) {
	p = float64(a * b) // the conversion forbids fusing the product into an FMA
	return p, math.FMA(a, b, -p)
}

// expansion is an exact sum of float64 values: non-overlapping components
// in increasing order of magnitude, without zeros (Shewchuk's
// grow-expansion with zero elimination), so its sign is its last
// component's.
type expansion struct {
	c [32]float64
	n int
}

func (x *expansion) add(v float64) {
	if v == 0 {
		return
	}
	q, j := v, 0
	for i := range x.n {
		var h float64
		q, h = twoSum(q, x.c[i])
		if h != 0 {
			x.c[j] = h
			j++
		}
	}
	if q != 0 {
		x.c[j] = q
		j++
	}
	x.n = j
}

func (x *expansion) addProd(a, b float64) {
	p, e := twoProd(a, b)
	x.add(p)
	x.add(e)
}

func (x *expansion) sign() int {
	switch {
	case x.n == 0:
		return 0
	case x.c[x.n-1] > 0:
		return 1
	}
	return -1
}

// shareSign is the sign (-1, 0, 1) of (t - a)*rate*w + 1000*(burst*w - j*W)
// in exact arithmetic, for finite values of moderate size (no overflow,
// products outside the subnormal range or below tiny). It does not
// allocate.
func shareSign(t, a, rate, w, burst, j, W float64) int {
	// Filter: x, rw, p carry at most 3 roundings relative to the exact
	// product, so p is within 4u|p| of it; bw and jw one rounding each,
	// their difference and the scaling by 1000 two more, the final sum
	// one: the total stays below errB.
	x := t - a
	p := x * (rate * w)
	bw, jw := burst*w, j*W
	v := p + 1000*(bw-jw)
	errB := 8*unit*(math.Abs(p)+1000*(math.Abs(bw)+math.Abs(jw))) + tiny
	switch {
	case v > errB:
		return 1
	case v < -errB:
		return -1
	}
	var e expansion
	s, se := twoSum(t, -a)
	r, re := twoProd(rate, w)
	e.addProd(s, r)
	e.addProd(s, re)
	e.addProd(se, r)
	e.addProd(se, re)
	b, be := twoProd(burst, w)
	e.addProd(1000, b)
	e.addProd(1000, be)
	q, qe := twoProd(j, W)
	e.addProd(-1000, q)
	e.addProd(-1000, qe)
	return e.sign()
}

// shareTest decides for a share bucket with k > 0 tokens taken since a
// whether at t it holds at least one token and, if it does, whether it has
// filled up again (t >= a). It is shareSign for j = k + 1 and then for the
// burst left out and j = k, sharing the filter's first products.
func shareTest(t, a, rate, w, burst, k, W float64) (ok, full bool) {
	p := (t - a) * (rate * w) // within 4u*p of the exact product
	bw, kw := burst*w, k*W
	v := p + 1000*(bw-(kw+W))
	errB := 8*unit*(p+1000*(bw+kw+W)) + tiny
	switch {
	case v < -errB:
		return false, false
	case v <= errB && shareSign(t, a, rate, w, burst, k+1, W) < 0:
		return false, false
	}
	v = p - 1000*kw
	errB = 8*unit*(p+1000*kw) + tiny
	switch {
	case v > errB:
		return true, true
	case v < -errB:
		return true, false
	}
	return true, shareSign(t, a, rate, w, 0, k, W) >= 0
}

// shares returns the float64 sum W of the weights and, for each client,
// whether its burst share burst*w/W holds a whole token, exactly.
func shares(burst float64, weights []float64) (W float64, enough []bool) {
	for _, w := range weights {
		W += w
	}
	enough = make([]bool, len(weights))
	for i, w := range weights {
		enough[i] = shareSign(0, 0, 0, w, burst, 1, W) >= 0
	}
	return W, enough
}
