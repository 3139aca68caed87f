package experiments

import (
	"github.com/ratelab/ratelab/experiments/calculus"
)

// Bounds put the network-calculus bounds of one point beside what the point
// measured (see package calculus; times in ms, amounts in requests).
//
// The path of a request is the point's gate (or a chain's stages) and then
// the run's server. Every gate with an arrival curve adds it to the curves
// known for the flow; a server of c workers of S ms is the rate-latency
// curve R = c/S, T = S (S the longest service time of a distribution; one
// without a maximum gives no bound, Note NoServiceBound). At each server the delay bound is the smallest
// horizontal deviation over the known curves with rate r <= R; after it the
// curves become their outputs (r, b + r*T). A leaky bucket holds a request at
// most (queue-1)/rate; policers hold none. A gate that holds requests
// without being a pacer (Kind.Shaper false, a DelayBoundMS D > 0: the
// library gates that wait) may bunch what it holds, so the curves of its
// input pass it shifted by D, alpha(d + D), beside its own. When no curve has
// r <= R at some server the point is unbounded: Bounded is false and Note
// says why.
//
// Bounds, with the measured values beside them:
//   - backlog: requests at the run's server (waiting or in service), seen
//     at releases: Metrics.InSystemMax <= sup(alpha - beta), b + r*T;
//   - sojourn: release to finish at the run's server:
//     Metrics.ServerSojournMaxMS <= T + b/R;
//   - gate delay: arrival to release (a chain's hops before the run's server);
//   - end to end: arrival to finish, the smaller of the per-hop sum and,
//     when no gate follows a server, the concatenated bound: gate delays
//     plus the horizontal deviation from the convolution of the servers
//     (smallest rate, summed latencies: the burst is paid once).
//
// Measured maxima are unrounded, unlike the whole-ms percentiles.
type Bounds struct {
	// Alpha is the curve of the flow entering the run's server that gave
	// the sojourn bound (nil without one); Beta is that server's curve.
	Alpha *calculus.Curve      `json:"alpha,omitempty"`
	Beta  calculus.RateLatency `json:"beta"`
	// Bounded is false when there is no bound; Note then says why, for
	// example "unbounded (r > R)" or "no arrival curve (admission)".
	Bounded bool   `json:"bounded"`
	Note    string `json:"note,omitempty"`

	BacklogBound     float64 `json:"backlog_bound"`
	SojournBoundMS   float64 `json:"sojourn_bound_ms"`
	GateDelayBoundMS float64 `json:"gate_delay_bound_ms"`
	EndToEndBoundMS  float64 `json:"end_to_end_bound_ms"`
	// ConcatenatedMS is the pay-bursts-once bound (0 when a gate follows a
	// server, which it does not cover); PerHopSumMS adds the hops' bounds.
	ConcatenatedMS float64    `json:"concatenated_ms"`
	PerHopSumMS    float64    `json:"per_hop_sum_ms"`
	Hops           []HopBound `json:"hops,omitempty"` // chains: every hop

	BacklogMax     int     `json:"backlog_max"`
	SojournMaxMS   float64 `json:"sojourn_max_ms"`
	GateDelayMaxMS float64 `json:"gate_delay_max_ms"`
	EndToEndMaxMS  float64 `json:"end_to_end_max_ms"`
}

// HopBound is one hop of a path and the bound on the time a request spends
// in it.
type HopBound struct {
	Hop     string  `json:"hop"` // "token-bucket rate_rps=100 burst=20", "server 2×8 ms"
	BoundMS float64 `json:"bound_ms"`
}

// Tightness is measured / bound (0 without a bound).
func Tightness(measured, bound float64) float64 {
	if bound <= 0 {
		return 0
	}
	return measured / bound
}

// NoServiceBound is the note of a point whose server's service time has no
// maximum (exponential, lognormal).
const NoServiceBound = "no bound (unbounded service time)"

// MaxCurveArrivals is the largest workload whose empirical arrival curves
// are kept: they need every release time of a point in memory.
const MaxCurveArrivals = 4_000_000

// ArrivalCurves are the empirical arrival curves of a run (see
// calculus.Empirical): for each window length of GridMS, the most offered
// requests in any window that long. Each point's OutputCurve is the same for
// its releases into the run's server.
type ArrivalCurves struct {
	GridMS  []float64 `json:"grid_ms"`
	Offered []int     `json:"offered"`
	// Loads are, in a run of several generated loads (loads, swept
	// workload fields, seeds, replications), each load's own offered curve
	// on its own grid (calculus.Grid of its duration), indexed by
	// Config.GeneratedLoadOf; nil for a load the run streamed. Offered is
	// load 0's.
	Loads [][]int `json:"loads,omitempty"`
}

// OfferedOf is the offered curve of the load point p ran (nil when the
// run did not keep it: a streamed load, or a run stored before Loads).
func (ac *ArrivalCurves) OfferedOf(cfg *Config, p *Point) []int {
	g := cfg.GeneratedLoadOf(p)
	switch {
	case g < len(ac.Loads):
		return ac.Loads[g]
	case g == 0:
		return ac.Offered
	}
	return nil
}
