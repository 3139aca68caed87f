package experiments

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// simulatePoint runs one point on its server, client policy and workload
// (variants.go, policies.go): the client model when its clients have
// behaviour (simulateClients, or simulateClientsQueue on a server with
// queue settings), else the forward pass (simulate) when its server
// is the plain one, else the queue model (simulateQueue); then it reports
// the percentiles by the config's rule.
func simulatePoint(ctx context.Context, cfg *Config, a *workload.Arrivals, classes []uint8, in *instruments, pt *Point) error {
	pc := cfg.pointConfig(pt)
	spec := &cfg.Limiters[pt.LimiterIndex]
	var err error
	if cfg.usesClients(pt.Policy, pt.Load) {
		if clientsQueueForAll.Load() || cfg.usesQueue(pt.Server) {
			err = simulateClientsQueue(ctx, pc, a, classes, spec, pt.Params, in, pt)
		} else {
			err = simulateClients(ctx, pc, a, spec, pt.Params, in, pt)
		}
	} else if queueForAll.Load() || cfg.usesQueue(pt.Server) {
		err = simulateQueue(ctx, pc, a, classes, spec, pt.Params, in, pt)
	} else {
		var f *fwd
		if f, err = newFwd(ctx, pc, a.Clients, len(a.Groups), spec, pt.Params, in, pt, a.Len() <= MaxCurveArrivals, a.Len()); err == nil {
			f.svc = a.ServiceMS
			if err = f.feed(a.T, a.Client); err == nil {
				f.finish()
			}
		}
	}
	if err != nil {
		return err
	}
	pc.applyPercentiles(pt)
	return nil
}

// applyPercentiles reports every percentile of the point by the config's
// rule: the nearest-rank value, or the top of its bucket in an HdrHistogram
// of 3 significant digits (the maxima too, as HdrHistogram reports them).
func (c *Config) applyPercentiles(pt *Point) {
	if c.Rule("metrics.percentiles") == metrics.PercentilesExact {
		return
	}
	m := &pt.Metrics
	ds := []*Delays{&m.GateDelay, &m.ServerWait, &m.Sojourn, m.ShedWait}
	for k := range m.Classes {
		ds = append(ds, &m.Classes[k].Sojourn)
	}
	for _, d := range ds {
		if d != nil {
			d.P50, d.P99, d.Max = metrics.HdrTop(d.P50), metrics.HdrTop(d.P99), metrics.HdrTop(d.Max)
		}
	}
	for w, v := range pt.Series.SojournP99 {
		pt.Series.SojournP99[w] = int32(metrics.HdrTop(int(v)))
	}
}

// queueForAll runs every point through the queue model (a test's switch:
// with the plain server it must measure what the forward pass does).
var queueForAll atomic.Bool

// queueBufs are a worker's reusable instruments of the queue model.
type queueBufs struct {
	shedWait     metrics.Histogram
	classSojourn []*metrics.Histogram
	finish       []int32  // sojourns of the requests finishing in one window
	finishes     []uint64 // variable service: window<<32 | sojourn of every finish
}

// queueRun measures one point of the queue model: the server reports each
// request's outcome to it (server.Sink).
type queueRun struct {
	a          *workload.Arrivals
	classes    []uint8
	in         *instruments
	s          *Series
	m          *Metrics
	scoreEnd   float64 // requests that arrived after it are not measured
	serviceMS  float64
	deadlineMS float64
	durationMS float64
	windowMS   float64 // the series'

	bufs    *queueBufs
	classOK []int

	served, shed        int
	serverSojournMax    float64
	endToEndMax         float64
	variable            bool // service times vary: finishes come out of order
	finishWindow        int  // window of the buffered finishes (bufs.finish)
	maxFinishWindows    int
	lastFinish          float64
	finishOrderViolated bool
}

// startBufs readies the worker's queue-model instruments for a point and,
// with classes, the histograms and series of its nclass classes (over
// windows); it returns the count of each class's successes, to fill.
func (r *queueRun) startBufs(in *instruments, classes bool, nclass, windows int) []int {
	if in.queue == nil {
		in.queue = new(queueBufs)
	}
	r.bufs = in.queue
	r.bufs.shedWait.Reset()
	r.bufs.finish = r.bufs.finish[:0]
	r.bufs.finishes = r.bufs.finishes[:0]
	if !classes {
		return nil
	}
	for len(r.bufs.classSojourn) < nclass {
		r.bufs.classSojourn = append(r.bufs.classSojourn, new(metrics.Histogram))
	}
	for k := range nclass {
		r.bufs.classSojourn[k].Reset()
	}
	r.s.Classes = make([]ClassSeries, nclass)
	for k := range r.s.Classes {
		r.s.Classes[k] = ClassSeries{Offered: make([]int32, windows), Success: make([]int32, windows)}
	}
	return make([]int, nclass)
}

func (r *queueRun) scored(id int32) bool { return r.a.T[id] <= r.scoreEnd }

// Served measures a request served from start to finish.
func (r *queueRun) Served(id int32, release, start, finish float64) {
	t := r.a.T[id]
	r.finishAt(t, finish)
	if !r.scored(id) {
		return
	}
	r.served++
	r.in.wait.Record(start - release)
	svc := r.serviceMS
	if r.a.ServiceMS != nil {
		svc = r.a.ServiceMS[id]
	}
	sojourn := max(svc, metrics.RoundHalfUp(finish-t))
	r.in.sojourn.Record(sojourn)
	onTime := sojourn <= r.deadlineMS
	if onTime {
		r.m.OnTime++
	} else {
		r.m.Late++
	}
	if d := finish - release; d > r.serverSojournMax {
		r.serverSojournMax = d
	}
	r.endToEndMax = max(r.endToEndMax, finish-t)
	if r.classes != nil {
		k := r.classes[id]
		r.bufs.classSojourn[k].Record(sojourn)
		if onTime {
			r.classOK[k]++
			r.s.Classes[k].Success[int(metrics.WindowIndex(t, r.windowMS))]++
		}
	}
}

// Shed measures a request the server shed at at.
func (r *queueRun) Shed(id int32, at float64, _ server.Why) {
	if !r.scored(id) {
		return
	}
	r.shed++
	r.bufs.shedWait.Record(float64(metrics.ClampMS(at - r.a.T[id])))
}

// finishAt buffers a served request that arrived at t and finished at
// finish for the p99 of its finish window (SojournP99): all of them, the
// hangover is the server's, whoever sent the work. (For 100 ms windows the
// exact index is the seed's trunc(finish / 100.0).) With variable service
// finishes overtake each other: they are kept and sorted at the end
// (sortFinishes).
func (r *queueRun) finishAt(t, finish float64) {
	if finish < r.lastFinish && !r.variable {
		r.finishOrderViolated = true
	}
	r.lastFinish = finish
	if w := int(metrics.WindowIndex(finish, r.windowMS)); w < r.maxFinishWindows {
		switch {
		case r.variable:
			r.bufs.finishes = append(r.bufs.finishes, uint64(w)<<32|uint64(metrics.ClampMS(finish-t)))
		default:
			if w != r.finishWindow {
				r.flushFinishes()
				r.finishWindow = w
			}
			r.bufs.finish = append(r.bufs.finish, metrics.ClampMS(finish-t))
		}
	}
}

// sortFinishes writes the p99 of every window from the kept finishes
// (variable service).
func (r *queueRun) sortFinishes() {
	keys := r.bufs.finishes
	slices.Sort(keys)
	for i := 0; i < len(keys); {
		w := int(keys[i] >> 32)
		buf := r.bufs.finish[:0]
		for ; i < len(keys) && int(keys[i]>>32) == w; i++ {
			buf = append(buf, int32(uint32(keys[i])))
		}
		r.bufs.finish, r.finishWindow = buf, w
		r.flushFinishes()
	}
	r.bufs.finishes = keys[:0]
}

// flushFinishes writes the p99 of the buffered window.
func (r *queueRun) flushFinishes() {
	buf := r.bufs.finish
	if len(buf) == 0 {
		return
	}
	for len(r.s.SojournP99) <= r.finishWindow {
		r.s.SojournP99 = append(r.s.SojournP99, 0)
	}
	slices.Sort(buf)
	r.s.SojournP99[r.finishWindow] = metrics.RankValue(buf, 99)
	r.bufs.finish = buf[:0]
}

// simulateQueue replays the arrivals through one gate into the queue
// model (server.Queue) and measures the point as simulate does, with the
// outcomes only the queue model has: requests shed by the server and how
// long they waited, the served p99 per finish window, and the classes.
// Under the scoring rule "end-minus-deadline" only the arrivals at or
// before duration - deadline are measured; the others still load the
// gate and the server.
func simulateQueue(ctx context.Context, cfg *Config, a *workload.Arrivals, classes []uint8, spec *limiter.Spec, params limiter.Params, in *instruments, pt *Point) error {
	durationMS := cfg.Workload.DurationMS
	serviceMS, deadlineMS := cfg.Server.ServiceMS, cfg.Server.DeadlineMS
	windowMS := cfg.SeriesWindow()
	windows := int(metrics.WindowCount(durationMS, windowMS))
	s := Series{
		Offered:     make([]int32, windows),
		Rejected:    make([]int32, windows),
		Released:    make([]int32, windows),
		InSystemMax: make([]int32, windows),
	}
	var m Metrics
	r := &queueRun{
		a: a, classes: classes, in: in, s: &s, m: &m,
		scoreEnd:   cfg.ScoreEndMS(deadlineMS),
		serviceMS:  serviceMS,
		deadlineMS: deadlineMS,
		durationMS: durationMS,
		variable:   a.ServiceMS != nil,
		windowMS:   windowMS,
	}
	nclass := len(cfg.Classes)
	r.classOK = r.startBufs(in, classes != nil, nclass, windows)
	srv := server.NewQueue(cfg.Server, durationMS, nclass, r)
	gate, err := pointGate(spec, params, a.Clients, srv)
	if err != nil {
		return err
	}
	in.startPoint(cfg)
	horizonMS := cfg.releaseHorizonMS(spec, params)
	r.maxFinishWindows = int(math.Ceil(horizonMS / windowMS))

	nc := len(a.Clients)
	clients := make([]ClientResult, nc)
	var fair fairWindows
	fair.start(in, nc, cfg.Metrics.FairnessWindowMS, durationMS)

	lastRelease := math.Inf(-1)
	var gateMax float64
	rel := newReleaseTally(in, windowMS, len(a.T) <= MaxCurveArrivals, len(a.T))
	arrivals := 0
	arrivalWindow := metrics.NewWindowCursor(windowMS)
	for i, t := range a.T {
		if i&(1<<20-1) == 0 && i > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		scored := t <= r.scoreEnd
		c := a.Client[i]
		w := int(arrivalWindow.Index(t))
		s.Offered[w]++
		if scored {
			arrivals++
			clients[c].Offered++
			if classes != nil {
				s.Classes[classes[i]].Offered[w]++
			}
		}
		release, ok := gate.Offer(t, c)
		if !ok {
			s.Rejected[w]++
			continue
		}
		if release < lastRelease || !(release < horizonMS) {
			return releaseError(spec, release, lastRelease, durationMS)
		}
		lastRelease = release
		if scored {
			clients[c].Admitted++
			in.gate.Record(release - t)
			gateMax = max(gateMax, release-t)
		}
		if fair.on && scored {
			fair.admit(t, int(c))
		}
		var class uint8
		if classes != nil {
			class = classes[i]
		}
		svc := serviceMS
		if a.ServiceMS != nil {
			svc = a.ServiceMS[i]
		}
		srv.OfferFor(int32(i), class, t, release, svc)
		rel.add(&s, in, release, srv.InSystem(release))
	}
	srv.Finish()
	r.flushFinishes()
	if r.variable {
		r.sortFinishes()
	}
	if r.finishOrderViolated {
		return fmt.Errorf("the queue server finished requests out of order") // cannot happen: fixed service, FIFO picks
	}

	seconds := cfg.scoreSeconds(deadlineMS)
	m.Arrivals = arrivals
	m.Admitted = in.gate.Count()
	m.Rejected = m.Arrivals - m.Admitted
	m.Served = r.served
	m.Shed = r.shed
	m.measureCommon(in, seconds, &rel, r.serverSojournMax)
	if m.Arrivals > 0 {
		m.RejectPct = 100.0 * float64(m.Rejected) / float64(m.Arrivals)
		m.ServedLatePct = 100.0 * float64(m.Late) / float64(m.Arrivals)
		m.ShedPct = 100.0 * float64(m.Shed) / float64(m.Arrivals)
	}
	if r.served > 0 {
		m.WastedPct = 100.0 * float64(m.Late) / float64(r.served)
	}
	sw := delays(&r.bufs.shedWait)
	m.ShedWait = &sw
	m.UtilizationPct = math.Min(100, 100*float64(r.served)*serviceMS/(durationMS*float64(cfg.Server.Workers)))
	if classes != nil {
		cfg.classMetrics(&m, &s, r.classOK, r.bufs.classSojourn, seconds)
	}

	m.Recovery = cfg.recovery(&s, windowMS)
	finishPoint(cfg, pt, spec, params, in, &m, &s, clients, &fair, len(a.Groups), a.GroupOf, gateMax, r.endToEndMax,
		cfg.Server.Option(server.OptDiscipline) == server.FIFO, rel.keep)
	return nil
}

// classMetrics measures every class of a point from its series (offered
// per window), its successes and its sojourn histograms, and whether the
// point meets the SLO (the queue model and simulateClientsQueue).
func (c *Config) classMetrics(m *Metrics, s *Series, classOK []int, sojourn []*metrics.Histogram, seconds float64) {
	nclass := len(c.Classes)
	m.Classes = make([]ClassMetrics, nclass)
	for k := range m.Classes {
		cm := &m.Classes[k]
		for _, x := range s.Classes[k].Offered {
			cm.Offered += int(x)
		}
		cm.Success = classOK[k]
		cm.OfferedRPS = float64(cm.Offered) / seconds
		cm.SuccessPct = 100
		if cm.Offered > 0 {
			cm.SuccessPct = 100.0 * float64(cm.Success) / float64(cm.Offered)
		}
		cm.Sojourn = delays(sojourn[k])
	}
	if c.SLO != nil {
		met := m.Classes[c.ClassIndex(c.SLO.Class)].SuccessPct >= c.SLO.SuccessPct
		m.SLOMet = &met
	}
}
