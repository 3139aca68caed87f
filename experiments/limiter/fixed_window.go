package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/metrics"
)

// FixedWindow counts admissions in aligned windows [k*window, (k+1)*window)
// and rejects once limit is reached; the count resets at each boundary.
// Two full windows back to back admit up to 2*limit in one window length.
// The window of an arrival is decided exactly (see metrics.WindowIndex), so
// no window admits more than limit; a limit of 0 refuses every request.
type FixedWindow struct {
	_        cacheline.Pad // a sweep's points run side by side (package cacheline)
	limit    int
	windowMS float64
	current  float64 // index k of the current window
	count    int
	_        cacheline.Pad
}

// NewFixedWindow returns a limiter of limit requests per window_ms.
func NewFixedWindow(limit int, windowMS float64) *FixedWindow {
	return &FixedWindow{limit: limit, windowMS: windowMS, current: -1}
}

// Offer admits while the current window has room.
func (w *FixedWindow) Offer(t float64, _ int32) (float64, bool) {
	if k := metrics.WindowIndex(t, w.windowMS); k != w.current {
		w.current, w.count = k, 0
	}
	if w.count >= w.limit {
		return 0, false
	}
	w.count++
	return t, true
}

// NextAdmitMS is the start of the next window when the current one is
// full (Advisor): the first float64 time that metrics.WindowIndex puts in
// a later window (the product (k+1)*window rounds, and may still read as
// window k). +Inf with limit 0: no window has room.
func (w *FixedWindow) NextAdmitMS(t float64, _ int32) float64 {
	if w.limit == 0 {
		return math.Inf(1)
	}
	if w.count < w.limit || w.current != metrics.WindowIndex(t, w.windowMS) {
		return t
	}
	return firstAdmit(t, (w.current+1)*w.windowMS, func(x float64) bool {
		return metrics.WindowIndex(x, w.windowMS) != w.current
	})
}

// TypeFixedWindow is the fixed window's type name.
const TypeFixedWindow Type = "fixed-window"

func fixedWindowKind() *Kind {
	return &Kind{
		Type:       TypeFixedWindow,
		RetryAfter: "the start of the next window when this one is full",
		Model:      "fixed window: limit per aligned window_ms",
		Params:     []Param{limitParam, windowParam},
		Size:       ParamLimit,
		Stage:      true,
		Example:    Params{ParamLimit: 100, ParamWindow: DefaultWindow},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewFixedWindow(int(p[ParamLimit]), p[ParamWindow]), nil
		},
		// At most limit per aligned window, and a window of length d meets
		// floor(d/L)+2 of them.
		Curve:   func(p Params) calculus.Curve { return calculus.FixedWindow(p[ParamLimit], p[ParamWindow]) },
		Nominal: windowNominal,
	}
}

// windowNominal is what a window limit promises: limit × window / window_ms.
func windowNominal(p Params, windowMS float64) float64 {
	return p[ParamLimit] * windowMS / p[ParamWindow]
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*FixedWindow) releaseAt(y float64, _ int32) float64 { return y }
