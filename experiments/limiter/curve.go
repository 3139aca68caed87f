package limiter

import "github.com/ratelab/ratelab/experiments/calculus"

// ArrivalCurve is the curve a gate's output obeys whatever its input (in
// requests and ms; see package calculus), or ok=false for a gate without
// one (none, admission, chain: a chain's curves come from its stages).
//
//   - token bucket (r, b): b + r*d.
//   - per-client token bucket: the client buckets' rates and bursts sum to
//     (r, b), so the aggregate obeys b + r*d.
//   - hierarchical token bucket: every admission takes a global token, so
//     b + r*d.
//   - leaky bucket at r: releases at least 1/r ms apart, 1 + r*d.
//   - sliding-window log, N per L: at most N in any half-open window of
//     length L, N*(floor(d/L)+1) in a closed window of length d.
//   - fixed window and sliding-window counter, N per L: at most N per
//     aligned window (the counter's estimate is never below the current
//     window's count), and a window of length d meets floor(d/L)+2 of them.
func ArrivalCurve(typ string, p Params) (calculus.Curve, bool) {
	r := calculus.PerMS(p.RateRPS)
	switch typ {
	case TypeTokenBucket, TypePerClient, TypeHierarchical:
		return calculus.Affine(r, p.Burst), true
	case TypeLeakyBucket:
		return calculus.Shaper(r), true
	case TypeSlidingLog:
		return calculus.SlidingLog(p.Limit, p.WindowMS), true
	case TypeFixedWindow, TypeSlidingCounter:
		return calculus.FixedWindow(p.Limit, p.WindowMS), true
	}
	return calculus.Curve{}, false
}

// GateDelayBoundMS bounds the time a gate holds a request before release:
// 0 for policers (they release at once); (queue-1)/rate for the leaky
// bucket, which admits only while fewer than queue releases are pending
// (ceil((next - t)/interval) < queue), so next - t <= (queue-1)*interval.
func GateDelayBoundMS(typ string, p Params) float64 {
	if typ == TypeLeakyBucket {
		return (p.Queue - 1) * 1000 / p.RateRPS
	}
	return 0
}
