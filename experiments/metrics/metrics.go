// Package metrics holds the measuring instruments of a run: exact
// nearest-rank percentiles over whole-millisecond delays, rolling-window
// maxima, and Jain's fairness index.
package metrics

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
)

// MaxDelayMS is the largest delay a histogram records; larger ones are clamped.
const MaxDelayMS = 60_000

// RoundMS rounds half up (floor(x + 0.5)), the lab's rule for delays.
func RoundMS(x float64) float64 { return math.Floor(x + 0.5) }

// Histogram counts whole-millisecond delays in [0, MaxDelayMS]. Because every
// recorded value is an integer in that range, its nearest-rank percentiles
// are exact, with no samples kept.
//
// Delays below lowDelaysMS are counted in an array inside the histogram;
// larger ones in an array allocated when the first comes. A point's
// histograms so cost what its delays reach, not MaxDelayMS (a sweep of
// small points allocates kilobytes, not a megabyte a worker), and Record
// stays a compare and an increment for the delays most points have.
type Histogram struct {
	low  [lowDelaysMS]uint32
	high *[MaxDelayMS + 1 - lowDelaysMS]uint32 // high[v-lowDelaysMS]; nil until a delay of lowDelaysMS or more
	n    int
	max  int
}

// lowDelaysMS is how many of the smallest delays a histogram counts in place.
const lowDelaysMS = 4096

// Reset empties the histogram, keeping its storage. Only values up to max
// were counted, so only they are cleared.
func (h *Histogram) Reset() {
	if h.n > 0 {
		clear(h.low[:min(h.max+1, lowDelaysMS)])
		if h.max >= lowDelaysMS {
			clear(h.high[:h.max+1-lowDelaysMS])
		}
	}
	h.n, h.max = 0, 0
}

// Record adds one delay in ms: rounded half up and clamped to [0, MaxDelayMS].
func (h *Histogram) Record(ms float64) {
	v := Bucket(ms)
	h.add(v, 1)
	h.n++
	h.max = max(h.max, v)
}

// Bucket is the whole millisecond a delay of ms is counted at: ms rounded
// half up and clamped to [0, MaxDelayMS].
func Bucket(ms float64) int {
	// Compare in float before converting: int() of a huge, infinite or
	// NaN value is undefined. x is not NaN past the first comparison, and
	// int(max(x, 0)) is the floor for x >= 0 and 0 below.
	v := MaxDelayMS // also for NaN, where every comparison is false
	if x := ms + 0.5; x < MaxDelayMS+1 {
		v = int(max(x, 0))
	}
	return v
}

// add counts n delays at v (a Bucket), leaving the count and maximum to
// the caller.
func (h *Histogram) add(v, n int) {
	if v < lowDelaysMS {
		h.low[v] += uint32(n)
		return
	}
	if h.high == nil {
		h.high = new([MaxDelayMS + 1 - lowDelaysMS]uint32)
	}
	h.high[v-lowDelaysMS] += uint32(n)
}

// A Run records delays into a histogram as Record does, a run of delays
// at one bucket at a time: it counts the run itself, and adds it to the
// histogram when the bucket changes. A loop that records many delays, most
// at the bucket of the delay before (a gate's zero wait, a fixed service),
// so writes no counter in memory per delay: in the forward pass, an
// increment of the bucket just incremented waited for the one before
// (17 % of the pass's samples in the Post 3 sweep, docs/speed.md). Like append, Add
// returns the run to keep: a Run in a local stays in registers. End adds
// what is left to the histogram; the histogram reads what was recorded
// only after End.
type Run struct {
	bucket, n int // the current run: n delays at bucket
	count     int // the delays recorded
	most      int // their largest bucket
}

// Add records a delay at bucket b (Bucket) into h, the run's histogram.
func (r Run) Add(h *Histogram, b int) Run {
	r.count++
	if b != r.bucket {
		return r.next(h, b)
	}
	r.n++
	return r
}

// next adds the run to h and starts one at bucket b: out of line, so that
// Add inlines.
//
//go:noinline
func (r Run) next(h *Histogram, b int) Run {
	h.add(r.bucket, r.n)
	return Run{bucket: b, n: 1, count: r.count, most: max(r.most, b)}
}

// End adds what r recorded and has not added to h.
func (r Run) End(h *Histogram) {
	h.add(r.bucket, r.n)
	if r.count > 0 {
		h.n += r.count
		h.max = max(h.max, r.most)
	}
}

// count is the number of recordings of v (v <= max).
func (h *Histogram) count(v int) uint32 {
	if v < lowDelaysMS {
		return h.low[v]
	}
	return h.high[v-lowDelaysMS]
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
		seen += int(h.count(v))
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
// an event. An event at x has left the window of a later event at t when
// t - x >= L, compared exactly (see Apart). The count of the window ending
// at the k-th event is at most one more than at the (k-1)-th (every event
// in the later window is in the earlier one, but the new), so the largest
// count so far, M, grows by one exactly when the event M back is still in
// the new event's window: one comparison per event, against a ring of the
// last M events (the ring holds as many events as the busiest window, as
// a ring of the window's events would).
type Rolling struct {
	_        cacheline.Pad // a sweep's workers count side by side (package cacheline)
	windowMS float64
	ring     []float64 // event k at ring[k&(len(ring)-1)], the last len(ring) of them
	n        int       // events added
	max      int
	_        cacheline.Pad
}

// NewRolling measures windows of length windowMS.
func NewRolling(windowMS float64) *Rolling {
	return &Rolling{windowMS: windowMS, ring: make([]float64, 64)}
}

// Reset forgets all events.
func (r *Rolling) Reset(windowMS float64) {
	r.windowMS, r.n, r.max = windowMS, 0, 0
}

// Add records an event at t (non-decreasing).
func (r *Rolling) Add(t float64) {
	if grows(r.ring, r.n, r.max, t, r.windowMS) {
		r.max++
		if r.max > len(r.ring) { // the next event compares with the one max back
			r.grow(r.n)
		}
	}
	r.ring[r.n&(len(r.ring)-1)] = t
	r.n++
}

// AddAll records events at ts (non-decreasing, from the last added on),
// in order: as many Adds, its state in registers over ts.
func (r *Rolling) AddAll(ts []float64) {
	k, most, ring, windowMS := r.n, r.max, r.ring, r.windowMS
	for _, t := range ts {
		if grows(ring, k, most, t, windowMS) {
			most++
			if most > len(ring) {
				r.grow(k)
				ring = r.ring
			}
		}
		ring[k&(len(ring)-1)] = t
		k++
	}
	r.n, r.max = k, most
}

// grows reports whether event k at t takes the largest count most up,
// ring holding the events before it: whether the event most back is
// still in its window (the first event always is).
func grows(ring []float64, k, most int, t, windowMS float64) bool {
	return most == 0 || k >= most && !Apart(ring[(k-most)&(len(ring)-1)], t, windowMS)
}

// grow doubles the ring before event k is added.
func (r *Rolling) grow(k int) {
	mask := len(r.ring) - 1
	next := make([]float64, 2*len(r.ring))
	for i := max(k-len(r.ring), 0); i < k; i++ {
		next[i&(len(next)-1)] = r.ring[i&mask]
	}
	r.ring = next
}

// Max is the largest count seen in any window of length L.
func (r *Rolling) Max() int { return r.max }
