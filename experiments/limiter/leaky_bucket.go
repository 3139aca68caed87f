package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
)

// LeakyBucket is a shaper: admitted requests leave one interval (1000/rate
// ms) apart, in arrival order, and wait in a queue of at most queue requests
// until their turn. An arrival that finds queue requests still pending is
// rejected.
//
// Its output obeys alpha(d) = 1 + rate*d: release gaps are never shorter
// than the interval.
type LeakyBucket struct {
	_             cacheline.Pad // a sweep's points run side by side (package cacheline)
	intervalMS    float64
	queue         float64
	nextReleaseMS float64
	_             cacheline.Pad
}

// NewLeakyBucket returns an empty bucket; rate in requests/s.
func NewLeakyBucket(rateRPS, queue float64) *LeakyBucket {
	return &LeakyBucket{intervalMS: 1000 / rateRPS, queue: queue}
}

// Offer schedules the request at the next free slot.
func (b *LeakyBucket) Offer(t float64, _ int32) (float64, bool) {
	pendingAhead := 0.0
	if b.nextReleaseMS > t {
		pendingAhead = math.Ceil((b.nextReleaseMS - t) / b.intervalMS)
	}
	if pendingAhead >= b.queue {
		return 0, false
	}
	release := max(t, b.nextReleaseMS)
	b.nextReleaseMS = release + b.intervalMS
	return release, true
}

// NextAdmitMS is when fewer than queue requests wait ahead again (Advisor):
// the first float64 time at which Offer's own count passes.
func (b *LeakyBucket) NextAdmitMS(t float64, _ int32) float64 {
	return firstAdmit(t, b.nextReleaseMS-(b.queue-1)*b.intervalMS, func(x float64) bool {
		return b.nextReleaseMS <= x || math.Ceil((b.nextReleaseMS-x)/b.intervalMS) < b.queue
	})
}

// TypeLeakyBucket is the leaky bucket's type name.
const TypeLeakyBucket Type = "leaky-bucket"

func leakyBucketKind() *Kind {
	return &Kind{
		Type:    TypeLeakyBucket,
		Model:   "leaky bucket (rate_rps, queue): paced releases; shaper",
		Params:  []Param{rateParam, queueParam},
		Size:    ParamQueue,
		Stage:   true,
		Shaper:  true,
		Example: Params{ParamRate: 100, ParamQueue: 100},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewLeakyBucket(p[ParamRate], p[ParamQueue]), nil
		},
		// Releases at least 1/r ms apart: 1 + r*d.
		Curve: func(p Params) calculus.Curve { return calculus.Shaper(calculus.PerMS(p[ParamRate])) },
		// It admits only while fewer than queue releases are pending
		// (ceil((next - t)/interval) < queue), so next - t <= (queue-1)*interval.
		DelayBoundMS: func(_ *Spec, p Params) float64 { return (p[ParamQueue] - 1) * 1000 / p[ParamRate] },
		Nominal:      rateNominal,
		RetryAfter:   "when fewer than queue requests wait ahead again",
	}
}

// releaseAt is the next free slot, as Offer schedules it (releaser).
func (b *LeakyBucket) releaseAt(y float64, _ int32) float64 { return max(y, b.nextReleaseMS) }
