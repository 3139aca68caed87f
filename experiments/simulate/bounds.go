package simulate

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
)

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

// path lists the hops of a point, the run's server last.
func path(cfg *experiments.Config, spec *limiter.Spec, p limiter.Params, clients int) []pathHop {
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
func computeBounds(hops []pathHop) experiments.Bounds {
	last := hops[len(hops)-1]
	b := experiments.Bounds{Beta: last.beta}
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
			b.Hops = append(b.Hops, experiments.HopBound{Hop: h.name, BoundMS: h.delayMS})
			continue
		}
		if h.noMax {
			b.Note = experiments.NoServiceBound
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
		b.Hops = append(b.Hops, experiments.HopBound{Hop: h.name, BoundMS: best})
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
// bounds, only a note saying so; so does a server that does not serve in
// FIFO order (fifo false), whatever the gate.
func pointBounds(cfg *experiments.Config, spec *limiter.Spec, p limiter.Params, clients int, m *experiments.Metrics, gateMaxMS, endToEndMaxMS float64, fifo bool) *experiments.Bounds {
	var b experiments.Bounds
	if fifo {
		b = computeBounds(path(cfg, spec, p, clients))
	} else {
		b.Note = notFIFONote(cfg.Server.Option(server.OptDiscipline))
	}
	if b.Note == "no arrival curve" {
		b.Note = fmt.Sprintf("no arrival curve (%s)", spec.Type)
	}
	b.BacklogMax = m.InSystemMax
	b.SojournMaxMS = m.ServerSojournMaxMS
	b.GateDelayMaxMS = gateMaxMS
	b.EndToEndMaxMS = endToEndMaxMS
	return &b
}

// flowBounds sets each client's own bound (experiments.FlowBound) when
// the point's gate keys its clients (Kind.FlowCurves: per-client and
// hierarchical token buckets) and stands alone before a FIFO server whose
// service time has a maximum: the clients share that server, each with the
// others as cross traffic (calculus.FIFODelay, calculus.BlindDelay).
// FIFO serves every request within the aggregate's own bound too, so the
// FIFO bound is the smaller of the residual family's and the aggregate's
// (the gate's curve; theta is then T + b/R): a hierarchical bucket's client
// may take all the others leave, and its own curve and theirs are each the
// global bucket's. A blind bound that does not exist is 0 (an empty cell).
func flowBounds(cfg *experiments.Config, spec *limiter.Spec, p limiter.Params, weights []float64, clients []experiments.ClientResult) {
	k := spec.Kind()
	if k == nil || k.FlowCurves == nil || k.Compound() || len(clients) == 0 || cfg.Server.Option(server.OptDiscipline) != server.FIFO {
		return
	}
	srv := serverHop(cfg.Server)
	if srv.noMax {
		return
	}
	own, cross := k.FlowCurves(spec, p, weights)
	total, _ := limiter.ArrivalCurve(spec, p, len(clients))
	aggregate, aggregateTheta := calculus.FIFODelay(total, calculus.Affine(0, 0), srv.beta)
	for i := range clients {
		d, theta := calculus.FIFODelay(own[i], cross[i], srv.beta)
		if aggregate < d {
			d, theta = aggregate, aggregateTheta
		}
		if math.IsInf(d, 1) {
			clients[i].Flow = &experiments.FlowBound{Note: "unbounded (r > R)"}
			continue
		}
		f := &experiments.FlowBound{FIFOBoundMS: d, ThetaMS: theta}
		if blind := calculus.BlindDelay(own[i], cross[i], srv.beta); !math.IsInf(blind, 1) {
			f.BlindBoundMS = blind
		}
		clients[i].Flow = f
	}
}

// notFIFONote is the note of a point whose server serves in another order
// than FIFO (discipline lifo, lifo-tail-drop, ...): the service curve gives
// a delay bound for FIFO order only, and out of order a request can wait
// as long as newer ones keep coming.
func notFIFONote(discipline string) string {
	return fmt.Sprintf("no bound (%s server: the delay bound holds for FIFO order only)", discipline)
}
