package experiments

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
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

// pathHop is a gate (with its curve, if any, and its delay bound) or a server.
type pathHop struct {
	name     string
	server   bool
	beta     calculus.RateLatency
	curve    calculus.Curve
	hasCurve bool
	shaper   bool
	delayMS  float64
	waits    bool // holds requests without a bound on the wait
	noMax    bool // a server whose service time has no maximum
}

func gateHop(s *limiter.Spec, p limiter.Params, clients int) pathHop {
	c, ok := limiter.ArrivalCurve(s, p, clients)
	d, bounded := limiter.GateDelayBoundMS(s, p)
	k := s.Kind()
	return pathHop{name: string(s.Type) + " " + limiter.FormatParams(s.Type, p), curve: c, hasCurve: ok,
		shaper: k != nil && k.Shaper, delayMS: d, waits: !bounded}
}

// serverHop is a server of c workers as the rate-latency curve of its
// longest service time S (R = c/S, T = S): FIFO start times only grow when
// a service time grows, so every request finishes no later than if each
// took S. A distribution without a maximum has no such curve.
func serverHop(s server.Spec) pathHop {
	if s.FixedService() {
		return pathHop{name: fmt.Sprintf("server %d×%g ms", s.Workers, s.ServiceMS), server: true, beta: calculus.Workers(s.Workers, s.ServiceMS)}
	}
	d := s.Option(server.OptService)
	maxMS, ok := s.MaxMS()
	if !ok {
		return pathHop{name: fmt.Sprintf("server %d×%s", s.Workers, d), server: true, noMax: true}
	}
	return pathHop{name: fmt.Sprintf("server %d×%s ≤ %g ms", s.Workers, d, maxMS), server: true, beta: calculus.Workers(s.Workers, maxMS)}
}

// NoServiceBound is the note of a point whose server's service time has no
// maximum (exponential, lognormal).
const NoServiceBound = "no bound (unbounded service time)"

// path lists the hops of a point, the run's server last.
func path(cfg *Config, spec *limiter.Spec, p limiter.Params, clients int) []pathHop {
	var hops []pathHop
	if spec.Kind().Compound() {
		for j := range spec.Stages {
			st := &spec.Stages[j]
			if st.IsServer() {
				hops = append(hops, serverHop(st.ServerSpec()))
			} else {
				hops = append(hops, gateHop(&st.Spec, spec.StageParams(j, p), clients))
			}
		}
	} else {
		hops = append(hops, gateHop(spec, p, clients))
	}
	return append(hops, serverHop(cfg.Server))
}

// shaped is what a leaky bucket of interval 1/r passes on of the curves
// known for its input: its own 1 + r*d, and each affine envelope of rate at
// most r. (Release k - m at or after t_j + m/r, j the last request released
// on arrival, gives at most alpha(d + m/r) - m <= alpha(d) in a window d.)
func shaped(curves []calculus.Curve, own calculus.Curve) []calculus.Curve {
	out := []calculus.Curve{own}
	for _, c := range curves {
		if e := c.Envelope(); e.RatePerMS <= own.RatePerMS {
			out = append(out, e)
		}
	}
	return out
}

// delayed is what a gate that holds each request at most D ms passes on of
// the curves known for its input: a release in a window [s, s+d] arrived in
// [s-D, s+d], so each curve's affine envelope shifted by D, b + r*(d + D).
func delayed(curves []calculus.Curve, delayMS float64) []calculus.Curve {
	out := make([]calculus.Curve, len(curves))
	for i, c := range curves {
		e := c.Envelope()
		out[i] = calculus.Affine(e.RatePerMS, e.BurstReq+e.RatePerMS*delayMS)
	}
	return out
}

// computeBounds walks the path; the measured values are filled by the caller.
func computeBounds(hops []pathHop) Bounds {
	last := hops[len(hops)-1]
	b := Bounds{Beta: last.beta}
	var curves, firstCurves []calculus.Curve
	var servers []calculus.RateLatency
	seenServer, gateAfterServer, anyCurve := false, false, false
	gatesBefore, sum := 0.0, 0.0
	chain := len(hops) > 2
	for i, h := range hops {
		if !h.server {
			if h.waits {
				b.Note = "unbounded gate delay (the gate never refuses)"
				b.Hops = nil
				return b
			}
			if seenServer {
				gateAfterServer = true
			}
			if h.delayMS > 0 && !h.shaper {
				curves = delayed(curves, h.delayMS)
			}
			if h.hasCurve {
				anyCurve = true
				if h.shaper {
					curves = shaped(curves, h.curve)
				} else {
					curves = append(curves, h.curve)
				}
			}
			sum += h.delayMS
			if !seenServer {
				gatesBefore += h.delayMS
			}
			b.Hops = append(b.Hops, HopBound{h.name, h.delayMS})
			continue
		}
		if h.noMax {
			b.Note = NoServiceBound
			b.Hops = nil
			return b
		}
		if !seenServer {
			firstCurves = append([]calculus.Curve(nil), curves...)
			seenServer = true
		}
		servers = append(servers, h.beta)
		best, bestAt := math.Inf(1), -1
		for k, c := range curves {
			if d := calculus.Delay(c, h.beta); d < best {
				best, bestAt = d, k
			}
		}
		if bestAt < 0 {
			b.Note = "unbounded (r > R)"
			if !anyCurve {
				b.Note = "no arrival curve"
			}
			b.Hops = nil
			return b
		}
		sum += best
		b.Hops = append(b.Hops, HopBound{h.name, best})
		if i == len(hops)-1 {
			alpha := curves[bestAt]
			b.Alpha = &alpha
			b.SojournBoundMS = best
			b.BacklogBound = math.Inf(1)
			for _, c := range curves {
				b.BacklogBound = math.Min(b.BacklogBound, calculus.Backlog(c, h.beta))
			}
			break
		}
		var next []calculus.Curve
		for _, c := range curves {
			if calculus.Stable(c, h.beta) {
				next = append(next, calculus.Output(c, h.beta))
			}
		}
		curves = next
	}
	b.Bounded = true
	b.PerHopSumMS = sum
	b.GateDelayBoundMS = sum - b.SojournBoundMS
	b.EndToEndBoundMS = sum
	if !gateAfterServer {
		conv := calculus.Convolve(servers...)
		best := math.Inf(1)
		for _, c := range firstCurves {
			best = math.Min(best, calculus.Delay(c, conv))
		}
		if !math.IsInf(best, 1) {
			b.ConcatenatedMS = gatesBefore + best
			b.EndToEndBoundMS = math.Min(b.EndToEndBoundMS, b.ConcatenatedMS)
		}
	}
	if !chain {
		b.Hops = nil
	}
	return b
}

// pointBounds computes the bounds of a point and puts the measurements
// beside them. A gate with no arrival curve (none, admission) gets no
// bounds, only a note saying so.
func pointBounds(cfg *Config, spec *limiter.Spec, p limiter.Params, clients int, m *Metrics, gateMaxMS, endToEndMaxMS float64) *Bounds {
	b := computeBounds(path(cfg, spec, p, clients))
	if b.Note == "no arrival curve" {
		b.Note = fmt.Sprintf("no arrival curve (%s)", spec.Type)
	}
	b.BacklogMax = m.InSystemMax
	b.SojournMaxMS = m.ServerSojournMaxMS
	b.GateDelayMaxMS = gateMaxMS
	b.EndToEndMaxMS = endToEndMaxMS
	return &b
}

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
}
