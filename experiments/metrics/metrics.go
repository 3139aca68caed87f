// Package metrics holds the measuring instruments of a run: exact
// nearest-rank percentiles over whole-millisecond delays, rolling-window
// maxima, and Jain's fairness index.
package metrics

import "math"

// MaxDelayMS is the largest delay a histogram records; larger ones are clamped.
const MaxDelayMS = 60_000

// RoundMS rounds half up (floor(x + 0.5)), the lab's rule for delays.
func RoundMS(x float64) float64 { return math.Floor(x + 0.5) }

// Histogram counts whole-millisecond delays in [0, MaxDelayMS]. Because every
// recorded value is an integer in that range, its nearest-rank percentiles
// are exact, with no samples kept.
type Histogram struct {
	counts []uint32 // counts[v] for v <= max; grown as larger values come, never shrunk
	n      int
	max    int
}

// Reset empties the histogram, keeping its storage. Only counts[:max+1] can
// be non-zero, so only they are cleared: a point's histograms cost what
// its delays reach, not MaxDelayMS.
func (h *Histogram) Reset() {
	if h.n > 0 {
		clear(h.counts[:h.max+1])
	}
	h.n, h.max = 0, 0
}

// grow makes counts[v] addressable: at least doubling, up to MaxDelayMS+1.
func (h *Histogram) grow(v int) {
	size := min(max(v+1, 2*len(h.counts), 1024), MaxDelayMS+1)
	counts := make([]uint32, size)
	copy(counts, h.counts)
	h.counts = counts
}

// Record adds one delay in ms: rounded half up and clamped to [0, MaxDelayMS].
func (h *Histogram) Record(ms float64) {
	// Compare in float before converting: int() of a huge, infinite or
	// NaN value is undefined.
	v := MaxDelayMS // also for NaN, where every comparison is false
	if x := ms + 0.5; x < MaxDelayMS+1 {
		v = 0
		if x >= 0 {
			v = int(x) // floor for non-negative values
		}
	}
	if v >= len(h.counts) {
		h.grow(v)
	}
	h.counts[v]++
	h.n++
	if v > h.max {
		h.max = v
	}
}

// Count is the number of recorded values.
func (h *Histogram) Count() int { return h.n }

// Max is the largest recorded value (0 when empty).
func (h *Histogram) Max() int { return h.max }

// Quantile is the nearest-rank percentile p (0 < p <= 100): the c-th smallest
// of n values, c = max(1, ceil(nextafter(p, -inf)/100 * n)) — the rule of
// HdrHistogram's getValueAtPercentile. 0 when empty.
func (h *Histogram) Quantile(p float64) int {
	if h.n == 0 {
		return 0
	}
	c := Rank(p, h.n)
	seen := 0
	for v := 0; v <= h.max; v++ {
		seen += int(h.counts[v])
		if seen >= c {
			return v
		}
	}
	return h.max
}

// Rank is the 1-based nearest rank of percentile p among n values.
func Rank(p float64, n int) int {
	q := math.Min(math.Max(math.Nextafter(p, math.Inf(-1)), 0), 100)
	c := int(math.Ceil(q / 100 * float64(n)))
	return max(c, 1)
}

// Jain is Jain's fairness index (sum x)^2 / (n * sum x^2): 1 when all x are
// equal, 1/n when one takes everything. It is 1 for no values or all zeros.
func Jain(x []float64) float64 {
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	if s2 == 0 {
		return 1
	}
	return s * s / (float64(len(x)) * s2)
}

// Rolling finds the largest number of events in any window [x, x+L) over a
// non-decreasing stream of event times, exactly: the best window starts at
// an event, so it keeps the events of the last L ms in a ring. An event at
// x has left the window of a later event at t when t - x >= L, compared
// exactly (see Apart).
type Rolling struct {
	windowMS float64
	ring     []float64
	head, n  int
	max      int
}

// NewRolling measures windows of length windowMS.
func NewRolling(windowMS float64) *Rolling {
	return &Rolling{windowMS: windowMS, ring: make([]float64, 64)}
}

// Reset forgets all events.
func (r *Rolling) Reset(windowMS float64) {
	r.windowMS, r.head, r.n, r.max = windowMS, 0, 0, 0
}

// Add records an event at t (non-decreasing).
func (r *Rolling) Add(t float64) {
	mask := len(r.ring) - 1
	for r.n > 0 && Apart(r.ring[r.head], t, r.windowMS) {
		r.head = (r.head + 1) & mask
		r.n--
	}
	if r.n == len(r.ring) {
		next := make([]float64, 2*len(r.ring))
		for i := 0; i < r.n; i++ {
			next[i] = r.ring[(r.head+i)&mask]
		}
		r.ring, r.head = next, 0
		mask = len(r.ring) - 1
	}
	r.ring[(r.head+r.n)&mask] = t
	r.n++
	if r.n > r.max {
		r.max = r.n
	}
}

// Max is the largest count seen in any window of length L.
func (r *Rolling) Max() int { return r.max }
