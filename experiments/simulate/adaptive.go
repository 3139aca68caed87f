package simulate

import (
	"errors"
	"math"
	"slices"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// adaptiveTrace runs an adaptive concurrency gate (limiter.Adaptive) and
// records, per series window, its limit, in-flight maximum, RTT samples
// and estimates, for experiments.AdaptiveMetrics (finishPoint files them).
// pointGateWith puts every adaptive gate behind one, outside a test's
// wrapper of it (Switches.Gate): the trace offers to g, the gate as the
// point runs it, tells completions and syncs to g's hooks as the loop
// would (obs, syn: collectHooks, so a wrapper's parts hear each completion
// once), and reads the limit from a, the adaptive gate itself. hooksOf
// finds it and the point's Instruments hold it until the point is filed.
type adaptiveTrace struct {
	g        limiter.Gate
	a        limiter.Adaptive
	obs      observers
	syn      syncers
	windowMS float64
	limit    []int32
	inflight []int32
	rttSum   []float64
	rttN     []int32
	est      [][]int32
	buf      []float64
	// the limit's changes: its value from each time on
	times  []float64
	values []int32
}

// adaptiveSyncTrace is an adaptiveTrace whose gate has timers.
type adaptiveSyncTrace struct {
	*adaptiveTrace
}

func (g adaptiveSyncTrace) NextSyncMS() float64 { return g.syn.NextSyncMS() }
func (g adaptiveSyncTrace) Sync(t float64) {
	g.syn.Sync(t)
	g.note(t)
}

// newAdaptiveTrace traces a through g (a itself, or a test's wrapper of it).
func newAdaptiveTrace(g limiter.Gate, a limiter.Adaptive) limiter.Gate {
	tr := &adaptiveTrace{g: g, a: a}
	tr.times, tr.values = []float64{0}, []int32{int32(a.LimitNow())}
	collectHooks(g, &tr.obs, &tr.syn)
	if len(tr.syn) > 0 {
		return adaptiveSyncTrace{tr}
	}
	return tr
}

func (g *adaptiveTrace) Offer(t float64, c int32) (float64, bool) {
	r, ok := g.g.Offer(t, c)
	g.note(t)
	return r, ok
}

func (g *adaptiveTrace) Complete(c limiter.Completion) {
	g.obs.Complete(c)
	if g.windowMS > 0 {
		k := g.window(c.DoneMS)
		for len(g.rttSum) <= k {
			g.rttSum, g.rttN = append(g.rttSum, 0), append(g.rttN, 0)
		}
		g.rttSum[k] += c.DoneMS - c.ReleaseMS
		g.rttN[k]++
	}
	g.note(c.DoneMS)
}

// NextAdmitMS is the wrapped gate's advice when it gives one, else t.
func (g *adaptiveTrace) NextAdmitMS(t float64, c int32) float64 {
	if a, ok := g.g.(limiter.Advisor); ok {
		return a.NextAdmitMS(t, c)
	}
	return t
}

// LimitNow, InFlight, Estimates and EstimateNames are the gate's.
func (g *adaptiveTrace) LimitNow() int                     { return g.a.LimitNow() }
func (g *adaptiveTrace) InFlight() int                     { return g.a.InFlight() }
func (g *adaptiveTrace) Estimates(dst []float64) []float64 { return g.a.Estimates(dst) }
func (g *adaptiveTrace) EstimateNames() []string           { return g.a.EstimateNames() }

func (g *adaptiveTrace) window(t float64) int { return int(math.Floor(t / g.windowMS)) }

// note records the gate's state after an event at t.
func (g *adaptiveTrace) note(t float64) {
	l := int32(g.a.LimitNow())
	if l != g.values[len(g.values)-1] {
		g.times, g.values = append(g.times, t), append(g.values, l)
	}
	if g.windowMS == 0 {
		return
	}
	k := g.window(t)
	for len(g.limit) <= k {
		g.limit, g.inflight = append(g.limit, 0), append(g.inflight, 0)
		g.est = append(g.est, nil)
	}
	g.limit[k] = l
	g.inflight[k] = max(g.inflight[k], int32(g.a.InFlight()))
	g.buf = g.a.Estimates(g.buf[:0])
	if len(g.buf) > 0 {
		if g.est[k] == nil {
			g.est[k] = make([]int32, len(g.buf))
		}
		for i, v := range g.buf {
			g.est[k][i] = int32(math.Round(v * 1000))
		}
	}
}

// adaptiveChangeWindowMS is the span over which a converged limit stays
// within ±10% of its median.
const adaptiveChangeWindowMS = 10_000

// metrics are the trace's measures at the point of cfg.
func (g *adaptiveTrace) metrics(cfg *experiments.Config) *experiments.AdaptiveMetrics {
	dur := cfg.Workload.DurationMS
	w := g.windowMS
	n := int(math.Ceil(dur / w))
	am := &experiments.AdaptiveMetrics{LimitFinal: g.a.LimitNow(), Limit: make([]int32, n), Ideal: make([]int32, n),
		InFlightMax: make([]int32, n), Samples: make([]int32, n), RTTMeanUS: make([]int32, n)}
	// The limit at each window's end: the last value noted in it, else the one before.
	cur := g.values[0]
	for k := range n {
		if k < len(g.limit) && g.limit[k] != 0 {
			cur = g.limit[k]
		}
		am.Limit[k] = cur
		am.Ideal[k] = int32(cfg.Server.IdealConcurrency(float64(k) * w))
		if k < len(g.inflight) {
			am.InFlightMax[k] = g.inflight[k]
		}
		if k < len(g.rttN) && g.rttN[k] > 0 {
			am.Samples[k] = g.rttN[k]
			am.RTTMeanUS[k] = int32(math.Round(g.rttSum[k] / float64(g.rttN[k]) * 1000))
		}
	}
	if names := g.a.EstimateNames(); len(names) > 0 {
		var last []int32
		for i, name := range names {
			vals := make([]int32, n)
			last = nil
			for k := range n {
				if k < len(g.est) && g.est[k] != nil {
					last = g.est[k]
				}
				if last != nil {
					vals[k] = last[i]
				}
			}
			am.Estimates = append(am.Estimates, experiments.AdaptiveEstimate{Name: name, Values: vals})
		}
	}
	// Time-weighted means of the limit and the ideal concurrency.
	sum := 0.0
	for i, t := range g.times {
		if t >= dur {
			break
		}
		end := dur
		if i+1 < len(g.times) {
			end = min(dur, g.times[i+1])
		}
		sum += float64(g.values[i]) * (end - t)
	}
	am.LimitMean = sum / dur
	ideal := 0.0
	for k := range n {
		ideal += float64(am.Ideal[k]) * (min(dur, float64(k+1)*w) - float64(k)*w)
	}
	am.IdealMean = ideal / dur
	// Convergence after each change.
	changes := adaptiveChanges(cfg)
	converge, reconverge := math.NaN(), math.NaN()
	lastFrom := -1
	for ci, c := range changes {
		next := dur
		if ci+1 < len(changes) {
			next = changes[ci+1]
		}
		from := convergedFrom(am.Limit, w, c, next)
		if ci == 0 {
			if from >= 0 {
				converge = float64(from)*w - c
			}
		} else if from < 0 {
			reconverge = math.Inf(1)
		} else if d := float64(from)*w - c; math.IsNaN(reconverge) || d > reconverge {
			reconverge = d
		}
		if ci == len(changes)-1 {
			lastFrom = from
		}
	}
	am.ConvergeMS, am.ReconvergeMS = finite(converge), finite(reconverge)
	if lastFrom >= 0 {
		am.LimitSD = finite(stdDev(am.Limit[lastFrom:]))
	}
	return am
}

// convergedFrom is the first window at or after time c (and before next)
// whose limit and those of the windows of the following 10 s (to next at
// most, and at least min(10 s, half the time from c to next) of them) lie
// within ±10% of their median; -1: none.
func convergedFrom(limit []int32, w, c, next float64) int {
	first := int(math.Ceil(c / w))
	last := min(len(limit), int(math.Ceil(next/w))) // windows before next
	span := int(math.Round(adaptiveChangeWindowMS / w))
	minSpan := max(1, int(math.Round(min(adaptiveChangeWindowMS, (next-c)/2)/w)))
	buf := make([]int32, 0, span)
	for k := first; k < last; k++ {
		end := min(k+span, last)
		if end-k < minSpan {
			return -1
		}
		buf = append(buf[:0], limit[k:end]...)
		slices.Sort(buf)
		med := float64(buf[len(buf)/2])
		if float64(buf[0]) >= 0.9*med && float64(buf[len(buf)-1]) <= 1.1*med {
			return k
		}
	}
	return -1
}

// adaptiveChanges are the times the point's conditions change: 0, each
// degrade event's start and end and each workload part's start and end
// inside the run, in order.
func adaptiveChanges(cfg *experiments.Config) []float64 {
	dur := cfg.Workload.DurationMS
	ts := []float64{0}
	add := func(t float64) {
		if t > 0 && t < dur {
			ts = append(ts, t)
		}
	}
	for _, d := range cfg.Server.Degrade {
		add(d.FromMS)
		add(d.ToMS)
	}
	for _, p := range cfg.Workload.Parts {
		add(p.StartMS)
		if p.EndMS != nil {
			add(*p.EndMS)
		}
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

func stdDev(xs []int32) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	mean := 0.0
	for _, x := range xs {
		mean += float64(x)
	}
	mean /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (float64(x) - mean) * (float64(x) - mean)
	}
	return math.Sqrt(v / float64(len(xs)))
}

// finite is x, or nil when it is NaN or infinite (an empty cell).
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// watch makes the point's adaptive trace (hooksOf found it) record in the
// series windows of the point, and holds it until finishPoint files it.
func (in *Instruments) watch(h *gateHooks) {
	if h.trace != nil {
		h.trace.windowMS = in.seriesWindowMS
		in.trace = h.trace
	}
}

// errShapedQueue: the queue model does not model a server's knee or
// degrade events (server/shape.go), which validation allows only on the
// plain FIFO server; a test switch that forces the queue model on one
// gets this error rather than another server's numbers.
var errShapedQueue = errors.New("the queue model does not model a knee or degrade events (the plain FIFO server does)")
