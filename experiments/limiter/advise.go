package limiter

import "math"

// What the Advisors share: the first time a gate admits, found on the
// float64 times themselves. A gate's admission at x, with nothing else
// arriving, is a step function of x that turns true once and stays true
// (its state only refills); firstAdmit finds the smallest float64 at
// which it is true by galloping from a guess and bisecting over the
// ordered float64 values, so the answer is the earliest time the gate's
// own Offer would admit, whatever clock or rounding the gate applies to it.

// floatKey maps float64 values to uint64 in the same order (NaNs above +Inf).
func floatKey(f float64) uint64 {
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// keyFloat is the inverse of floatKey.
func keyFloat(k uint64) float64 {
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

var infKey = floatKey(math.Inf(1))

// firstAdmit is the smallest x >= t with ok(x), ok monotone on [t, +Inf)
// (false, then true), searched from guess (an estimate of the answer);
// +Inf when ok holds nowhere below +Inf. It calls ok O(log d) times, d the
// distance in float64 steps between guess and the answer.
func firstAdmit(t, guess float64, ok func(float64) bool) float64 {
	return firstAdmitBelow(t, guess, math.Inf(1), ok)
}

// firstAdmitBelow is firstAdmit for ok monotone on [t, top] only, with
// ok(top) true when top is finite: the smallest x in [t, top] with ok(x).
func firstAdmitBelow(t, guess, top float64, ok func(float64) bool) float64 {
	if ok(t) {
		return t
	}
	guess = min(guess, top)
	lo := floatKey(t) // ok(lo) is false, ok(hi) true
	var hi uint64
	if g := floatKey(guess); guess > t && g < infKey {
		if ok(guess) {
			hi = g
			for d := uint64(1); ; d *= 2 { // gallop down toward t
				if hi-lo <= d {
					break
				}
				if c := hi - d; ok(keyFloat(c)) {
					hi = c
				} else {
					lo = c
					break
				}
			}
		} else {
			lo = g
		}
	}
	if hi == 0 { // gallop up from lo
		topKey := floatKey(top)
		for d := uint64(1); ; d *= 2 {
			c := lo + d
			if c >= topKey && top < math.Inf(1) {
				hi = topKey
				break
			}
			if c >= infKey || c < lo {
				if !ok(math.MaxFloat64) {
					return math.Inf(1)
				}
				hi = floatKey(math.MaxFloat64)
				break
			}
			if ok(keyFloat(c)) {
				hi = c
				break
			}
			lo = c
		}
	}
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if ok(keyFloat(m)) {
			hi = m
		} else {
			lo = m
		}
	}
	return keyFloat(hi)
}

// releaser is a gate that can say, without changing, when it would release
// a request it admits at y with nothing else arriving (a policer: at y). A
// chain whose gate stages all are releasers finds its exact Retry-After.
type releaser interface {
	releaseAt(y float64, client int32) float64
}
