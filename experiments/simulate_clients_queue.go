package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// The client model on a queue server: a point whose clients behave
// (simulate_clients.go: timeouts, retries, budgets, throttling, closed
// loops) and whose server has queue settings (server.Queue: lifo, a door,
// expiry, an end cut, request classes) runs here, one event at a time.
//
// Attempts reach the gate as in simulateClients: the arrival list's first
// attempts and the scheduled retries and closed-loop requests (the
// clientRun's heap), in (t, seq) order, and the gate, the retry budget and
// the adaptive throttle decide as there (the same clientRun methods).
// What differs is when an admitted attempt's fate is known:
//
//   - FIFO without eviction (discipline fifo, door open or tail-drop): a
//     request released later waits behind it, so nothing after its
//     admission changes when it starts. Its fate is decided at admission,
//     as the plain client model does: the door (the queue at its release),
//     then its start from a FIFO copy of the workers (server.Server): past
//     the end cut it is shed at the end; expired at its pick (expire
//     at-dequeue) it is shed then; else it is served. An attempt that
//     would not start before its client gives up is dropped unqueued under
//     cancel_on_timeout "drop-unstarted" (the plain model's rule: it never
//     counts in the system). The queue itself runs beside, for the door,
//     the occupancy, the shed counts and the p99 per finish window, and
//     every outcome it reports is checked against the one decided.
//     With the plain server this is the plain client model, to the bit
//     (TestClientsQueueIsTheClientModel).
//   - LIFO, or a priority door: a later request can overtake or evict it,
//     so its fate is decided when it happens. The queue is run by events:
//     an attempt is offered at its release (an event; released at once,
//     it is offered before the next attempt at its time), its client's
//     timeout is an event at t + timeout_ms, and the queue's picks are
//     made one at a time before every event later than them (a pick at p
//     before a timeout at p, and a release at p before its own timeout at
//     p: an attempt started at its client's deadline has started, as at
//     admission; TestClientsQueueReleaseAtTheTimeout). Under end "cut" what still waits is shed at the end
//     of the window, before any event at or after it. Served at a pick: the sojourn max(S, round(finish - t))
//     decides as in the plain model (beyond timeout_ms it is abandoned and
//     its retry offered at t + timeout_ms + backoff). Still waiting (or not
//     yet released) at t + timeout_ms: abandoned, dropped from the queue
//     under "drop-unstarted", and its retry offered then; served later, its
//     work is wasted. Shed (door, eviction, expiry, end) before its client
//     gave up: a failure at that time, retried as a gate rejection is (no
//     Retry-After). An adaptive throttle counts an accept when its
//     attempt is served (at the pick).
//
// Either way an attempt failing at f after its client gave up at g < f
// counts as abandoned at g, and its retry is offered after g.
//
// Classes: a first attempt from the arrival list has its arrival's class
// (classes.go), a closed-loop request draws one when it first reaches the
// gate, in that order, on a PCG stream of its own (class_draw's seed), by
// the same shares; every retry keeps its request's class. A class's
// offered requests are first attempts (in the window of their time), its
// successes the requests that succeeded (in the window of the attempt that
// did), its sojourn that of every served attempt.
//
// Metrics: the client model's (ClientMetrics, attempts, retries, goodput,
// recovery) and the queue model's: attempts shed by the server (Shed,
// ShedPct of the attempts at the gate, ShedWait), served attempts (Served;
// WastedPct: late or abandoned of them), the p99 per finish window, the
// classes and the SLO. The scoring window is the whole run.

// clientsQueueForAll runs every client-model point through
// simulateClientsQueue (a test's switch: with the plain server it must
// measure what simulateClients does).
var clientsQueueForAll atomic.Bool

// clientsQueueByEvents runs every point of simulateClientsQueue by events,
// FIFO ones too (a test's switch: where no draw, tie or rounding tells the
// two apart, the events must decide what the admissions do).
var clientsQueueByEvents atomic.Bool

// cqBufs are a worker's reusable state of simulateClientsQueue.
type cqBufs struct {
	recs   []cqRec
	free   []int32
	events cqHeap
}

// What an admitted attempt is doing.
const (
	cqGated     uint8 = iota // admitted, its release still to come (by events)
	cqWaiting                // in the queue (by events)
	cqCancelled              // its client gave up before its release: dropped there
	cqDone                   // served, shed or dropped
)

// What the queue will report of an attempt decided at admission.
const (
	cqExpectNone uint8 = iota
	cqExpectServed
	cqExpectShed
)

// cqRec is an admitted attempt the queue holds: its id is its index.
type cqRec struct {
	a         attempt
	abandonAt float64 // when its client gives up (+Inf: never)
	at        float64 // decided at admission: its start, or when it is shed
	pos       int64   // its place in the queue (LastPos), while it waits
	state     uint8
	expect    uint8
	gaveUp    bool // its client gave up on it
	timer     bool // its timeout event is pending
}

// cqEvent is a release or a timeout of an admitted attempt.
type cqEvent struct {
	t    float64
	seq  int64
	rec  int32
	kind uint8
}

const (
	cqRelease uint8 = iota
	cqTimeout
)

func (e *cqEvent) before(f *cqEvent) bool { return e.t < f.t || e.t == f.t && e.seq < f.seq }

// cqHeap is a binary min-heap of events by (t, seq).
type cqHeap []cqEvent

func (h *cqHeap) push(e cqEvent) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(&s[p]) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = e
}

func (h *cqHeap) pop() cqEvent {
	s := *h
	top := s[0]
	last := len(s) - 1
	x := s[last]
	s = s[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		m := l
		if r := l + 1; r < len(s) && s[r].before(&s[l]) {
			m = r
		}
		if !s[m].before(&x) {
			break
		}
		s[i] = s[m]
		i = m
	}
	if i < len(s) {
		s[i] = x
	}
	*h = s
	return top
}

// cqRun is one point of simulateClientsQueue; it is the queue's Sink.
type cqRun struct {
	r          *clientRun
	q          *server.Queue
	qr         *queueRun // the queue model's measures: p99 per finish window
	bufs       *cqBufs
	in         *instruments
	m          *Metrics
	cm         *ClientMetrics
	s          *Series
	lazy       bool // fates decided by events (lifo, priority door)
	cancel     bool
	classes    bool
	deadlineMS float64
	windowMS   float64
	now        float64 // the time of the pick or event being processed

	classOK          []int
	busyMS           float64
	serverSojournMax float64
	endToEndMax      float64
	offering         int32 // the attempt being offered at admission (decided mode)
	mismatch         string
}

func (x *cqRun) newRec(a *attempt) int32 {
	b := x.bufs
	var id int32
	if n := len(b.free); n > 0 {
		id = b.free[n-1]
		b.free = b.free[:n-1]
	} else {
		id = int32(len(b.recs))
		b.recs = append(b.recs, cqRec{})
	}
	b.recs[id] = cqRec{a: *a, abandonAt: math.Inf(1)}
	return id
}

func (x *cqRun) release(id int32) { x.bufs.free = append(x.bufs.free, id) }

func (x *cqRun) push(e cqEvent) {
	e.seq = x.r.seq
	x.r.seq++
	x.bufs.events.push(e)
}

// accept counts an answer for client c's throttle at the current time.
func (x *cqRun) accept(b *workload.Behaviour, a *attempt) {
	if x.r.flags[a.part].throttles {
		x.r.throttleRoll(b, a.c, x.now)
		x.r.thrAcc[x.r.throttleSlot(a.c)]++
	}
}

// served measures attempt a, released at release and served from start
// to finish, and reacts as its client does; gaveUp: its client had given
// up already.
func (x *cqRun) served(a *attempt, release, start, finish, abandonAt float64, gaveUp bool) {
	r, m, cm := x.r, x.m, x.cm
	b, fl := &r.behs[a.part], r.flags[a.part]
	t := a.t
	cm.Served++
	x.busyMS += a.svc
	if a.n > 0 {
		cm.RetriesServed++
	}
	x.in.wait.Record(start - release)
	sojourn := max(a.svc, metrics.RoundHalfUp(finish-t))
	x.in.sojourn.Record(sojourn)
	x.serverSojournMax = max(x.serverSojournMax, finish-release)
	x.endToEndMax = max(x.endToEndMax, finish-t)
	if x.classes {
		x.qr.bufs.classSojourn[a.class].Record(sojourn)
	}
	switch {
	case gaveUp:
		m.Late++
		cm.WastedWorkMS += a.svc
	case fl.timeout && sojourn > b.TimeoutMS:
		m.Late++
		cm.Abandoned++
		cm.WastedWorkMS += a.svc
		r.retry(a, abandonAt, abandonAt)
	case sojourn <= x.deadlineMS:
		x.accept(b, a)
		m.OnTime++
		fw := int(metrics.WindowIndex(finish, x.windowMS))
		for fw >= len(x.s.Goodput) {
			x.s.Goodput = append(x.s.Goodput, 0)
		}
		x.s.Goodput[fw]++
		if x.classes {
			x.classOK[a.class]++
			x.s.Classes[a.class].Success[int(metrics.WindowIndex(t, x.windowMS))]++
		}
		r.end(a, finish)
	default:
		x.accept(b, a)
		m.Late++
		r.end(a, finish)
	}
}

// failed reacts to attempt a shed by the server at failAt, its client
// giving up at abandonAt (decided at admission).
func (x *cqRun) failed(a *attempt, failAt, abandonAt float64) {
	if failAt > abandonAt {
		x.cm.Abandoned++
		x.r.retry(a, abandonAt, abandonAt)
		return
	}
	x.r.retry(a, failAt, failAt)
}

// Served is the queue's report of a served attempt.
func (x *cqRun) Served(id int32, release, start, finish float64) {
	rec := &x.bufs.recs[id]
	x.qr.finishAt(rec.a.t, finish)
	x.m.Served++
	if !x.lazy {
		if rec.expect != cqExpectServed || start != rec.at {
			x.mismatch = fmt.Sprintf("attempt at %g: served from %g, decided %d at %g", rec.a.t, start, rec.expect, rec.at)
		}
		x.release(id)
		return
	}
	rec.state = cqDone
	a := rec.a
	x.served(&a, release, start, finish, rec.abandonAt, rec.gaveUp)
	if rec = &x.bufs.recs[id]; !rec.timer {
		x.release(id)
	}
}

// Shed is the queue's report of an attempt it shed.
func (x *cqRun) Shed(id int32, at float64, _ server.Why) {
	rec := &x.bufs.recs[id]
	x.m.Shed++
	x.qr.bufs.shedWait.Record(float64(metrics.ClampMS(at - rec.a.t)))
	if !x.lazy {
		if id == x.offering {
			return // at its release: the admission decides
		}
		if rec.expect != cqExpectShed || at != rec.at {
			x.mismatch = fmt.Sprintf("attempt at %g: shed at %g, decided %d at %g", rec.a.t, at, rec.expect, rec.at)
		}
		x.release(id)
		return
	}
	rec.state = cqDone
	if !rec.gaveUp {
		a := rec.a
		x.r.retry(&a, at, at)
	}
	if rec = &x.bufs.recs[id]; !rec.timer {
		x.release(id)
	}
}

// timeout is the client of attempt id giving up on it at t (by events).
func (x *cqRun) timeout(id int32, t float64) {
	rec := &x.bufs.recs[id]
	rec.timer = false
	if rec.state == cqDone {
		x.release(id)
		return
	}
	rec.gaveUp = true
	x.cm.Abandoned++
	if x.cancel {
		x.cm.Dropped++
		if rec.state == cqWaiting {
			x.q.Drop(rec.pos)
			rec.state = cqDone
		} else {
			rec.state = cqCancelled
		}
	}
	a := rec.a
	done := rec.state == cqDone
	x.r.retry(&a, t, t)
	if done {
		x.release(id)
	}
}

// offer is the release of attempt id to the queue at t (by events), with
// the release's measures.
func (x *cqRun) offer(id int32, t float64, rel *releaseTally) {
	rec := &x.bufs.recs[id]
	if rec.state == cqCancelled {
		rec.state = cqDone
		x.release(id)
		return
	}
	a := rec.a
	if x.q.OfferFor(id, a.class, a.t, t, a.svc) {
		rec = &x.bufs.recs[id]
		rec.state, rec.pos = cqWaiting, x.q.LastPos()
	}
	rel.add(x.s, x.in, t, x.q.InSystem(t))
}

// userClasses draws closed-loop requests' classes (nil without classes).
type userClasses struct {
	rng *rand.Rand
	cum []float64
}

func (u *userClasses) next() uint8 {
	v := u.rng.Float64()
	k := 0
	for k < len(u.cum) && !(v < u.cum[k]) {
		k++
	}
	return uint8(k)
}

// simulateClientsQueue runs one point of the client model on its queue
// server and measures it as simulateClients does, with the queue model's
// measures beside.
func simulateClientsQueue(ctx context.Context, cfg *Config, a *workload.Arrivals, classes []uint8, spec *limiter.Spec, params limiter.Params, in *instruments, pt *Point) error {
	durationMS := cfg.Workload.DurationMS
	serviceMS, deadlineMS := cfg.Server.ServiceMS, cfg.Server.DeadlineMS
	lazy := cfg.Server.Option(server.OptDiscipline) != server.FIFO || cfg.Server.Option(server.OptDoor) == server.DoorPriority || clientsQueueByEvents.Load()
	expire := cfg.Server.Option(server.OptExpire) == server.ExpireAtDequeue
	endMS := math.Inf(1)
	if cfg.Server.Option(server.OptEnd) == server.EndCut {
		endMS = durationMS
	}
	nclass := len(cfg.Classes)
	windowMS := cfg.SeriesWindow()
	windows := int(metrics.WindowCount(durationMS, windowMS))
	s := clientSeries(durationMS, windowMS)
	var m Metrics
	var cm ClientMetrics
	if in.cq == nil {
		in.cq = new(cqBufs)
	}
	qr := &queueRun{in: in, s: &s, m: &m, variable: !cfg.Server.FixedService(), windowMS: windowMS}
	classOK := qr.startBufs(in, classes != nil, nclass, windows)
	x := &cqRun{
		qr: qr, bufs: in.cq, in: in, m: &m, cm: &cm, s: &s,
		lazy:       lazy,
		cancel:     cfg.Server.Option(server.OptCancel) == server.CancelDrop,
		classes:    classes != nil,
		deadlineMS: deadlineMS,
		windowMS:   windowMS,
		offering:   -1,
	}
	x.bufs.recs, x.bufs.free, x.bufs.events = x.bufs.recs[:0], x.bufs.free[:0], x.bufs.events[:0]
	x.classOK = classOK
	var users *userClasses
	if classes != nil {
		users = &userClasses{rng: rand.New(rand.NewPCG(uint64(cfg.ClassDraw.Seed), 0x7573657273))} // "users"
		sum := 0.0
		for k := range nclass - 1 {
			sum += cfg.Classes[k].Share
			users.cum = append(users.cum, sum)
		}
	}
	q := server.NewQueue(cfg.Server, durationMS, nclass, x)
	x.q = q
	// Decided at admission: a FIFO copy of the workers says when each
	// attempt starts (and, under occupancy busy-ceil, what the gate reads).
	var shadow *server.Server
	var occ limiter.Occupancy = q
	if !lazy {
		shadow = server.New(cfg.Server)
		if cfg.Server.Option(server.OptOccupancy) == server.OccupancyBusyCeil {
			occ = shadow
		}
	}
	gate, err := pointGate(spec, params, a.Clients, occ)
	if err != nil {
		return err
	}
	in.startPoint(cfg)
	nc := len(a.Clients)
	r, totalUsers, err := newClientRun(cfg, a, pt, in)
	if err != nil {
		return err
	}
	x.r = r

	horizonMS := cfg.releaseHorizonMS(spec, params)
	qr.maxFinishWindows = int(math.Ceil(horizonMS / windowMS))
	clients := make([]ClientResult, nc)
	var fair fairWindows
	fair.start(in, nc, cfg.Metrics.FairnessWindowMS, durationMS)
	r.startGate(gate, occ, spec, horizonMS, in, &m, &cm, &s, clients, &fair)
	rel := newReleaseTally(in, windowMS, len(a.T) <= MaxCurveArrivals, len(a.T))
	next := 0 // next arrival of the list
	attemptWindow := metrics.NewWindowCursor(windowMS)
	events := &x.bufs.events
	cut := false // the end of a cut window has shed what waited
	for steps := 0; ; steps++ {
		if steps&(1<<20-1) == 0 && steps > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		// The next event: an attempt at the gate (the list's, older than
		// every scheduled one at its time, or the heap's) or a release
		// or timeout.
		gt, gseq, list := math.Inf(1), int64(math.MaxInt64), false
		switch {
		case next < len(a.T) && (r.heap.len() == 0 || a.T[next] <= r.heap.topT()):
			gt, gseq, list = a.T[next], int64(next), true
		case r.heap.len() > 0:
			gt, gseq = r.heap.topT(), int64(r.heap.h[0].key>>slotBits)
		}
		isEvent := len(*events) > 0 && ((*events)[0].t < gt || (*events)[0].t == gt && (*events)[0].seq < gseq)
		t := gt
		if isEvent {
			t = (*events)[0].t
		}
		if lazy {
			// The queue's picks before it (at it, before a timeout).
			if p := q.NextPickMS(); p < t || p == t && isEvent && (*events)[0].kind == cqTimeout {
				x.now = p
				q.Pick()
				continue
			}
		}
		if lazy && !cut && t >= endMS && !math.IsInf(endMS, 1) {
			// The window ends: what still waits is shed at its end,
			// before any event at or after it.
			x.now, cut = endMS, true
			q.CutEnd()
			continue
		}
		if math.IsInf(t, 1) {
			break
		}
		x.now = t
		if isEvent {
			e := events.pop()
			if e.kind == cqTimeout {
				x.timeout(e.rec, e.t)
			} else {
				x.offer(e.rec, e.t, &rel)
			}
			continue
		}
		var at attempt
		if list {
			at.arrival(a, next, serviceMS)
			if classes != nil {
				at.class = classes[next]
			}
			next++
		} else {
			r.heap.pop(&at)
			if users != nil && at.user && at.n == 0 {
				at.class = users.next()
			}
		}
		fl := r.flags[at.part]
		wi := int(attemptWindow.Index(t))
		if classes != nil && at.n == 0 {
			s.Classes[at.class].Offered[wi]++
		}
		release, abandonAt, ok, err := r.atGate(&at, wi)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if lazy {
			id := x.newRec(&at)
			rec := &x.bufs.recs[id]
			rec.abandonAt, rec.state = abandonAt, cqGated
			rec.timer = fl.timeout
			// A later release is numbered before the timeout: released at
			// its client's deadline, it is offered first, and the pick at
			// that instant comes before the timeout (an attempt that starts
			// at its client's deadline has started, as at admission).
			if release != t {
				x.push(cqEvent{t: release, rec: id, kind: cqRelease})
			}
			if fl.timeout {
				x.push(cqEvent{t: abandonAt, rec: id, kind: cqTimeout})
			}
			if release == t {
				x.offer(id, t, &rel) // released at once: before the next attempt at t
			}
			continue
		}
		// Decided at admission.
		r.lastQuery = max(r.lastQuery, release)
		p := shadow.StartAt(release) // the door below leaves the copy as it is
		if x.cancel && fl.timeout && p > abandonAt {
			cm.Abandoned++
			cm.Dropped++
			r.retry(&at, abandonAt, abandonAt)
			continue
		}
		id := x.newRec(&at)
		x.offering = id
		entered := q.OfferFor(id, at.class, t, release, at.svc)
		x.offering = -1
		if !entered {
			x.release(id)
			x.failed(&at, release, abandonAt)
		} else {
			rec := &x.bufs.recs[id]
			switch {
			case !(p < endMS):
				rec.expect, rec.at = cqExpectShed, endMS
				x.failed(&at, endMS, abandonAt)
			case expire && (p-t)+at.svc > deadlineMS:
				rec.expect, rec.at = cqExpectShed, p
				x.failed(&at, p, abandonAt)
			default:
				start, finish := shadow.ServeFor(release, at.svc)
				rec.expect, rec.at = cqExpectServed, start
				x.served(&at, release, start, finish, abandonAt, false)
			}
		}
		rel.add(&s, in, release, q.InSystem(release))
	}
	q.Finish()
	if r.err != nil {
		return r.err
	}
	qr.flushFinishes()
	if qr.variable {
		qr.sortFinishes()
	}
	if qr.finishOrderViolated {
		return fmt.Errorf("the queue server finished requests out of order") // cannot happen: fixed service
	}
	if x.mismatch != "" {
		return fmt.Errorf("the queue and the client model disagree: %s", x.mismatch) // cannot happen
	}

	clientTotals(cfg, r, &m, &cm, in, clientTally{busyMS: x.busyMS, serverSojournMaxMS: x.serverSojournMax, rel: &rel, users: totalUsers})
	seconds := durationMS / 1000
	if cm.Attempts > 0 {
		m.ShedPct = 100.0 * float64(m.Shed) / float64(cm.Attempts)
	}
	if m.Served > 0 {
		m.WastedPct = 100.0 * float64(m.Late) / float64(m.Served)
	}
	sw := delays(&qr.bufs.shedWait)
	m.ShedWait = &sw
	if classes != nil {
		cfg.classMetrics(&m, &s, x.classOK, qr.bufs.classSojourn, seconds)
	}
	m.Recovery = measureGoodputRecovery(cfg, &s, windowMS)
	finishPoint(cfg, pt, spec, params, in, &m, &s, clients, &fair, len(a.Groups), a.GroupOf, r.gateMax, x.endToEndMax,
		cfg.Server.Option(server.OptDiscipline) == server.FIFO, rel.keep)
	return nil
}
