// Package calculus is the deterministic network calculus that ratelab puts
// beside its measurements: arrival curves of the gates, rate-latency service
// curves of the servers, the delay and backlog bounds between them, servers
// in series, and the empirical arrival curve of a measured list of times.
//
// Units: time in milliseconds, amounts in requests, rates in requests per
// millisecond (a rate of 100 requests/s is 0.1 here; PerMS converts).
//
// Window convention: an arrival curve alpha bounds the number of requests in
// any window of length d. Curves here are right-continuous: At(d) bounds
// every closed window [x, x+d], so At(0) is the largest batch at one instant
// (the burst). A half-open window (x, x+d] never holds more than the left
// limit, which differs only at the jumps of a staircase: the sliding log's
// N*ceil(d/L) is the half-open form of At(d) = N*(floor(d/L)+1). The bounds
// take suprema over right limits, which is what a packetized flow needs.
//
// Only the standard library is used.
package calculus

import (
	"fmt"
	"math"
)

// PerMS converts a rate in requests/s to requests/ms.
func PerMS(rps float64) float64 { return rps / 1000 }

// RPS converts a rate in requests/ms to requests/s.
func RPS(perMS float64) float64 { return perMS * 1000 }

// Curve kinds.
const (
	// KindAffine is the token bucket (r, b): alpha(d) = b + r*d. A paced
	// shaper at rate r is the affine curve with b = 1.
	KindAffine = "affine"
	// KindDual is the dual bucket: a sustained bucket (r, b) and a peak
	// bucket (M, p), min(b + r*d, p + M*d). Requests are whole, so the peak
	// bucket holds at least one (p >= 1, the TSpec's maximum packet size of
	// RFC 2212): two requests 1/M apart fill a closed window of 1/M.
	KindDual = "dual"
	// KindStaircase is Step*(floor(d/Period) + Steps0): the sliding log of N
	// per L (Step N, Steps0 1) and the fixed window (Step N, Steps0 2: two
	// full windows can meet inside one window length).
	KindStaircase = "staircase"
)

// Curve is an arrival curve of one of the lab's families; it is plain data
// so a run can store it as JSON.
type Curve struct {
	Kind string `json:"kind"`
	// BurstReq is b (affine, dual).
	BurstReq float64 `json:"burst_req,omitempty"`
	// RatePerMS is r, the long-run rate (affine, dual).
	RatePerMS float64 `json:"rate_per_ms,omitempty"`
	// PeakPerMS is M and PeakBurstReq is p (dual).
	PeakPerMS    float64 `json:"peak_per_ms,omitempty"`
	PeakBurstReq float64 `json:"peak_burst_req,omitempty"`
	// StepReq, PeriodMS and Steps0 define a staircase.
	StepReq  float64 `json:"step_req,omitempty"`
	PeriodMS float64 `json:"period_ms,omitempty"`
	Steps0   int     `json:"steps0,omitempty"`
}

// Affine is the token-bucket curve b + r*d (r in requests/ms).
func Affine(r, b float64) Curve { return Curve{Kind: KindAffine, RatePerMS: r, BurstReq: b} }

// Shaper is a leaky bucket emitting one request per 1/r ms: 1 + r*d.
func Shaper(r float64) Curve { return Affine(r, 1) }

// Dual is the dual bucket min(b + r*d, p + M*d): sustained rate r and
// burst b, peak rate M and peak burst p (usually M >= r and p <= b).
func Dual(r, b, m, p float64) Curve {
	return Curve{Kind: KindDual, RatePerMS: r, BurstReq: b, PeakPerMS: m, PeakBurstReq: p}
}

// SlidingLog is N requests per window of L ms counted exactly: at most N in
// any half-open window of length L, so N*(floor(d/L)+1) in a closed one.
func SlidingLog(n, l float64) Curve {
	return Curve{Kind: KindStaircase, StepReq: n, PeriodMS: l, Steps0: 1}
}

// FixedWindow is N requests per aligned window of L ms: a window of length
// d meets at most floor(d/L)+2 aligned windows, so up to 2N in one L.
func FixedWindow(n, l float64) Curve {
	return Curve{Kind: KindStaircase, StepReq: n, PeriodMS: l, Steps0: 2}
}

// Times is the curve of n flows that each obey c: n*alpha(d), in the same
// family (every amount scaled by n, the windows unchanged).
func (c Curve) Times(n float64) Curve {
	c.BurstReq *= n
	c.RatePerMS *= n
	c.PeakPerMS *= n
	c.PeakBurstReq *= n
	c.StepReq *= n
	return c
}

// At is the largest number of requests the curve allows in a closed window
// of length d >= 0.
func (c Curve) At(d float64) float64 {
	switch c.Kind {
	case KindAffine:
		return c.BurstReq + c.RatePerMS*d
	case KindDual:
		return math.Min(c.BurstReq+c.RatePerMS*d, c.PeakBurstReq+c.PeakPerMS*d)
	case KindStaircase:
		return c.StepReq * (math.Floor(d/c.PeriodMS) + float64(c.Steps0))
	}
	return math.Inf(1)
}

// Rate is the curve's long-run rate in requests/ms.
func (c Curve) Rate() float64 {
	switch c.Kind {
	case KindStaircase:
		return c.StepReq / c.PeriodMS
	case KindDual:
		return math.Min(c.RatePerMS, c.PeakPerMS)
	}
	return c.RatePerMS
}

// Burst is At(0): the largest batch at one instant.
func (c Curve) Burst() float64 { return c.At(0) }

// Envelope is the tightest affine curve above c (the same curve for affine;
// for the dual bucket its line of the smaller rate, usually b + r*d;
// Step*Steps0 + rate*d for a staircase).
func (c Curve) Envelope() Curve {
	switch c.Kind {
	case KindDual: // the piece with the smaller rate
		if c.PeakPerMS < c.RatePerMS || (c.PeakPerMS == c.RatePerMS && c.PeakBurstReq < c.BurstReq) {
			return Affine(c.PeakPerMS, c.PeakBurstReq)
		}
		return Affine(c.RatePerMS, c.BurstReq)
	case KindStaircase:
		return Affine(c.Rate(), c.StepReq*float64(c.Steps0))
	}
	return c
}

// corners are the window lengths in [0, upTo] where c minus a convex curve
// can reach its supremum: 0, the dual bucket's knee, the staircase's jumps
// (whose values At gives, being right-continuous), plus one jump past upTo.
func (c Curve) corners(upTo float64) []float64 {
	ds := []float64{0}
	switch c.Kind {
	case KindDual:
		// where the two lines cross, if they do at some d > 0
		if x := (c.BurstReq - c.PeakBurstReq) / (c.PeakPerMS - c.RatePerMS); x > 0 && !math.IsInf(x, 0) {
			ds = append(ds, x)
		}
	case KindStaircase:
		for k := 1.0; (k-1)*c.PeriodMS <= upTo; k++ {
			ds = append(ds, k*c.PeriodMS)
		}
	}
	return ds
}

// String writes the curve as a formula in requests and ms.
func (c Curve) String() string {
	switch c.Kind {
	case KindAffine:
		return fmt.Sprintf("%g + %g*d", c.BurstReq, c.RatePerMS)
	case KindDual:
		return fmt.Sprintf("min(%g + %g*d, %g + %g*d)", c.BurstReq, c.RatePerMS, c.PeakBurstReq, c.PeakPerMS)
	case KindStaircase:
		return fmt.Sprintf("%g*(floor(d/%g) + %d)", c.StepReq, c.PeriodMS, c.Steps0)
	}
	return "unknown curve " + c.Kind
}

// RateLatency is the service curve beta(d) = R*[d - T]+: after a latency
// of T ms the server drains at least R requests/ms.
//
// A FIFO server of c workers with fixed service S ms offers R = c/S and
// T = S, for every c >= 1. Proof sketch: requests are served in release
// order, and request k starts at max(a_k, f_{k-c}), so its finish is
// f_k = max over m >= 0 of a_{k-mc} + (m+1)*S. Take t, the first request k
// unfinished at t (f_k > t), and the m, i = k - mc achieving the maximum; with
// s just before a_i, R(s) <= i-1 and beta(t-s) < c*m (since t - a_i < (m+1)S),
// so R(s) + beta(t - s) < k - 1 = R*(t). Hence R*(t) >= inf_s R(s) + beta(t-s).
// The latency is S, not S/c: the c workers may all have just begun.
type RateLatency struct {
	RatePerMS float64 `json:"rate_per_ms"`
	LatencyMS float64 `json:"latency_ms"`
}

// Workers is the service curve of c FIFO workers of fixed service S ms.
func Workers(c int, serviceMS float64) RateLatency {
	return RateLatency{RatePerMS: float64(c) / serviceMS, LatencyMS: serviceMS}
}

// At is R*[d - T]+.
func (b RateLatency) At(d float64) float64 {
	return b.RatePerMS * math.Max(0, d-b.LatencyMS)
}

// Convolve is the min-plus convolution of rate-latency curves: servers in
// series act as one server with the smallest rate and the summed latency.
// With no curves it is the identity (infinite rate, zero latency).
func Convolve(bs ...RateLatency) RateLatency {
	out := RateLatency{RatePerMS: math.Inf(1)}
	for _, b := range bs {
		out.RatePerMS = math.Min(out.RatePerMS, b.RatePerMS)
		out.LatencyMS += b.LatencyMS
	}
	return out
}

// Stable reports whether the arrival rate is at most the service rate;
// otherwise no bound exists.
func Stable(a Curve, b RateLatency) bool { return a.Rate() <= b.RatePerMS }

// Backlog is the vertical deviation sup_d alpha(d) - beta(d): the most
// requests ever in the server. +Inf when the flow outruns the server. For
// the token bucket it is b + r*T.
func Backlog(a Curve, b RateLatency) float64 {
	_, v := BacklogAt(a, b)
	return v
}

// BacklogAt is Backlog and a window length d where it is reached (where a
// chart marks the vertical gap).
func BacklogAt(a Curve, b RateLatency) (d, v float64) {
	if !Stable(a, b) {
		return 0, math.Inf(1)
	}
	d, v = b.LatencyMS, a.At(b.LatencyMS) // beta is 0 up to T, where alpha is largest
	for _, x := range a.corners(b.LatencyMS + a.PeriodMS) {
		if g := a.At(x) - b.At(x); g > v {
			d, v = x, g
		}
	}
	return d, v
}

// Delay is the horizontal deviation sup_d inf{tau >= 0: alpha(d) <=
// beta(d + tau)}: the longest any request stays in the server (release to
// finish). +Inf when unstable. For the token bucket it is T + b/R.
func Delay(a Curve, b RateLatency) float64 {
	_, h := DelayAt(a, b)
	return h
}

// DelayAt is Delay and a window length d where it is reached: the gap runs
// from (d, alpha(d)) to (d + h, alpha(d)) on beta.
func DelayAt(a Curve, b RateLatency) (d, h float64) {
	if !Stable(a, b) {
		return 0, math.Inf(1)
	}
	if math.IsInf(b.RatePerMS, 1) {
		return 0, b.LatencyMS
	}
	// beta reaches alpha(d) at d + tau = T + alpha(d)/R, so the deviation at
	// d is T + alpha(d)/R - d; between corners alpha is linear, so the
	// supremum sits at a corner (or at infinity, excluded by stability).
	h = math.Inf(-1)
	for _, x := range a.corners(b.LatencyMS + a.PeriodMS) {
		if g := b.LatencyMS + a.At(x)/b.RatePerMS - x; g > h {
			d, h = x, g
		}
	}
	return d, math.Max(h, 0)
}

// Output is the arrival curve of an affine flow (r, b) after a rate-latency
// server: (r, b + r*T), the burst grown by what the server may hold back.
func Output(a Curve, b RateLatency) Curve {
	e := a.Envelope()
	return Affine(e.RatePerMS, e.BurstReq+e.RatePerMS*b.LatencyMS)
}

// MaxBurst is the largest burst b whose delay bound T + b/R meets a budget of
// D ms: R*(D - T), 0 when D <= T.
func MaxBurst(b RateLatency, budgetMS float64) float64 {
	return math.Max(0, b.RatePerMS*(budgetMS-b.LatencyMS))
}

// DelayBound is T + b/R, the delay bound of a burst of b (rate <= R).
func DelayBound(b RateLatency, burst float64) float64 {
	return b.LatencyMS + burst/b.RatePerMS
}

// Hop is one server of a chain.
type Hop = RateLatency

// Chain compares the two ways to bound the delay of an affine flow (r, b)
// across servers in series: Concatenated convolves the servers first (pay
// the burst once, at the slowest hop); PerHop adds per-hop bounds, each hop
// seeing the burst grown by the hops before it. +Inf when r exceeds a rate.
type Chain struct {
	ConcatenatedMS float64   `json:"concatenated_ms"`
	PerHopMS       []float64 `json:"per_hop_ms"`
	PerHopSumMS    float64   `json:"per_hop_sum_ms"`
}

// ChainBounds computes both bounds for the flow a through hops.
func ChainBounds(a Curve, hops []Hop) Chain {
	var ch Chain
	ch.ConcatenatedMS = Delay(a, Convolve(hops...))
	cur := a
	for _, h := range hops {
		d := Delay(cur, h)
		ch.PerHopMS = append(ch.PerHopMS, d)
		ch.PerHopSumMS += d
		cur = Output(cur, h)
	}
	return ch
}
