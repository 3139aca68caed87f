// Package simulate runs one point of a sweep: its gate in front of its
// server under its clients' behaviour, over its load's arrivals, measured
// into the point's Metrics, Series, Bounds and Recovery. The forward pass
// (ForwardPass) is the fast path of a plain FIFO server without client
// behaviour, fed the arrivals a batch at a time; every other point runs in
// one event loop (loop.go). It also draws the requests' classes and
// service times of a load, and replays two points' decisions side by side
// (DiffDecisions).
package simulate

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// Switches are a test's settings of a point's simulation: none changes
// what it measures (the tests that set them check it), each makes another
// path run it. The zero value runs as the engine does.
type Switches struct {
	// Model runs points by another model than their own (Point).
	Model ModelSwitch
	// Gate, when set, stands for each point's gate made for occ (a toy
	// gate of a test, hooks_test.go).
	Gate func(g limiter.Gate, occ limiter.Occupancy) limiter.Gate
	// Fate, when set, hears each admitted request's fate as the model
	// measures it (the branch that counts it on time, late, timed out or
	// shed, with the times it measures by): what a gate that observes
	// must hear as its completions (hooks_test.go compares them).
	Fate func(f limiter.Completion)
}

// fateLog is the switches' Fate (nil: none, or no switches).
func (sw *Switches) fateLog() func(limiter.Completion) {
	if sw == nil {
		return nil
	}
	return sw.Fate
}

// ModelSwitch makes points run by another model that must measure the same.
type ModelSwitch uint8

// The models a test may run points by.
const (
	SwitchNone            ModelSwitch = iota
	SwitchQueueForAll                 // points without client behaviour: the queue model (the forward pass's measures with the plain server)
	SwitchClientsOnQueue              // client-model points: on a queue (the plain client model's measures with the plain server)
	SwitchClientsByEvents             // as SwitchClientsOnQueue, every fate decided by events
	SwitchForwardInLoop               // forward-pass points: in the event loop, one arrival at a time (modelPlain)
)

// Point runs one point on its server, client policy and workload
// (the config's servers, policies and loads): the forward pass (simulate.go) when its
// server is the plain one and its clients have no behaviour, else the
// event loop (loop.go) with the point's model: the client model
// when its clients have behaviour, on the plain server or on a queue, else
// the queue model. Then it reports the percentiles by the config's rule.
// A test's switches (sw) run a point by another model that must measure
// the same.
func Point(ctx context.Context, cfg *experiments.Config, a *workload.Arrivals, classes []uint8, in *Instruments, pt *experiments.Point, sw *Switches) error {
	pc := cfg.PointConfig(pt)
	spec := &cfg.Limiters[pt.LimiterIndex]
	var err error
	switch {
	case cfg.UsesClients(pt.Policy, pt.Load):
		model := modelClients
		if sw.Model == SwitchClientsOnQueue || sw.Model == SwitchClientsByEvents || cfg.UsesQueue(pt.Server) {
			model = modelClientsQueue
			if pc.Server.Option(server.OptDiscipline) != server.FIFO || pc.Server.Option(server.OptDoor) == server.DoorPriority || sw.Model == SwitchClientsByEvents {
				model = modelClientsEvents
			}
		}
		err = simulateLoop(ctx, pc, a, classes, spec, pt.Params, in, pt, model, sw)
	case sw.Model == SwitchQueueForAll || cfg.UsesQueue(pt.Server):
		err = simulateLoop(ctx, pc, a, classes, spec, pt.Params, in, pt, modelQueue, sw)
	default:
		var f *ForwardPass
		if f, err = startForwardPass(ctx, pc, a.Clients, len(a.Groups), spec, pt.Params, in, pt, in.keepReleases(a.Len()), a.Len(), sw, in.share.offered(a.T, pc)); err == nil {
			f.svc = a.ServiceMS
			if err = f.Feed(a.T, a.Client); err == nil {
				err = f.finish()
			}
		}
	}
	if err != nil {
		return err
	}
	applyPercentiles(pc, pt)
	return nil
}

// HoldsArrivals reports whether point pt needs its load held in memory:
// the queue and client models look requests up by index, and a service
// distribution draws a time per request of the load; only the forward
// pass at a fixed service time can be fed a stream a batch at a time.
func HoldsArrivals(cfg *experiments.Config, pt *experiments.Point, sw *Switches) bool {
	return sw.Model == SwitchQueueForAll || cfg.UsesQueue(pt.Server) || cfg.UsesClients(pt.Policy, pt.Load) || !cfg.PointConfig(pt).Server.FixedService()
}

// NewForwardPass starts point pt's forward pass over a stream from
// clients (in ngroup groups): it is fed the stream's batches in order
// (Feed) and measured when the stream ends (Finish). It measures
// what the point run over the whole list does, but for the output curve
// (a stream keeps no releases).
func NewForwardPass(ctx context.Context, cfg *experiments.Config, pt *experiments.Point, clients []workload.Client, ngroup int, sw *Switches) (*ForwardPass, error) {
	return startForwardPass(ctx, cfg.PointConfig(pt), clients, ngroup, &cfg.Limiters[pt.LimiterIndex], pt.Params, new(Instruments), pt, false, 0, sw, nil)
}

// Finish measures a streamed point (NewForwardPass) once its
// stream has ended, its percentiles by the config's rule.
func (f *ForwardPass) Finish() error {
	f.Stop()
	if err := f.finish(); err != nil {
		return err
	}
	applyPercentiles(f.cfg, f.pt)
	return nil
}

// applyPercentiles reports every percentile of the point by the config's
// rule: the nearest-rank value, or the top of its bucket in an HdrHistogram
// of 3 significant digits (the maxima too, as HdrHistogram reports them).
func applyPercentiles(c *experiments.Config, pt *experiments.Point) {
	if c.Rule("metrics.percentiles") == metrics.PercentilesExact {
		return
	}
	m := &pt.Metrics
	ds := []*experiments.Delays{&m.GateDelay, &m.ServerWait, &m.Sojourn, m.ShedWait}
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

// Instruments are one worker's reusable measuring state; the histograms are
// large (60001 counters each), so a worker keeps them across points: a
// sweep's worker makes one, new(Instruments), and passes it to Point for
// each point it runs.
type Instruments struct {
	gate, wait, sojourn metrics.Histogram
	rolling             *metrics.Rolling
	fairCounts          []float64
	releases            []float64      // release times, for the empirical arrival curve
	queue               *queueBufs     // the queue model's (queue.go)
	clients             *clientBufs    // the event loop's heap (loop.go), the client model's
	admitted            *admittedBufs  // the client model on a queue (clients_queue.go)
	done                completions    // the completions of a gate that observes (hooks.go)
	trace               *adaptiveTrace // the point's adaptive gate's record (adaptive.go), nil without one
	seriesWindowMS      float64        // the point's series window (startPoint)
	share               *LoadShare     // what the points of the load share (ShareLoad), nil: nothing
	noCurves            bool           // no output curve (NoCurves)
}

// NoCurves makes the worker's points measure no output curve (their
// OutputCurve stays nil): the releases are not kept for it. Every other
// measure is the same.
func (in *Instruments) NoCurves() { in.noCurves = true }

// keepReleases reports whether a point over n arrivals keeps its
// releases for its output curve: at most MaxCurveArrivals, and curves on.
func (in *Instruments) keepReleases(n int) bool {
	return !in.noCurves && n <= experiments.MaxCurveArrivals
}

// ShareLoad makes the worker's points share what can be shared among
// the points of one load held in memory (s, made for the load by
// NewLoadShare): the offered series.
func (in *Instruments) ShareLoad(s *LoadShare) { in.share = s }

// LoadShare is what the points of one load held in memory share: the
// offered series, the arrivals counted per series window, the same at
// every forward-pass point (the other models count attempts, retries
// included, as they come). It is counted once, by the first point that
// needs it, and the points' Series.Offered are that one slice (read-only,
// as every series once measured). Safe for the workers' concurrent use.
type LoadShare struct {
	t  []float64 // the load's arrival times
	mu sync.Mutex
	// The offered series counted, by window and windows (one, but for
	// points of other durations or windows).
	series []sharedOffered
}

type sharedOffered struct {
	windowMS float64
	windows  int
	offered  []int32
}

// NewLoadShare is the share of the points of the load whose arrival
// times are t.
func NewLoadShare(t []float64) *LoadShare { return &LoadShare{t: t} }

// offered is the offered series of arrival times t at point config cfg's
// series windows, counted as the forward pass counts them, when s is the
// share of those arrivals; nil otherwise (the point counts its own).
func (s *LoadShare) offered(t []float64, cfg *experiments.Config) []int32 {
	if s == nil || len(t) != len(s.t) || len(t) > 0 && &t[0] != &s.t[0] {
		return nil
	}
	windowMS, windows := offeredWindows(cfg)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.series {
		if o.windowMS == windowMS && o.windows == windows {
			return o.offered
		}
	}
	o := NewOfferedCounter(cfg)
	o.Add(t)
	s.file(o)
	return o.offered
}

// loopHeap is the worker's event heap, emptied, its first event numbered
// first.
func (in *Instruments) loopHeap(first int64) *eventHeap {
	if in.clients == nil {
		in.clients = new(clientBufs)
	}
	h := &in.clients.heap
	h.reset(first)
	return h
}

// ForwardPass is one point's forward pass, fed the arrivals in time order in
// batches (feed) and measured at the end (finish): the whole list at once
// for a workload held in memory, or batch after batch of a stream that the
// sweep's points share. Its memory grows with the windows and the clients,
// never with the arrivals (but for the releases kept for the output curve,
// up to MaxCurveArrivals).
type ForwardPass struct {
	_      cacheline.Pad // a sweep's points run side by side (package cacheline)
	ctx    context.Context
	cfg    *experiments.Config
	spec   *limiter.Spec
	params limiter.Params
	in     *Instruments
	pt     *experiments.Point
	srv    *server.Server
	gate   limiter.Gate
	groups []int // each client's group index, -1 without one
	ngroup int

	durationMS, serviceMS, deadlineMS float64
	windowMS, horizonMS               float64
	arrivalWindow                     metrics.WindowCursor // the series window of the arrivals, which come in order
	// svc is the service time of every arrival of the load (indexed from
	// the first fed); nil: each takes serviceMS. Only a load held in
	// memory has one (a server with a service distribution holds it).
	svc []float64
	// countOffered: the pass counts the offered series itself (false: it
	// was given, LoadShare).
	countOffered bool

	s       experiments.Series
	clients []experiments.ClientResult
	weights []float64 // the clients' weights, for per-flow bounds
	fair    fairWindows

	m                                      experiments.Metrics
	n                                      int // arrivals measured
	lastRelease                            float64
	serverSojournMax, gateMax, endToEndMax float64
	rel                                    releaseTally

	hooks gateHooks                // the gate's (hooks.go)
	loop  *pointLoop               // a gate with hooks: the arrivals run in the event loop (modelPlain)
	done  *completions             // nil: the gate does not observe
	fate  func(limiter.Completion) // a test's fate log (Switches.Fate)
	split *stages                  // the pass's stages on goroutines of their own (Split), nil: none
	// readsServer: the gate may read the server's occupancy (its kind's
	// ReadsServer, or a test's toy gate).
	readsServer bool
	_           cacheline.Pad
}

// releaseError is the error of a gate that released at release, after
// lastRelease or past the run's series limit (the run ends at durationMS):
// a gate must release in order, and a release too late would grow the
// series past MaxSeriesRows (Config.releaseHorizonMS).
func releaseError(spec *limiter.Spec, release, lastRelease, durationMS float64) error {
	if release < lastRelease {
		return fmt.Errorf("%s released at %g after %g: a gate must release in order", spec.Label(), release, lastRelease)
	}
	return fmt.Errorf("%s released a request at %g ms, %g ms after the run ends: its series would pass the limit of %d rows (a rate or a stage too slow for the run)",
		spec.Label(), release, release-durationMS, experiments.MaxSeriesRows)
}

// releaseTally counts a point's releases to the server, as every
// simulation does: per series window the releases and the most requests in
// the system, the most in the system overall, the rolling count, the
// busiest 100 ms, and the release times for the output curve when kept.
type releaseTally struct {
	window      metrics.WindowCursor // the series' windows
	keep        bool
	inSystemMax int
	peak        peak100
	// peakBySeries: the series' windows are peak's (SeriesWindowMS wide,
	// aligned at 0: the Post 3 sweep's), so the busiest 100 ms is the
	// largest count of the series' releases, kept in peak.max as they
	// are counted, without peak's own window.
	peakBySeries bool
	// The releases and the most in the system of window cur of series s,
	// counted here and written to s when add moves to another window and
	// at flush: an increment of the count just incremented, at an index
	// known only once the gate has released, waited for the one before.
	s            *experiments.Series
	cur          int // -1: none
	curN, curMax int32
}

// newReleaseTally readies a point's release counts; keep keeps the release
// times (at most sizeHint of them, when known) in in.releases.
func newReleaseTally(in *Instruments, windowMS float64, keep bool, sizeHint int) releaseTally {
	in.releases = in.releases[:0]
	if keep && cap(in.releases) < sizeHint {
		in.releases = make([]float64, 0, sizeHint) // never copied while it grows
	}
	return releaseTally{window: metrics.NewWindowCursor(windowMS), keep: keep, peak: peak100{cur: metrics.NewWindowCursor(experiments.SeriesWindowMS)},
		peakBySeries: windowMS == experiments.SeriesWindowMS, cur: -1}
}

// releaseSeries is a series of the releases' windows: the run's windows,
// with room for the windows the gate (spec, params) may release in after
// the run (its lag, at most as many again), so that a gate that holds
// requests does not grow the series by doubling it (a copy of a fresh
// series of 99,000 windows a point at the seed model's 9,900 s). Its
// length, what the outputs show, is the run's windows.
func releaseSeries(windows int, spec *limiter.Spec, params limiter.Params, windowMS float64) []int32 {
	extra := 0
	if lag := spec.LagMS([]limiter.Params{params}); lag > 0 && lag < float64(windows)*windowMS {
		extra = int(lag/windowMS) + 2 // the lag's windows and the one it starts in
	}
	return make([]int32, windows, windows+extra)
}

// add counts a release at release, after which n requests are in the
// system, into series s (the same s each time; s holds them once flush is
// called).
func (rt *releaseTally) add(s *experiments.Series, in *Instruments, release float64, n int) {
	if rw := int(rt.window.Index(release)); rw != rt.cur {
		rt.move(s, rw)
	}
	rt.curN++
	rt.curMax = max(rt.curMax, int32(n))
	rt.inSystemMax = max(rt.inSystemMax, n)
	in.rolling.Add(release)
	if rt.peakBySeries {
		rt.peak.max = max(rt.peak.max, rt.curN)
	} else {
		rt.peak.add(release)
	}
	if rt.keep {
		in.releases = append(in.releases, release)
	}
}

// move writes the current window's counts to its series and makes window
// rw of s current (s grown to it).
//
//go:noinline
func (rt *releaseTally) move(s *experiments.Series, rw int) {
	rt.flush()
	for rw >= len(s.Released) {
		s.Released = append(s.Released, 0)
		s.InSystemMax = append(s.InSystemMax, 0)
	}
	rt.s, rt.cur, rt.curN, rt.curMax = s, rw, s.Released[rw], s.InSystemMax[rw]
}

// flush writes the current window's counts to its series: the series holds
// every release added once it is called (measureCommon does).
func (rt *releaseTally) flush() {
	if rt.cur >= 0 {
		rt.s.Released[rt.cur], rt.s.InSystemMax[rt.cur] = rt.curN, rt.curMax
	}
}

// addAll counts releases (in order) as add does them one by one, given
// for the i-th, most[i], the most requests in the system after a release
// of its series window up to it (systemCount; add's n of each would give
// each window the same most): a window's run of releases at once, then
// the rolling count and the busiest 100 ms over the batch.
func (rt *releaseTally) addAll(s *experiments.Series, in *Instruments, releases []float64, most []int32) {
	most = most[:len(releases)]
	for i := 0; i < len(releases); {
		w := rt.window.Index(releases[i])
		e, n := i+1, most[i]
		for e < len(releases) && rt.window.Index(releases[e]) == w {
			n = max(n, most[e])
			e++
		}
		if rw := int(w); rw != rt.cur {
			rt.move(s, rw)
		}
		rt.curN += int32(e - i)
		rt.curMax = max(rt.curMax, n)
		rt.inSystemMax = max(rt.inSystemMax, int(n))
		if rt.peakBySeries {
			rt.peak.max = max(rt.peak.max, rt.curN)
		}
		i = e
	}
	in.rolling.AddAll(releases)
	if !rt.peakBySeries {
		rt.peak.addAll(releases)
	}
	if rt.keep {
		in.releases = append(in.releases, releases...)
	}
}

// peak100 counts releases per aligned 100 ms window as they come (in
// order) and keeps the largest count: downstream_peak_rps, whatever the
// series' width.
type peak100 struct {
	cur    metrics.WindowCursor // over SeriesWindowMS
	window float64
	count  int32
	max    int32
}

func (p *peak100) add(release float64) {
	if w := p.cur.Index(release); w != p.window || p.count == 0 {
		p.window, p.count = w, 0
	}
	p.count++
	p.max = max(p.max, p.count)
}

// addAll is add for each of releases, in order, its state in registers.
func (p *peak100) addAll(releases []float64) {
	cur, window, count, most := p.cur, p.window, p.count, p.max
	for _, r := range releases {
		if w := cur.Index(r); w != window || count == 0 {
			window, count = w, 0
		}
		count++
		most = max(most, count)
	}
	p.cur, p.window, p.count, p.max = cur, window, count, most
}

// clientWeights are the clients' weights, in client order.
func clientWeights(clients []workload.Client) []float64 {
	w := make([]float64, len(clients))
	for i, c := range clients {
		w[i] = c.Weight
	}
	return w
}

// pointGate is a point's gate in front of occ, each client with its
// weight, behind routedGate when it is replicated (hooks.go).
func pointGate(spec *limiter.Spec, params limiter.Params, clients []workload.Client, occ limiter.Occupancy) (limiter.Gate, error) {
	return pointGateWith(spec, params, clients, occ, nil)
}

// pointGateWith is pointGate under a test's switches (nil: none).
func pointGateWith(spec *limiter.Spec, params limiter.Params, clients []workload.Client, occ limiter.Occupancy, sw *Switches) (limiter.Gate, error) {
	gate, err := limiter.New(spec, params, clientWeights(clients), occ)
	if err != nil {
		return nil, err
	}
	a, adaptive := gate.(limiter.Adaptive)
	if sw != nil && sw.Gate != nil {
		gate = sw.Gate(gate, occ)
	}
	if adaptive {
		gate = newAdaptiveTrace(gate, a)
	}
	if r, ok := gate.(limiter.Replicated); ok {
		gate = &routedGate{r: r, instances: make([]experiments.InstanceMetrics, r.Instances())}
	}
	return gate, nil
}

// startPoint readies a worker's delay histograms and rolling count for a
// point of cfg.
func (in *Instruments) startPoint(cfg *experiments.Config) {
	in.trace, in.seriesWindowMS = nil, cfg.SeriesWindow()
	in.gate.Reset()
	in.wait.Reset()
	in.sojourn.Reset()
	if in.rolling == nil {
		in.rolling = metrics.NewRolling(cfg.Metrics.RollingWindowMS)
	}
	in.rolling.Reset(cfg.Metrics.RollingWindowMS)
}

// releaseHorizonMS bounds the releases of a point of the gate (spec,
// params): releases after the run extend the series, so that a rate too
// small to ever release or a chain's slow stage is an error, not a runaway
// allocation: past the gate's known lag, a point may add its share of
// MaxSeriesRows.
func releaseHorizonMS(c *experiments.Config, spec *limiter.Spec, params limiter.Params) float64 {
	npoints := 0
	for i := range c.Limiters {
		npoints += c.Limiters[i].Count()
	}
	return c.Workload.DurationMS + spec.LagMS([]limiter.Params{params}) + float64(experiments.MaxSeriesRows/max(npoints, 1))*c.SeriesWindow()
}

// startForwardPass starts the forward pass of one point over a workload of clients
// (their weights and groups). keepReleases keeps every release for the
// point's empirical output curve (a workload of at most MaxCurveArrivals);
// sizeHint, when known, sizes that list. offered, when not nil, is the
// offered series of the arrivals it will be fed (LoadShare), not counted
// again.
func startForwardPass(ctx context.Context, cfg *experiments.Config, clients []workload.Client, ngroup int, spec *limiter.Spec, params limiter.Params, in *Instruments, pt *experiments.Point, keepReleases bool, sizeHint int, sw *Switches, offered []int32) (*ForwardPass, error) {
	f := &ForwardPass{ctx: ctx, cfg: cfg, spec: spec, params: params, in: in, pt: pt, ngroup: ngroup}
	f.srv = server.New(cfg.Server)
	f.groups = make([]int, len(clients))
	f.weights = clientWeights(clients)
	for i, c := range clients {
		f.groups[i] = c.GroupIndex()
	}
	gate, err := pointGateWith(spec, params, clients, f.srv, sw)
	if err != nil {
		return nil, err
	}
	f.gate, f.fate = gate, sw.fateLog()
	f.readsServer = spec.Kind() == nil || spec.Kind().ReadsServer || sw != nil && sw.Gate != nil
	in.startPoint(cfg)
	f.hooks = hooksOf(gate, in)
	in.watch(&f.hooks)
	if f.hooks.loop() || sw != nil && sw.Model == SwitchForwardInLoop {
		l := &pointLoop{model: modelPlain, forwardPass: f, heap: in.loopHeap(0)} // the forward pass's events are numbered from 0
		l.a = &l.batch
		l.done = newCompletions(&f.hooks, l.heap, &in.done)
		if err := l.startSyncs(&f.hooks, releaseHorizonMS(cfg, spec, params)); err != nil {
			return nil, err
		}
		f.loop, f.done = l, l.done
	}

	f.durationMS = cfg.Workload.DurationMS
	f.serviceMS, f.deadlineMS = cfg.Server.ServiceMS, cfg.Server.DeadlineMS
	f.windowMS = cfg.SeriesWindow()
	windows := int(metrics.WindowCount(f.durationMS, f.windowMS))
	f.horizonMS = releaseHorizonMS(cfg, spec, params)
	f.countOffered = offered == nil
	if f.countOffered {
		offered = make([]int32, windows)
	}
	f.s = experiments.Series{
		Offered:     offered,
		Rejected:    make([]int32, windows),
		Released:    releaseSeries(windows, spec, params, f.windowMS),
		InSystemMax: releaseSeries(windows, spec, params, f.windowMS),
	}
	nc := len(clients)
	f.clients = cacheline.Slice[experiments.ClientResult](nc) // counted at every arrival, beside other points
	f.fair.start(in, nc, cfg.Metrics.FairnessWindowMS, f.durationMS)
	f.lastRelease = math.Inf(-1)
	f.rel = newReleaseTally(in, f.windowMS, keepReleases, sizeHint)
	f.arrivalWindow = metrics.NewWindowCursor(f.windowMS)
	return f, nil
}

// Feed replays the next arrivals (times ts from clients cs) through the
// gate into the server: forward, or in the event loop for a gate with
// hooks.
func (f *ForwardPass) Feed(ts []float64, cs []int32) error {
	if f.split != nil {
		return f.split.feed(f, ts, cs)
	}
	if f.loop != nil {
		return f.loop.feed(f.ctx, ts, cs)
	}
	return f.forward(ts, cs)
}

// forward is the forward pass's step over arrivals ts from clients cs. It
// allocates nothing besides growing the series past the run and the kept
// releases, and checks ctx once per 2^20 arrivals.
func (f *ForwardPass) forward(ts []float64, cs []int32) error {
	in, s, done, fate := f.in, &f.s, f.done, f.fate
	cs = cs[:len(ts)]
	// The delays, a run of one bucket at a time (metrics.Run).
	var gate, wait, sojourn metrics.Run
	defer func() {
		gate.End(&in.gate)
		wait.End(&in.wait)
		sojourn.End(&in.sojourn)
	}()
	for i, t := range ts {
		if (f.n+i)&(1<<20-1) == 0 && f.n+i > 0 {
			if err := f.ctx.Err(); err != nil {
				return err
			}
		}
		c := cs[i]
		if f.countOffered {
			s.Offered[int(f.arrivalWindow.Index(t))]++
		}
		f.clients[c].Offered++
		release, ok := f.gate.Offer(t, c)
		if !ok {
			s.Rejected[int(f.arrivalWindow.Index(t))]++
			continue
		}
		if release < f.lastRelease || !(release < f.horizonMS) {
			return releaseError(f.spec, release, f.lastRelease, f.durationMS)
		}
		f.lastRelease = release
		f.clients[c].Admitted++
		if f.fair.on {
			f.fair.admit(t, int(c))
		}
		svc := f.serviceMS
		if f.svc != nil {
			svc = f.svc[f.n+i]
		}
		start, finish := f.srv.ServeFor(release, svc)
		f.rel.add(s, in, release, f.srv.Len())
		gate = gate.Add(&in.gate, metrics.Bucket(release-t))
		wait = wait.Add(&in.wait, metrics.Bucket(start-release))
		// RoundMS, floor(x + 0.5), not the other models' RoundHalfUp: they
		// differ on 0.49999999999999994 (1 against 0) and on odd integers
		// from 2^52, so one cannot serve both without moving outputs.
		soj := max(svc, metrics.RoundMS(finish-t))
		sojourn = sojourn.Add(&in.sojourn, metrics.Bucket(soj))
		onTime := soj <= f.deadlineMS
		if onTime {
			f.m.OnTime++
		} else {
			f.m.Late++
		}
		if done != nil || fate != nil {
			f.completed(int64(f.n+i), c, t, release, finish, onTime, soj <= f.deadlineMS)
		}
		d := finish - release
		if d > f.serverSojournMax {
			f.serverSojournMax = d
		}
		if d > f.clients[c].SojournMaxMS {
			f.clients[c].SojournMaxMS = d
		}
		f.gateMax, f.endToEndMax = max(f.gateMax, release-t), max(f.endToEndMax, finish-t)
	}
	f.n += len(ts)
	return nil
}

// completed tells a gate that observes (and a test's fate log) the
// completion of request seq from client c, arrived at t, released at
// release, finished at finish, on time as onTime says (measured, for the
// fate log, as fateOnTime says). Out of the forward pass's loop, which
// calls it only with hooks or a test's switch.
//
//go:noinline
func (f *ForwardPass) completed(seq int64, c int32, t, release, finish float64, onTime, fateOnTime bool) {
	if f.fate != nil {
		f.fate(limiter.Completion{Seq: seq, Client: c, Instance: f.hooks.instance(), ArrivalMS: t, ReleaseMS: release, DoneMS: finish, Outcome: outcome(fateOnTime)})
	}
	f.done.add(limiter.Completion{Seq: seq, Client: c, Instance: f.hooks.instance(), ArrivalMS: t, ReleaseMS: release, DoneMS: finish, Outcome: outcome(onTime)})
}

// finish measures the point from what the arrivals fed left.
func (f *ForwardPass) finish() error {
	if f.loop != nil {
		if err := f.loop.drain(); err != nil {
			return err
		}
		if f.loop.heap.err != nil {
			return f.loop.heap.err
		}
		if err := f.loop.ended(); err != nil {
			return err
		}
	}
	in, s, m, cfg := f.in, &f.s, &f.m, f.cfg
	seconds := f.durationMS / 1000
	m.Arrivals = f.n
	m.Admitted = in.gate.Count()
	m.Rejected = m.Arrivals - m.Admitted
	measureCommon(m, in, seconds, &f.rel, f.serverSojournMax)
	if m.Arrivals > 0 {
		m.RejectPct = 100.0 * float64(m.Rejected) / float64(m.Arrivals)
		m.ServedLatePct = 100.0 * float64(m.Late) / float64(m.Arrivals)
	}
	m.UtilizationPct = math.Min(100, 100*float64(m.Admitted)*f.serviceMS/(f.durationMS*float64(cfg.Server.Workers))) // service_ms: the mean

	m.Recovery = recovery(cfg, s, f.windowMS)
	f.hooks.file(m)
	flowBounds(cfg, f.spec, f.params, f.weights, f.clients) // forward measured each client's sojourn (in the loop too)
	finishPoint(cfg, f.pt, f.spec, f.params, in, m, s, f.clients, &f.fair, f.ngroup, func(i int) int { return f.groups[i] }, f.gateMax, f.endToEndMax, true, f.rel.keep)
	return nil
}

// finishPoint files a point's measures, the end every simulation shares:
// each client's share and Jain's index over them (group(i) is client i's
// group), the network-calculus bounds where the point has them (fifo: a
// FIFO server; otherwise a note says why there are none), the output curve of the releases kept (curve), the series,
// and the clients and Jain's index over time when fairness windows are on.
// m.Recovery is the caller's (each simulation measures its own).
func finishPoint(cfg *experiments.Config, pt *experiments.Point, spec *limiter.Spec, params limiter.Params, in *Instruments, m *experiments.Metrics, s *experiments.Series,
	clients []experiments.ClientResult, fair *fairWindows, ngroup int, group func(i int) int, gateMax, endToEndMax float64, fifo, curve bool) {
	durationMS := cfg.Workload.DurationMS
	clientShares(m, clients, ngroup, group, durationMS/1000)
	measureInstances(cfg, spec, params, len(clients), m)
	m.LevelRPS = levelRPS(cfg)
	if in.trace != nil {
		m.Adaptive = in.trace.metrics(cfg)
	}
	pt.Metrics = *m
	pt.Bounds = pointBounds(cfg, spec, params, len(clients), m, gateMax, endToEndMax, fifo)
	if curve {
		pt.OutputCurve = calculus.Empirical(in.releases, calculus.Grid(durationMS))
	}
	pt.Series = *s
	if fair.on {
		pt.Clients = clients
		pt.JainSeries = fair.finish()
	}
}

// levelRPS is the point's configured load, the sum of its parts' rates
// (workload.Spec.LevelRPS): nil when a part has none.
func levelRPS(cfg *experiments.Config) *float64 {
	if v, ok := cfg.Workload.LevelRPS(); ok {
		return &v
	}
	return nil
}

// measureCommon fills the measures every simulation takes alike from its
// counts and instruments: the rates over seconds of arrivals, the delay
// percentiles, the downstream peak, the rolling maximum, the most requests
// in the system and the longest time at the server.
func measureCommon(m *experiments.Metrics, in *Instruments, seconds float64, rel *releaseTally, serverSojournMaxMS float64) {
	rel.flush()
	m.OfferedRPS = float64(m.Arrivals) / seconds
	m.AdmittedRPS = float64(m.Admitted) / seconds
	m.GoodputRPS = float64(m.OnTime) / seconds
	m.GateDelay = delays(&in.gate)
	m.ServerWait = delays(&in.wait)
	m.Sojourn = delays(&in.sojourn)
	m.DownstreamPeakRPS = float64(rel.peak.max) * 1000 / experiments.SeriesWindowMS
	m.RollingMax = in.rolling.Max()
	m.InSystemMax = rel.inSystemMax
	m.ServerSojournMaxMS = serverSojournMaxMS
}

func delays(h *metrics.Histogram) experiments.Delays {
	return experiments.Delays{P50: h.Quantile(50), P99: h.Quantile(99), Max: h.Max()}
}

// clientShares sets each client's admitted rate, Jain's index over them
// and each group's share of the admitted requests (group(i) is client i's
// group, -1 for none): the same for the forward pass, the queue model and
// the client model.
func clientShares(m *experiments.Metrics, clients []experiments.ClientResult, ngroup int, group func(i int) int, seconds float64) {
	rates := make([]float64, len(clients))
	for i := range clients {
		clients[i].AdmittedRPS = float64(clients[i].Admitted) / seconds
		rates[i] = clients[i].AdmittedRPS
	}
	m.Jain = metrics.Jain(rates)
	if ngroup == 0 {
		return
	}
	m.GroupSharePct = make([]float64, ngroup)
	for i := range clients {
		if g := group(i); g >= 0 {
			m.GroupSharePct[g] += float64(clients[i].Admitted)
		}
	}
	for g := range m.GroupSharePct {
		if m.Admitted > 0 {
			m.GroupSharePct[g] = 100 * m.GroupSharePct[g] / float64(m.Admitted)
		}
	}
}
