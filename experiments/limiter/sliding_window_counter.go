package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/metrics"
)

// SlidingWindowCounter approximates a sliding window from two aligned
// counters: estimate = prev * (1 - elapsed/window) + curr, where elapsed is
// the time since the current aligned window began; it admits while
// estimate < limit. It keeps two numbers, not a log, and can admit slightly
// more than limit in a rolling window. The aligned window of an arrival is
// decided exactly (see metrics.WindowIndex), and elapsed is t - k*window
// rounded once, never below 0. A limit of 0 refuses every request (the
// estimate is never below 0).
type SlidingWindowCounter struct {
	_          cacheline.Pad // a sweep's points run side by side (package cacheline)
	limit      float64
	windowMS   float64
	current    float64 // index k of the current aligned window
	prev, curr float64
	_          cacheline.Pad
}

// NewSlidingWindowCounter returns a limiter of about limit requests per window_ms.
func NewSlidingWindowCounter(limit int, windowMS float64) *SlidingWindowCounter {
	return &SlidingWindowCounter{limit: float64(limit), windowMS: windowMS}
}

// Offer rolls the counters to t's window and admits under the estimate.
func (w *SlidingWindowCounter) Offer(t float64, _ int32) (float64, bool) {
	k, prev, curr, admits := w.at(t)
	w.current, w.prev, w.curr = k, prev, curr
	if !admits {
		return 0, false
	}
	w.curr++
	return t, true
}

// at is the window k of t, the counters rolled to it, and whether the
// estimate there is under the limit; the counters stay as they are.
func (w *SlidingWindowCounter) at(t float64) (k, prev, curr float64, admits bool) {
	k = metrics.WindowIndex(t, w.windowMS)
	prev, curr = w.prev, w.curr
	switch {
	case k == w.current+1:
		prev, curr = curr, 0
	case k > w.current+1:
		prev, curr = 0, 0
	}
	elapsed := math.FMA(-k, w.windowMS, t)
	return k, prev, curr, !(prev*(1-elapsed/w.windowMS)+curr >= w.limit)
}

// NextAdmitMS is when the estimate falls below the limit again, if no
// request comes before (Advisor): in the current window while the previous
// one's weight decays, else in the next one, where this window's count
// decays. The closed form is the guess; the answer is the first float64
// time at which Offer's own estimate passes. +Inf with limit 0: the
// estimate is never below 0.
func (w *SlidingWindowCounter) NextAdmitMS(t float64, _ int32) float64 {
	if w.limit == 0 {
		return math.Inf(1)
	}
	k := w.current
	guess := t
	if w.curr < w.limit {
		if w.prev > 0 {
			guess = k*w.windowMS + w.windowMS*(1-(w.limit-w.curr)/w.prev)
		}
	} else {
		guess = (k+1)*w.windowMS + w.windowMS*max(0, 1-w.limit/w.curr)
	}
	return firstAdmit(t, guess, w.admitsAt)
}

// admitsAt is Offer's test at x, leaving the counters as they are.
func (w *SlidingWindowCounter) admitsAt(x float64) bool {
	_, _, _, admits := w.at(x)
	return admits
}

// TypeSlidingCounter is the sliding-window counter's type name.
const TypeSlidingCounter Type = "sliding-window-counter"

func slidingWindowCounterKind() *Kind {
	return &Kind{
		Type:       TypeSlidingCounter,
		RetryAfter: "when the estimate falls below the limit again",
		Model:      "sliding-window counter (approximate): limit per window_ms",
		Params:     []Param{limitParam, windowParam},
		Size:       ParamLimit,
		Stage:      true,
		Example:    Params{ParamLimit: 100, ParamWindow: DefaultWindow},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewSlidingWindowCounter(int(p[ParamLimit]), p[ParamWindow]), nil
		},
		// The estimate is never below the current aligned window's count, so
		// the fixed window's curve holds.
		Curve:   func(p Params) calculus.Curve { return calculus.FixedWindow(p[ParamLimit], p[ParamWindow]) },
		Nominal: windowNominal,
	}
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*SlidingWindowCounter) releaseAt(y float64, _ int32) float64 { return y }
