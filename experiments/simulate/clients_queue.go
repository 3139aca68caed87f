package simulate

import (
	"math"
	"math/rand/v2"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/server"
)

// The client model on a queue server: a point whose clients behave
// (clients.go: timeouts, retries, budgets, throttling, closed
// loops) and whose server has queue settings (server.Queue: lifo, a door,
// expiry, an end cut, request classes) runs in the event loop
// (loop.go) with these steps (modelClientsQueue and
// modelClientsEvents).
//
// Attempts reach the gate as on the plain server: the arrival list's first
// attempts and the scheduled retries and closed-loop requests, in the
// loop's (t, sequence) order, and the gate, the retry budget and
// the adaptive throttle decide as there (the same clientRun methods).
// What differs is when an admitted attempt's fate is known:
//
//   - FIFO without eviction (discipline fifo, door open or tail-drop): a
//     request released later waits behind it, so nothing after its
//     admission changes when it starts. Its fate is decided at admission,
//     as the plain client model does, by the queue itself, which decides
//     as a request enters (server.NewQueueDecidingAtEntry, admit): the
//     door (the queue at its release), then its pick by the workers' FIFO
//     schedule: past the end cut it is shed at the end; expired at its
//     pick (expire at-dequeue) it is shed then; else it is served. The
//     queue reports the fate before the offer returns, and the client
//     reacts then. An attempt that would not start before its client
//     gives up is dropped unqueued under cancel_on_timeout
//     "drop-unstarted" (the plain model's rule: it never counts in the
//     system). With the plain server this is the plain client model, to
//     the bit (TestClientsQueueIsTheClientModel); the queue deciding at
//     entry is the queue making its picks, outcome by outcome and count by
//     count (server's TestDecidingAtEntryIsTheQueue).
//   - LIFO, or a priority door: a later request can overtake or evict it,
//     so its fate is decided when it happens (admitByEvents). The queue is
//     run by events: an attempt is offered at its release (an
//     eventRelease; released at once, it is offered before the next
//     attempt at its time), its client's timeout is an eventTimeout at
//     t + timeout_ms, and the queue's picks and the end of a cut window
//     are events of the loop under its rule (a pick at p before a timeout at p, and a
//     release at p before its own timeout at p: an attempt started at its
//     client's deadline has started, as at admission;
//     TestClientsQueueReleaseAtTheTimeout). Served at a pick: the sojourn
//     max(S, round(finish - t)) decides as in the plain model (beyond timeout_ms it is abandoned and
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

// admittedBufs are a worker's reusable records of the client model on a queue.
type admittedBufs struct {
	recs []admitted
	free []int32
}

// What an admitted attempt is doing.
const (
	admittedGated     uint8 = iota // admitted, its release still to come (by events)
	admittedWaiting                // in the queue (by events)
	admittedCancelled              // its client gave up before its release: dropped there
	admittedDone                   // served, shed or dropped
)

// admitted is an admitted attempt the queue holds: its id is its index.
type admitted struct {
	a         attempt
	abandonAt float64 // when its client gives up (+Inf: never)
	pos       int64   // its place in the queue (LastPos), while it waits
	state     uint8
	release   float64 // when the gate released it (by events: its release event)
	instance  int32   // the instance that admitted it (a replicated gate)
	gaveUp    bool    // its client gave up on it
	timer     bool    // its timeout event is pending
}

// queueClients is one point of the client model on a queue; it is the
// queue's Sink.
type queueClients struct {
	r          *clientRun
	q          *server.Queue
	qr         *queueRun // the queue model's measures: p99 per finish window
	bufs       *admittedBufs
	in         *Instruments
	m          *experiments.Metrics
	cm         *experiments.ClientMetrics
	s          *experiments.Series
	lazy       bool // fates decided by events (lifo, priority door)
	cancel     bool
	classes    bool
	deadlineMS float64
	windowMS   float64
	now        float64 // the time of the pick or event being processed

	goodputWindow metrics.WindowCursor // the series window of the on-time finishes

	classOK          []int
	busyMS           float64
	serverSojournMax float64
	endToEndMax      float64
	entering         entering                 // decided at admission: the attempt the queue is offered
	done             *completions             // nil: the gate does not observe
	fate             func(limiter.Completion) // a test's fate log (Switches.Fate)
	hooks            *gateHooks
}

// entering is the attempt offered to a queue that decides at entry
// (server.NewQueueDecidingAtEntry): its fate comes back from the offer
// (Served, Shed), before it returns. A copy: a pointer to the loop's
// attempt kept here would move that attempt to the heap, once per event.
type entering struct {
	a                  attempt
	instance           int32
	release, abandonAt float64
}

func (x *queueClients) newRec(a *attempt) int32 {
	b := x.bufs
	var id int32
	if n := len(b.free); n > 0 {
		id = b.free[n-1]
		b.free = b.free[:n-1]
	} else {
		id = int32(len(b.recs))
		b.recs = append(b.recs, admitted{})
	}
	b.recs[id] = admitted{a: *a, abandonAt: math.Inf(1)}
	return id
}

func (x *queueClients) release(id int32) { x.bufs.free = append(x.bufs.free, id) }

// served measures attempt a, released at release and served from start
// to finish, and reacts as its client does; gaveUp: its client had given
// up already.
func (x *queueClients) served(a *attempt, inst int32, release, start, finish, abandonAt float64, gaveUp bool) {
	r, cm := x.r, x.cm
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
	out := r.answerOutcome(a, sojourn, x.deadlineMS, gaveUp)
	if x.done != nil {
		x.done.add(completionOf(a, inst, release, finish, out))
	}
	noteFate(x.fate, a, inst, release, finish, out)
	if out == limiter.OnTime && x.classes {
		x.classOK[a.class]++
		x.s.Classes[a.class].Success[int(metrics.WindowIndex(t, x.windowMS))]++
	}
	r.answered(a, out, gaveUp, finish, abandonAt, x.now, &x.goodputWindow)
}

// failed reacts to attempt a, released at release by instance inst and
// shed by the server at failAt, its client giving up at abandonAt (decided
// at admission).
func (x *queueClients) failed(a *attempt, inst int32, release, failAt, abandonAt float64) {
	if x.done != nil {
		x.done.add(completionOf(a, inst, release, failAt, limiter.Dropped))
	}
	noteFate(x.fate, a, inst, release, failAt, limiter.Dropped)
	if failAt > abandonAt {
		x.cm.Abandoned++
		x.r.retry(a, abandonAt, abandonAt)
		return
	}
	x.r.retry(a, failAt, failAt)
}

// Served is the queue's report of a served attempt.
func (x *queueClients) Served(id int32, release, start, finish float64) {
	if !x.lazy {
		e := &x.entering
		x.qr.finishAt(e.a.t, finish)
		x.m.Served++
		x.served(&e.a, e.instance, release, start, finish, e.abandonAt, false)
		return
	}
	rec := &x.bufs.recs[id]
	x.qr.finishAt(rec.a.t, finish)
	x.m.Served++
	rec.state = admittedDone
	a := rec.a
	x.served(&a, rec.instance, release, start, finish, rec.abandonAt, rec.gaveUp)
	if rec = &x.bufs.recs[id]; !rec.timer {
		x.release(id)
	}
}

// Shed is the queue's report of an attempt it shed.
func (x *queueClients) Shed(id int32, at float64, _ server.Why) {
	if !x.lazy {
		e := &x.entering
		x.m.Shed++
		x.qr.bufs.shedWait.Record(float64(metrics.ClampMS(at - e.a.t)))
		x.failed(&e.a, e.instance, e.release, at, e.abandonAt)
		return
	}
	rec := &x.bufs.recs[id]
	x.m.Shed++
	x.qr.bufs.shedWait.Record(float64(metrics.ClampMS(at - rec.a.t)))
	rec.state = admittedDone
	if x.done != nil {
		x.done.add(completionOf(&rec.a, rec.instance, rec.release, at, limiter.Dropped))
		rec = &x.bufs.recs[id]
	}
	noteFate(x.fate, &rec.a, rec.instance, rec.release, at, limiter.Dropped)
	if !rec.gaveUp {
		a := rec.a
		x.r.retry(&a, at, at)
	}
	if rec = &x.bufs.recs[id]; !rec.timer {
		x.release(id)
	}
}

// timeout is the client of attempt id giving up on it at t (by events).
func (x *queueClients) timeout(id int32, t float64) {
	rec := &x.bufs.recs[id]
	rec.timer = false
	if rec.state == admittedDone {
		x.release(id)
		return
	}
	rec.gaveUp = true
	x.cm.Abandoned++
	if x.cancel {
		x.cm.Dropped++
		if x.done != nil {
			x.done.add(completionOf(&rec.a, rec.instance, rec.release, t, limiter.TimedOut))
		}
		noteFate(x.fate, &rec.a, rec.instance, rec.release, t, limiter.TimedOut)
		if rec.state == admittedWaiting {
			x.q.Drop(rec.pos)
			rec.state = admittedDone
		} else {
			rec.state = admittedCancelled
		}
	}
	a := rec.a
	done := rec.state == admittedDone
	x.r.retry(&a, t, t)
	if done {
		x.release(id)
	}
}

// offer is the release of attempt id to the queue at t (by events), with
// the release's measures.
func (x *queueClients) offer(id int32, t float64, rel *releaseTally) {
	rec := &x.bufs.recs[id]
	if rec.state == admittedCancelled {
		rec.state = admittedDone
		x.release(id)
		return
	}
	a := rec.a
	if x.q.OfferFor(id, a.class, a.t, t, a.svc) {
		rec = &x.bufs.recs[id]
		rec.state, rec.pos = admittedWaiting, x.q.LastPos()
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

// admitByEvents holds admitted attempt at, released at release, its client
// giving up at abandonAt (+Inf: never), for the events that decide its
// fate: its release and its timeout.
func (x *queueClients) admitByEvents(at *attempt, release, abandonAt float64, rel *releaseTally) {
	t := at.t
	fl := x.r.flags[at.part]
	id := x.newRec(at)
	rec := &x.bufs.recs[id]
	rec.abandonAt, rec.state = abandonAt, admittedGated
	rec.release, rec.instance = release, x.hooks.instance()
	rec.timer = fl.timeout
	// A later release is numbered before the timeout: released at
	// its client's deadline, it is offered first, and the pick at
	// that instant comes before the timeout (an attempt that starts
	// at its client's deadline has started, as at admission).
	if release != t {
		x.r.heap.pushEvent(release, eventRelease, id)
	}
	if fl.timeout {
		x.r.heap.pushEvent(abandonAt, eventTimeout, id)
	}
	if release == t {
		x.offer(id, t, rel) // released at once: before the next attempt at t
	}
}

// admit decides admitted attempt at's fate at its admission: released at
// release, its client giving up at abandonAt (+Inf: never), it is offered
// to the queue, which decides at entry (server.NewQueueDecidingAtEntry)
// and reports its fate before the offer returns (Served, Shed: the
// client's reaction). An attempt that would start after its client gives
// up is dropped unqueued under drop-unstarted.
func (x *queueClients) admit(at *attempt, release, abandonAt float64, rel *releaseTally) {
	r := x.r
	fl := r.flags[at.part]
	inst := x.hooks.instance()
	r.lastQuery = max(r.lastQuery, release)
	if x.cancel && fl.timeout && x.q.StartAt(release) > abandonAt {
		r.droppedUnstarted(at, inst, release, abandonAt, x.done, x.fate)
		return
	}
	x.entering = entering{a: *at, instance: inst, release: release, abandonAt: abandonAt}
	x.q.OfferFor(0, at.class, at.t, release, at.svc)
	rel.add(x.s, x.in, release, x.q.InSystem(release))
}
