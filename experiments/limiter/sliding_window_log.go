package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/metrics"
)

// SlidingWindowLog is exact: it admits at t when fewer than limit admissions
// lie in (t - window, t]. It keeps the times of the admissions still inside
// the window (at most limit) in a ring, so it never admits more than limit
// in any window of length window. The ring grows as needed, so a large
// limit costs memory only when the traffic fills it. An admission at a is
// inside (t - window, t] while t - a < window, compared exactly (see
// metrics.Apart), not as a > t - window, whose subtraction rounds. A
// limit of 0 refuses every request.
type SlidingWindowLog struct {
	_        cacheline.Pad // a sweep's points run side by side (package cacheline)
	windowMS float64
	limit    int
	log      []float64 // ring of admission times, length a power of two
	head, n  int
	_        cacheline.Pad
}

// NewSlidingWindowLog returns a limiter of limit requests per window_ms.
func NewSlidingWindowLog(limit int, windowMS float64) *SlidingWindowLog {
	return &SlidingWindowLog{windowMS: windowMS, limit: limit, log: make([]float64, 64)}
}

// Offer forgets admissions older than the window, then admits if room is left.
func (w *SlidingWindowLog) Offer(t float64, _ int32) (float64, bool) {
	mask := len(w.log) - 1
	for w.n > 0 && metrics.Apart(w.log[w.head], t, w.windowMS) {
		w.head = (w.head + 1) & mask
		w.n--
	}
	if w.n >= w.limit {
		return 0, false
	}
	if w.n == len(w.log) {
		next := make([]float64, 2*len(w.log))
		for i := range w.n {
			next[i] = w.log[(w.head+i)&mask]
		}
		w.log, w.head = next, 0
		mask = len(w.log) - 1
	}
	w.log[(w.head+w.n)&mask] = t
	w.n++
	return t, true
}

// NextAdmitMS is when the admission that must leave the window for one
// more to fit has left it (Advisor): the log holds n >= limit of them, and
// the first float64 time at which Offer's own exact test (metrics.Apart)
// drops it is the answer. +Inf with limit 0: no admission ever fits.
func (w *SlidingWindowLog) NextAdmitMS(t float64, _ int32) float64 {
	if w.limit == 0 {
		return math.Inf(1)
	}
	if w.n < w.limit {
		return t
	}
	e := w.log[(w.head+w.n-w.limit)&(len(w.log)-1)]
	return firstAdmit(t, e+w.windowMS, func(x float64) bool { return metrics.Apart(e, x, w.windowMS) })
}

// TypeSlidingLog is the sliding-window log's type name.
const TypeSlidingLog Type = "sliding-window-log"

func slidingWindowLogKind() *Kind {
	return &Kind{
		Type:       TypeSlidingLog,
		RetryAfter: "when the admission that must leave the window for one more to fit has left it",
		Model:      "sliding-window log (exact): limit per window_ms",
		Params:     []Param{limitParam, windowParam},
		Size:       ParamLimit,
		Stage:      true,
		Example:    Params{ParamLimit: 100, ParamWindow: DefaultWindow},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewSlidingWindowLog(int(p[ParamLimit]), p[ParamWindow]), nil
		},
		// At most limit in any half-open window of length L: limit*(floor(d/L)+1)
		// in a closed window of length d.
		Curve:   func(p Params) calculus.Curve { return calculus.SlidingLog(p[ParamLimit], p[ParamWindow]) },
		Nominal: windowNominal,
	}
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*SlidingWindowLog) releaseAt(y float64, _ int32) float64 { return y }
