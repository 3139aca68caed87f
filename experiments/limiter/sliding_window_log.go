package limiter

// SlidingWindowLog is exact: it admits at t when fewer than limit admissions
// lie in (t - window, t]. It keeps the times of the last limit admissions
// in a ring, so it never admits more than limit in any window of length window.
type SlidingWindowLog struct {
	windowMS float64
	log      []float64 // ring of admission times, capacity limit
	head, n  int
}

// NewSlidingWindowLog returns a limiter of limit requests per window_ms.
func NewSlidingWindowLog(limit int, windowMS float64) *SlidingWindowLog {
	return &SlidingWindowLog{windowMS: windowMS, log: make([]float64, limit)}
}

// Offer forgets admissions older than the window, then admits if room is left.
func (w *SlidingWindowLog) Offer(t float64, _ int32) (float64, bool) {
	for w.n > 0 && w.log[w.head] <= t-w.windowMS {
		w.head++
		if w.head == len(w.log) {
			w.head = 0
		}
		w.n--
	}
	if w.n == len(w.log) {
		return 0, false
	}
	i := w.head + w.n
	if i >= len(w.log) {
		i -= len(w.log)
	}
	w.log[i] = t
	w.n++
	return t, true
}
