package limiter

import "github.com/ratelab/ratelab/experiments/metrics"

// FixedWindow counts admissions in aligned windows [k*window, (k+1)*window)
// and rejects once limit is reached; the count resets at each boundary.
// Two full windows back to back admit up to 2*limit in one window length.
// The window of an arrival is decided exactly (see metrics.WindowIndex), so
// no window admits more than limit.
type FixedWindow struct {
	limit    int
	windowMS float64
	current  float64 // index k of the current window
	count    int
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
