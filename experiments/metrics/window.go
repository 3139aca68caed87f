package metrics

import "math"

// Windows of time, decided exactly: which aligned window [k*w, (k+1)*w) an
// instant t falls in, how many of them cover [0, d), and whether an instant
// lies outside a window of length d ending at another. The answers are
// those of exact real arithmetic on the float64 values given, not of the
// rounded quotient, sum or difference: t/w rounds to an integer k for some
// t a hair below k*w (233.09999999999997/33.3 rounds to 7, though the value
// is below 7 times the float64 33.3). Every gate, series and measure that
// cuts time into windows asks these functions, so all of them agree at the
// edges.

// WindowIndex is the index k of the aligned window [k*w, (k+1)*w) that
// holds t: the integer k with k*w <= t < (k+1)*w in exact real arithmetic
// on the float64 values t and w (w > 0, |t/w| < 2^52). It is floor(t/w)
// corrected by one where the quotient rounds across an integer: the
// residual t - k*w computed by math.FMA is rounded once, so it has the sign
// of the exact residual and is zero only when that is. It does not
// allocate.
func WindowIndex(t, w float64) float64 {
	k := math.Floor(t / w)
	r := math.FMA(-k, w, t) // t - k*w, one rounding
	switch {
	case r < 0: // t < k*w: the quotient rounded up to k
		return k - 1
	case r < w: // t - k*w < w, since rounding cannot cross w from above
		return k
	case r > w:
		return k + 1
	}
	// r == w: t - k*w may have rounded up to w from just below it.
	if math.FMA(-(k+1), w, t) >= 0 {
		return k + 1
	}
	return k
}

// WindowCount is the number of aligned windows of length w that meet
// [0, d) for d > 0: ceil(d/w) in exact arithmetic on the float64 values,
// so that every t in [0, d) has WindowIndex(t, w) < WindowCount(d, w).
func WindowCount(d, w float64) float64 {
	k := WindowIndex(d, w)
	if math.FMA(-k, w, d) != 0 { // d is not a window edge: its window counts
		k++
	}
	return k
}

// Apart reports whether b - a >= d in exact arithmetic on the float64
// values (finite a, b, d): whether a time a lies outside a window of length
// d ending at b. Neither b - a >= d nor a + d <= b nor a <= b - d says so
// when the subtraction or addition rounds (148.8 and 182.1 are less than
// 33.3 apart, yet 182.1 - 148.8 rounds to 33.3), and a window count that
// rounds can show N+1 for an exact limit of N.
func Apart(a, b, d float64) bool {
	s := b - a
	if s != d {
		// The rounding error of s is at most half the gap to the next
		// float64, so it cannot carry b - a across d.
		return s > d
	}
	// s == d: b - a is exactly s + e (TwoSum); the error e decides.
	bv := s - b
	e := (b - (s - bv)) + (-a - bv)
	return e >= 0
}

// WindowCursor is WindowIndex for times that mostly stay in one window, as
// an event loop's do: it keeps the window it last answered and the float64
// range [lo, hi) of the times WindowIndex puts in it, so that a time in
// that range costs two comparisons instead of a division and its
// corrections. Its answers are WindowIndex's, for every t.
type WindowCursor struct {
	w, k, lo, hi float64
}

// NewWindowCursor returns a cursor over windows of length w (w > 0).
func NewWindowCursor(w float64) WindowCursor {
	return WindowCursor{w: w, lo: math.Inf(1), hi: math.Inf(-1)}
}

// Index is WindowIndex(t, w).
func (c *WindowCursor) Index(t float64) float64 {
	if c.lo <= t && t < c.hi {
		return c.k
	}
	return c.move(t)
}

func (c *WindowCursor) move(t float64) float64 {
	k := WindowIndex(t, c.w)
	if !(math.Abs(k) < 1<<52) { // also an infinite or NaN t
		return k // no range to keep
	}
	lo := c.hi // the next window starts where the last one ended
	if k != c.k+1 || !(c.lo < c.hi) {
		lo = windowEdge(k, c.w)
	}
	c.k, c.lo, c.hi = k, lo, windowEdge(k+1, c.w)
	return k
}

// windowEdge is the least float64 x with WindowIndex(x, w) >= k: the
// product k*w when it is exact (WindowIndex(k*w, w) is k, and every
// float64 below it lies in an earlier window; a whole w of a series,
// such as 100, and a window count below 2^53/w), else the rounded product
// moved by the ulps its rounding is off (at most a few; the loop is
// bounded).
func windowEdge(k, w float64) float64 {
	x := k * w
	if math.FMA(k, w, -x) == 0 { // no rounding (an overflow gives -Inf or NaN)
		return x
	}
	return searchEdge(x, k, w)
}

// searchEdge is windowEdge from x, the rounded product k*w.
func searchEdge(x, k, w float64) float64 {
	for range 64 {
		if WindowIndex(x, w) < k {
			x = math.Nextafter(x, math.Inf(1))
			continue
		}
		if y := math.Nextafter(x, math.Inf(-1)); WindowIndex(y, w) >= k {
			x = y
			continue
		}
		return x
	}
	panic("metrics: a window edge more than 64 ulps from k*w")
}
