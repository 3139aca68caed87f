package simulate

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// The event loop: every point but the forward pass's (gate → FIFO server
// with no client behaviour and a gate without hooks, simulate.go, its fast
// path) runs here, one event at a time. An event is (time, sequence, kind,
// id):
//
//   - eventAttempt: an attempt reaches the gate. The arrival list's first
//     attempts are peeked from the list (sequence = their index), never
//     scheduled; a retry or a closed-loop user's request is scheduled when
//     the attempt it follows is processed (id: its slot in the heap's slab).
//   - eventRelease: an admitted attempt is released to the queue (id: its
//     record, queueClients' admitted), when its fate is decided by events.
//   - eventTimeout: an admitted attempt's client gives up on it (id: its
//     record), when its fate is decided by events.
//   - eventComplete, eventSync: the gate's hooks (hooks.go): an
//     admitted request's completion told to a gate that observes them, a
//     replicated gate's sync of its instances.
//   - eventPick: the queue's next pick (server.Queue.NextPickMS, made with
//     Pick), where the loop makes the picks (fates decided by events, or a
//     queue model whose gate has hooks). One pick event stands at a time:
//     a step that moves the next pick (an offer, a pick, a drop, the
//     cut, the queue's own picks before a later release) leaves the old
//     event stale, skipped when it comes, and schedules the new one
//     (schedulePick).
//   - eventCut: the end of a cut window (end "cut"), scheduled at the
//     point's start where the loop makes the picks: what still waits is
//     shed then (server.Queue.CutEnd).
//
// Sequence numbers count every event in the order it is made, the list's
// arrivals first (0 … n-1): the list's arrival at a time runs before any
// scheduled event at it (the forward pass's model, fed in batches, numbers
// its events from 0, and its arrivals still come first at their time).
// A pick and the end cut are not numbered: the cut's key is below every
// sequence, a pick's above every one.
//
// The rule, the one tie rule of a point: events run in (time, sequence)
// order, the list's arrival at a time before every scheduled event at it
// but the end cut; the end cut before every event at its time; a pick at
// t after the events at t numbered before the first timeout pending at t,
// and before that timeout and every event at t after it (after every
// event at t when no timeout is pending at t). So a request released at
// p before any timeout at p enters before the pick at p, and one picked
// at its client's deadline has started (server.PickFirst, the queue's
// pick rule, compares a pick with the next event at its turn).
//
// That exception is the one order the key cannot hold, and none of the
// loop's sources is merged beside the heap for it: the pick event is in
// the heap, and a timeout reaching the top lets it go first. No fixed
// place of picks among the kinds gives the order every model has always
// run by (the goldens hold it). Under lifo, let attempt A wait in the
// queue with its client's deadline at p (its timeout, sequence 3), attempt
// B's release be at p too (sequence 5, scheduled after A's timeout), and
// the worker free at p. The order is: the pick (A starts at its deadline:
// it has started, and is served), A's timeout (nothing to drop), B's
// release (B enters and waits). With picks after every event at their
// time, A's timeout runs first: A is abandoned (dropped under
// drop-unstarted) and its retry drawn. With the kinds ranked release <
// pick < timeout, B enters first and lifo picks B, not A. The pick's
// place is "just before the first timeout pending at its time": it
// depends on what is pending when it comes, which the heap tells at the
// timeout's turn. (TestTieRule runs this case.)
//
// Picks the loop does not make, under the same rule (server.PickFirst)
// inside the queue: the queue model without hooks (the list alone, and
// each offer makes the picks before its release), and with hooks the
// picks before a release a gate delays (the queue model offers a request
// at its arrival's turn, at its release, as the forward pass does). A
// queue deciding at entry (the client model's FIFO admissions) makes none.
//
// Under that rule each model adds its steps: modelPlain, the forward
// pass's own step one arrival at a time (for a gate with hooks); modelQueue,
// the queue model without clients (queue.go); the client model
// (clients.go) on the plain server (plainServer) or on a queue,
// its fates decided at admission or by events (clients_queue.go).
// The gate and its chain's stages sit inside limiter.Gate; classes and
// priority doors inside server.Queue, reached by the events above. A
// trigger (the config's, or a flash crowd) acts on no point's run: it is
// the interval recovery is measured after, from the series, once the run
// is done (recovery.go), so it is no event. The heap and the records
// are a worker's, kept across points: the loop allocates nothing per event
// in steady state.

// eventKind is what an event does.
type eventKind uint8

const (
	eventCut      eventKind = iota // the end of a cut window (key 0: before every other event at its time)
	eventAttempt                   // an attempt reaches the gate
	eventRelease                   // an admitted attempt is released to the queue (by events)
	eventTimeout                   // an admitted attempt's client gives up (by events)
	eventComplete                  // an admitted request's completion, told to a gate that observes (hooks.go)
	eventSync                      // a replicated gate's sync of its instances (hooks.go)
	eventPick                      // the queue's next pick (pickKey: after every other event at its time)
)

// A pending event's key: sequence<<eventSeqShift | kind<<eventIDBits | id.
// Sequence numbers are unique, so the kind and id never decide an order.
// Two keys are not numbered: the end of a cut window's, 0, below every
// sequence, and a pick's, pickKey, the sequence field's largest value
// (never a number's), above every one.
const (
	eventIDBits   = 24 // at most 2^24 attempts wait, and 2^24 records are held, at once
	eventKindBits = 3
	eventSeqShift = eventIDBits + eventKindBits
	eventSeqLimit = 1<<(64-eventSeqShift) - 1 // sequences are below it: the largest value is the picks'

	cutKey  = uint64(eventCut) << eventIDBits
	pickKey = uint64(eventSeqLimit)<<eventSeqShift | uint64(eventPick)<<eventIDBits
)

// pending is a scheduled event in the heap: the bits of its time (a time
// is never negative, so its bits order as it does) and its key. Entries of
// 16 bytes compared as one 128-bit number (without a branch) keep the
// heap's sifting cheap: its comparisons of random times are what it costs.
type pending struct {
	key uint64 // low word
	tb  uint64 // high word: math.Float64bits(t)
}

// less is 1 when p orders before q by (t, sequence), else 0.
func (p pending) less(q pending) int {
	_, borrow := bits.Sub64(p.key, q.key, 0)
	_, borrow = bits.Sub64(p.tb, q.tb, borrow)
	return int(borrow)
}

func (p pending) kind() eventKind { return eventKind(p.key >> eventIDBits & (1<<eventKindBits - 1)) }
func (p pending) id() int32       { return int32(p.key & (1<<eventIDBits - 1)) }

// eventHeap is a binary min-heap of pending events by (t, sequence), the
// attempts of eventAttempt events in a slab of slots with a free list. It
// numbers the events (seq). Its slices are kept across points: pushes
// allocate only while they grow.
//
// An attempt is written in its slot in place (reserve, then push), not
// passed by value: a copy of fields just stored one by one reads them back
// in wider loads, which the processor cannot forward from its stores, and
// stalls (it cost the client loop about a tenth of its time).
type eventHeap struct {
	h        []pending
	slab     []attempt
	free     []int32
	reserved int32 // the slot reserve gave out, which push schedules
	seq      int64 // the next event's sequence number
	err      error // the first scheduling failure (too many events)
}

// reset empties the heap; the first event scheduled is numbered first.
func (q *eventHeap) reset(first int64) {
	q.h, q.slab, q.free = q.h[:0], q.slab[:0], q.free[:0]
	q.seq, q.err = first, nil
}

func (q *eventHeap) len() int { return len(q.h) }

// top is the earliest pending event (the heap is not empty).
func (q *eventHeap) top() pending { return q.h[0] }

// topT is the time of the earliest pending event (the heap is not empty).
func (q *eventHeap) topT() float64 { return math.Float64frombits(q.h[0].tb) }

// reserve is the slot of the next attempt to push, zeroed: the caller
// fills it, then calls push.
func (q *eventHeap) reserve() *attempt {
	if n := len(q.free); n > 0 {
		q.reserved = q.free[n-1]
		q.free = q.free[:n-1]
		q.slab[q.reserved] = attempt{}
	} else {
		q.reserved = int32(len(q.slab))
		q.slab = append(q.slab, attempt{})
	}
	return &q.slab[q.reserved]
}

// push schedules the reserved attempt at its t (not negative), numbering
// it; on an error its slot is freed and the error kept (q.err).
func (q *eventHeap) push() {
	slot := q.reserved
	a := &q.slab[slot]
	a.seq = q.seq
	if !q.schedule(a.t, eventAttempt, slot) {
		q.free = append(q.free, slot)
	}
}

// pushEvent schedules an event of kind on record id at t.
func (q *eventHeap) pushEvent(t float64, kind eventKind, id int32) {
	q.schedule(t, kind, id)
}

// schedule numbers and pushes an event; false (the error kept) when it
// cannot be.
func (q *eventHeap) schedule(t float64, kind eventKind, id int32) bool {
	var err error
	switch {
	case id >= 1<<eventIDBits:
		what := "attempts wait"
		switch kind {
		case eventRelease, eventTimeout:
			what = "admitted attempts are held"
		case eventComplete:
			what = "completions wait to be told"
		}
		err = fmt.Errorf("more than %d %s at once", 1<<eventIDBits, what)
	case uint64(q.seq) >= eventSeqLimit:
		err = fmt.Errorf("more than %d events in one point", uint64(eventSeqLimit))
	case !(t >= 0):
		err = fmt.Errorf("an attempt scheduled at %g ms", t)
	}
	if err != nil {
		if q.err == nil {
			q.err = err
		}
		return false
	}
	e := pending{key: uint64(q.seq)<<eventSeqShift | uint64(kind)<<eventIDBits | uint64(id), tb: math.Float64bits(t)}
	q.seq++
	q.h = append(q.h, e)
	q.up(len(q.h)-1, e)
	return true
}

// pushKey pushes an event that is not numbered (cutKey, pickKey) at t
// (not negative).
func (q *eventHeap) pushKey(t float64, key uint64) {
	e := pending{key: key, tb: math.Float64bits(t)}
	q.h = append(q.h, e)
	q.up(len(q.h)-1, e)
}

// up moves e from hole i up to its place.
func (q *eventHeap) up(i int, e pending) {
	s := q.h
	for i > 0 {
		p := (i - 1) / 2
		if e.less(s[p]) == 0 {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = e
}

// pop removes the earliest pending event and returns it. It moves the hole
// at the top down to a leaf along the earlier children (one comparison a
// level, without a branch), then the last entry up from there (Floyd).
func (q *eventHeap) pop() pending {
	s := q.h
	top := s[0]
	last := len(s) - 1
	x := s[last]
	q.h = s[:last]
	if last > 0 {
		q.sift(x)
	}
	return top
}

// replaceTop replaces the earliest pending event by one that is not
// numbered (pickKey) at t: a pop and a push in one pass, which stops as
// soon as the new event is in place (the next pick is often the earliest
// event still).
func (q *eventHeap) replaceTop(t float64, key uint64) {
	x := pending{key: key, tb: math.Float64bits(t)}
	s := q.h
	n := len(s)
	i := 0
	for {
		c := 2*i + 1
		if c+1 < n {
			c += s[c+1].less(s[c])
		} else if c >= n {
			break
		}
		if x.less(s[c]) == 1 {
			break
		}
		s[i] = s[c]
		i = c
	}
	s[i] = x
}

// sift puts x in the hole at the top (the heap is not empty).
func (q *eventHeap) sift(x pending) {
	s := q.h
	n := len(s)
	i := 0
	for {
		c := 2*i + 1
		if c+1 < n {
			c += s[c+1].less(s[c])
		} else if c >= n {
			break
		}
		s[i] = s[c]
		i = c
	}
	q.up(i, x)
}

// popAttempt removes the earliest pending event, an attempt, into *a.
func (q *eventHeap) popAttempt(a *attempt) {
	slot := q.pop().id()
	*a = q.slab[slot]
	q.free = append(q.free, slot)
}

// loopModel is what a point's events do.
type loopModel uint8

const (
	modelPlain         loopModel = iota // the forward pass's model, for a gate with hooks (hooks.go)
	modelQueue                          // the queue model: arrivals through the gate into server.Queue
	modelClients                        // the client model on the plain server
	modelClientsQueue                   // the client model on a queue, fates decided at admission
	modelClientsEvents                  // the client model on a queue, fates decided by events
)

// pointLoop is one point's event loop: the sources (the arrival list,
// peeked, and the heap) and the model that takes their events.
type pointLoop struct {
	model     loopModel
	a         *workload.Arrivals
	classes   []uint8 // each arrival's class (nil without classes)
	serviceMS float64
	heap      *eventHeap

	forwardPass *ForwardPass  // modelPlain
	queue       *queueRun     // modelQueue
	r           *clientRun    // the client models
	plain       *plainServer  // modelClients
	x           *queueClients // modelClientsQueue, modelClientsEvents
	users       *userClasses  // closed-loop requests' classes (nil without)
	q           *server.Queue // modelClientsEvents (and modelQueue with drivePicks): its picks and its end cut
	endMS       float64       // the end of a cut window (+Inf without), with q
	rel         *releaseTally
	windows     metrics.WindowCursor // the series window of the attempts, which come in order

	// The queue's picks and its end cut as events (picks: the loop makes
	// them).
	picks      bool
	pickMS     float64 // the time of the pick event that stands (+Inf: none)
	stalePicks int     // pick events in the heap that no longer stand
	cutPending bool    // the end cut's event is in the heap

	// The gate's hooks (hooks.go).
	done       *completions // nil: the gate does not observe
	drivePicks bool         // modelQueue observed: the loop makes the queue's picks
	syncer     limiter.Syncer
	syncEndMS  float64
	batch      workload.Arrivals // modelPlain: the batch being fed
	hooks      gateHooks
	sw         *Switches
}

// startHooks finds the hooks of the point's gate (made by pointGateWith)
// once the heap is ready: the completions it observes (in the worker's
// buffers, in), its syncs before endMS (the release horizon).
func (l *pointLoop) startHooks(gate limiter.Gate, endMS float64, in *Instruments) error {
	l.hooks = hooksOf(gate, in)
	in.watch(&l.hooks)
	l.done = newCompletions(&l.hooks, l.heap, &in.done)
	return l.startSyncs(&l.hooks, endMS)
}

// ended checks what must hold when a point's events are all run: the heap
// is empty (and its counts of stale picks and of the end cut are 0),
// every completion was told to the gate, and (on a queue) every admitted
// attempt's record was freed.
func (l *pointLoop) ended() error {
	if n := l.heap.len(); n > 0 {
		return fmt.Errorf("%d events left at the end of the point", n) // cannot happen: drain empties the heap
	}
	if n := l.done.pending(); n > 0 {
		return fmt.Errorf("%d completions never told to the gate", n) // cannot happen
	}
	if l.stalePicks != 0 || l.cutPending {
		// The heap is empty: no stale pick nor the end cut is in it.
		return fmt.Errorf("%d stale picks and the end cut (%t) counted in an empty heap", l.stalePicks, l.cutPending) // cannot happen
	}
	if x := l.x; x != nil {
		if n := len(x.bufs.recs) - len(x.bufs.free); n > 0 {
			return fmt.Errorf("%d admitted attempts' records never freed", n) // cannot happen
		}
	}
	return nil
}

// startPicks makes the queue's picks and its end cut events of the loop
// (the point's model decides by events, or its gate has hooks): the end
// of a cut window at endMS (+Inf: none) is scheduled now.
func (l *pointLoop) startPicks(q *server.Queue, endMS float64) {
	l.picks, l.q, l.endMS, l.pickMS, l.stalePicks = true, q, endMS, math.Inf(1), 0
	if !math.IsInf(endMS, 1) {
		l.heap.pushKey(endMS, cutKey)
		l.cutPending = true
	}
}

// schedulePick keeps the pick event at the queue's next pick: a step
// that changed it (an offer, a pick, a drop, the cut; the queue's own picks
// before a later release) leaves the event it had as stale (skipped when
// it comes) and schedules the new one.
func (l *pointLoop) schedulePick() {
	p := l.q.NextPickMS()
	if p == l.pickMS {
		return
	}
	if !math.IsInf(l.pickMS, 1) {
		l.stalePicks++
	}
	l.pickMS = p
	if !math.IsInf(p, 1) {
		l.heap.pushKey(p, pickKey)
	}
}

// eventsLeft is whether the heap holds an event that will run: not a
// stale pick, nor the end cut (which sheds what waits, and nothing after).
func (l *pointLoop) eventsLeft() bool {
	n := l.heap.len() - l.stalePicks
	if l.cutPending {
		n--
	}
	return n > 0
}

// run runs the point's events in the rule's order until none is left (or
// ctx is done, checked once per 2^20 events); with batch, until the list
// is done (the forward pass's model, fed a batch at a time: the events
// after it wait for the next batch, or for drain).
func (l *pointLoop) run(ctx context.Context, batch bool) error {
	a, h := l.a, l.heap
	if l.model == modelQueue && !l.drivePicks && h.len() == 0 {
		// One source, the list, and nothing ever scheduled: its arrivals
		// in order.
		for i := range a.T {
			if i&(1<<20-1) == 0 && i > 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := l.queue.arrive(i); err != nil {
				return err
			}
		}
		return nil
	}
	next := 0 // the list's next arrival
	last := math.Inf(-1)
	for steps := 0; ; steps++ {
		if steps&(1<<20-1) == 0 && steps > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if l.picks {
			l.schedulePick()
		}
		// The earliest event: the list's (older than every scheduled one
		// at its time but the end cut) or the heap's.
		list := false
		if next < len(a.T) {
			list = h.len() == 0
			if !list {
				tt := h.topT()
				list = a.T[next] < tt || a.T[next] == tt && h.top().key != cutKey
			}
		}
		t, kind := math.Inf(1), eventAttempt
		switch {
		case list:
			t = a.T[next]
		case batch && next == len(a.T):
			return nil
		case h.len() > 0:
			t, kind = h.topT(), h.top().kind()
		default:
			return nil
		}
		if !(t >= last) {
			return fmt.Errorf("an event at %g ms after one at %g ms", t, last) // cannot happen: the sources are in order
		}
		last = t
		if l.x != nil {
			l.x.now = t
		}
		if !list {
			switch {
			case kind == eventPick:
				// The queue's pick, if it still stands; its event becomes
				// the next pick's.
				if t != l.pickMS {
					h.pop()
					l.stalePicks--
					continue
				}
				l.q.Pick()
				if top := h.top(); top.key != pickKey || top.tb != math.Float64bits(t) {
					// The pick scheduled an event before its own event
					// (a request shed at its pick: its completion then,
					// or its retry): its own stays, stale.
					l.stalePicks++
					l.pickMS = math.Inf(1)
				} else if p := l.q.NextPickMS(); !math.IsInf(p, 1) {
					h.replaceTop(p, pickKey)
					l.pickMS = p
				} else {
					h.pop()
					l.pickMS = p
				}
				continue
			case kind == eventCut:
				// The window ends: what still waits is shed at its end,
				// before any event at it.
				h.pop()
				l.cutPending = false
				l.q.CutEnd()
				continue
			case l.picks && server.PickFirst(l.pickMS, t, kind == eventTimeout):
				// A pick at a timeout's time comes first (server.PickFirst:
				// an attempt that starts at its client's deadline has
				// started); its event stays and stands while the next
				// pick is at t too.
				l.q.Pick()
				continue
			case kind >= eventComplete:
				// The gate's hooks (hooks.go).
				e := h.pop()
				if kind == eventComplete {
					l.done.deliver(e.id())
				} else if err := l.sync(t, next < len(a.T)); err != nil {
					return err
				}
				continue
			}
		}
		switch l.model {
		case modelPlain:
			// The forward pass's own step, one arrival at a time.
			if err := l.forwardPass.forward(a.T[next:next+1], a.Client[next:next+1]); err != nil {
				return err
			}
			next++
			continue
		case modelQueue:
			// No client behaviour: no attempt is ever scheduled.
			if err := l.queue.arrive(next); err != nil {
				return err
			}
			next++
			continue
		}
		if kind != eventAttempt {
			e := h.pop()
			if kind == eventTimeout {
				l.x.timeout(e.id(), t)
			} else {
				l.x.offer(e.id(), t, l.rel)
			}
			continue
		}
		var at attempt
		if list {
			at.arrival(a, next, l.serviceMS)
			if l.classes != nil {
				at.class = l.classes[next]
			}
			next++
		} else {
			h.popAttempt(&at)
			if l.users != nil && at.user && at.n == 0 {
				at.class = l.users.next()
			}
		}
		wi := int(l.windows.Index(t))
		if l.classes != nil && at.n == 0 {
			l.r.s.Classes[at.class].Offered[wi]++
		}
		release, abandonAt, ok, err := l.r.atGate(&at, wi)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		switch l.model {
		case modelClients:
			l.plain.serve(l.r, &at, release, abandonAt)
		case modelClientsQueue:
			l.x.admit(&at, release, abandonAt, l.rel)
		default:
			l.x.admitByEvents(&at, release, abandonAt, l.rel)
		}
	}
}

// drain tells the gate's hooks the events left after the last arrival
// (the forward pass's model fed in batches) or after the queue finished
// (completions of the requests it served at its end), in order; attempts
// scheduled as the queue finished are not run (nor are they without hooks).
func (l *pointLoop) drain() error {
	h := l.heap
	for h.len() > 0 {
		t := h.topT()
		switch e := h.pop(); e.kind() {
		case eventComplete:
			l.done.deliver(e.id())
		case eventSync:
			if err := l.sync(t, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// feed runs the forward pass's model over the next batch of arrivals
// (times ts from clients cs), with the events before them.
func (l *pointLoop) feed(ctx context.Context, ts []float64, cs []int32) error {
	l.batch.T, l.batch.Client = ts, cs
	return l.run(ctx, true)
}

// simulateLoop runs one point of cfg (the point's config) through the
// event loop by model and measures it: the queue model as the forward pass
// does, with what only a queue has (requests shed and how long they
// waited, the served p99 per finish window, the classes); the client model
// with the client columns (ClientMetrics), and on a queue with the queue
// model's measures beside.
func simulateLoop(ctx context.Context, cfg *experiments.Config, a *workload.Arrivals, classes []uint8, spec *limiter.Spec, params limiter.Params, in *Instruments, pt *experiments.Point, model loopModel, sw *Switches) error {
	l := &pointLoop{model: model, a: a, serviceMS: cfg.Server.ServiceMS, sw: sw}
	var finish func() error
	var err error
	switch model {
	case modelQueue:
		finish, err = l.startQueue(cfg, classes, spec, params, in, pt)
	case modelClients:
		finish, err = l.startClients(cfg, spec, params, in, pt)
	default:
		finish, err = l.startClientsQueue(cfg, classes, spec, params, in, pt)
	}
	if err != nil {
		return err
	}
	if err := l.run(ctx, false); err != nil {
		return err
	}
	if l.heap.err != nil {
		return l.heap.err
	}
	if err := finish(); err != nil {
		return err
	}
	if err := l.drain(); err != nil {
		return err
	}
	return l.ended()
}

// startQueue readies the queue model's point; finish measures it.
func (l *pointLoop) startQueue(cfg *experiments.Config, classes []uint8, spec *limiter.Spec, params limiter.Params, in *Instruments, pt *experiments.Point) (finish func() error, err error) {
	a := l.a
	durationMS := cfg.Workload.DurationMS
	serviceMS, deadlineMS := cfg.Server.ServiceMS, cfg.Server.DeadlineMS
	windowMS := cfg.SeriesWindow()
	windows := int(metrics.WindowCount(durationMS, windowMS))
	s := &experiments.Series{
		Offered:     make([]int32, windows),
		Rejected:    make([]int32, windows),
		Released:    releaseSeries(windows, spec, params, windowMS),
		InSystemMax: releaseSeries(windows, spec, params, windowMS),
	}
	m := new(experiments.Metrics)
	r := &queueRun{
		a: a, classes: classes, in: in, s: s, m: m,
		scoreEnd:   cfg.ScoreEndMS(deadlineMS),
		serviceMS:  serviceMS,
		deadlineMS: deadlineMS,
		durationMS: durationMS,
		variable:   a.ServiceMS != nil,
		windowMS:   windowMS,
	}
	nclass := len(cfg.Classes)
	r.classOK = r.startBufs(in, classes != nil, nclass, windows)
	if cfg.Server.Shaped() {
		return nil, errShapedQueue
	}
	srv := server.NewQueue(cfg.Server, durationMS, nclass, r)
	gate, err := pointGateWith(spec, params, a.Clients, srv, l.sw)
	if err != nil {
		return nil, err
	}
	in.startPoint(cfg)
	horizonMS := releaseHorizonMS(cfg, spec, params)
	r.maxFinishWindows = int(math.Ceil(horizonMS / windowMS))

	nc := len(a.Clients)
	r.clients = make([]experiments.ClientResult, nc)
	r.fair = new(fairWindows)
	r.fair.start(in, nc, cfg.Metrics.FairnessWindowMS, durationMS)
	r.gate, r.spec, r.srv, r.horizonMS = gate, spec, srv, horizonMS
	r.fate = l.sw.fateLog()
	r.lastRelease = math.Inf(-1)
	rel := newReleaseTally(in, windowMS, in.keepReleases(len(a.T)), len(a.T))
	r.rel = &rel
	r.arrivalWindow = metrics.NewWindowCursor(windowMS)
	l.queue, l.rel, l.heap = r, &rel, in.loopHeap(int64(len(a.T))) // no attempt is scheduled: arrivals only
	if err := l.startHooks(gate, horizonMS, in); err != nil {
		return nil, err
	}
	r.done, r.hooks = l.done, &l.hooks
	if l.done != nil || r.fate != nil {
		r.admittedAt = make([]admission, len(a.T))
	}
	if l.done != nil || l.syncer != nil {
		// The queue's picks by the loop: each completion is known at its
		// pick, before the events after it.
		endMS := math.Inf(1)
		if cfg.Server.Option(server.OptEnd) == server.EndCut {
			endMS = durationMS
		}
		l.drivePicks = true
		l.startPicks(srv, endMS)
	}
	return func() error {
		srv.Finish()
		r.flushFinishes()
		if r.variable {
			r.sortFinishes()
		}
		if r.finishOrderViolated {
			return fmt.Errorf("the queue server finished requests out of order") // cannot happen: fixed service, FIFO picks
		}
		seconds := cfg.ScoreSeconds(deadlineMS)
		m.Arrivals = r.arrivals
		m.Admitted = in.gate.Count()
		m.Rejected = m.Arrivals - m.Admitted
		m.Served = r.served
		m.Shed = r.shed
		measureCommon(m, in, seconds, &rel, r.serverSojournMax)
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
			classMetrics(cfg, m, s, r.classOK, r.bufs.classSojourn, seconds)
		}
		m.Recovery = recovery(cfg, s, windowMS)
		l.hooks.file(m)
		flowBounds(cfg, spec, params, clientWeights(a.Clients), r.clients)
		finishPoint(cfg, pt, spec, params, in, m, s, r.clients, r.fair, len(a.Groups), a.GroupOf, r.gateMax, r.endToEndMax,
			cfg.Server.Option(server.OptDiscipline) == server.FIFO, rel.keep)
		return nil
	}, nil
}

// startClients readies the client model's point on the plain server;
// finish measures it.
func (l *pointLoop) startClients(cfg *experiments.Config, spec *limiter.Spec, params limiter.Params, in *Instruments, pt *experiments.Point) (finish func() error, err error) {
	a := l.a
	srv := server.New(cfg.Server)
	gate, err := pointGateWith(spec, params, a.Clients, srv, l.sw)
	if err != nil {
		return nil, err
	}
	in.startPoint(cfg)

	durationMS := cfg.Workload.DurationMS
	nc := len(a.Clients)
	r, totalUsers, err := newClientRun(cfg, a, pt, in)
	if err != nil {
		return nil, err
	}
	windowMS := cfg.SeriesWindow()
	s := clientSeries(durationMS, windowMS)
	clients := make([]experiments.ClientResult, nc)
	fair := new(fairWindows)
	fair.start(in, nc, cfg.Metrics.FairnessWindowMS, durationMS)
	m, cm := new(experiments.Metrics), new(experiments.ClientMetrics)
	horizonMS := releaseHorizonMS(cfg, spec, params)
	r.startGate(gate, srv, spec, horizonMS, in, m, cm, &s, clients, fair)

	rel := newReleaseTally(in, windowMS, in.keepReleases(len(a.T)), len(a.T))
	p := &plainServer{
		fate:         l.sw.fateLog(),
		srv:          srv,
		cancel:       cfg.Server.Option(server.OptCancel) == server.CancelDrop,
		deadlineMS:   cfg.Server.DeadlineMS,
		in:           in,
		rel:          &rel,
		finishWindow: metrics.NewWindowCursor(windowMS),
	}
	l.r, l.plain, l.heap, l.rel = r, p, r.heap, &rel
	l.windows = metrics.NewWindowCursor(windowMS)
	if err := l.startHooks(gate, horizonMS, in); err != nil {
		return nil, err
	}
	p.done, p.hooks = l.done, &l.hooks
	return func() error {
		clientTotals(cfg, r, m, cm, in, clientTally{busyMS: p.busyMS, serverSojournMaxMS: p.serverSojournMax, rel: &rel, users: totalUsers})
		m.Recovery = measureGoodputRecovery(cfg, &s, windowMS)
		l.hooks.file(m)
		finishPoint(cfg, pt, spec, params, in, m, &s, clients, fair, len(a.Groups), a.GroupOf, r.gateMax, p.endToEndMax, true, rel.keep)
		return nil
	}, nil
}

// startClientsQueue readies the client model's point on its queue server,
// deciding fates at admission or by events (l.model); finish measures it.
func (l *pointLoop) startClientsQueue(cfg *experiments.Config, classes []uint8, spec *limiter.Spec, params limiter.Params, in *Instruments, pt *experiments.Point) (finish func() error, err error) {
	a := l.a
	durationMS := cfg.Workload.DurationMS
	deadlineMS := cfg.Server.DeadlineMS
	lazy := l.model == modelClientsEvents
	endMS := math.Inf(1)
	if cfg.Server.Option(server.OptEnd) == server.EndCut {
		endMS = durationMS
	}
	nclass := len(cfg.Classes)
	windowMS := cfg.SeriesWindow()
	windows := int(metrics.WindowCount(durationMS, windowMS))
	s := clientSeries(durationMS, windowMS)
	m, cm := new(experiments.Metrics), new(experiments.ClientMetrics)
	if in.admitted == nil {
		in.admitted = new(admittedBufs)
	}
	qr := &queueRun{in: in, s: &s, m: m, variable: !cfg.Server.FixedService(), windowMS: windowMS}
	classOK := qr.startBufs(in, classes != nil, nclass, windows)
	x := &queueClients{
		fate: l.sw.fateLog(),
		qr:   qr, bufs: in.admitted, in: in, m: m, cm: cm, s: &s,
		lazy:       lazy,
		cancel:     cfg.Server.Option(server.OptCancel) == server.CancelDrop,
		classes:    classes != nil,
		deadlineMS: deadlineMS,
		windowMS:   windowMS,

		goodputWindow: metrics.NewWindowCursor(windowMS),
	}
	x.bufs.recs, x.bufs.free = x.bufs.recs[:0], x.bufs.free[:0]
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
	if cfg.Server.Shaped() {
		return nil, errShapedQueue
	}
	// Decided at admission: the queue decides each attempt's fate as it
	// enters (and, under occupancy busy-ceil, its workers' schedule is
	// what the gate reads).
	var q *server.Queue
	var occ limiter.Occupancy
	if lazy {
		q = server.NewQueue(cfg.Server, durationMS, nclass, x)
		occ = q
	} else {
		q = server.NewQueueDecidingAtEntry(cfg.Server, durationMS, nclass, x)
		occ = q
		if cfg.Server.Option(server.OptOccupancy) == server.OccupancyBusyCeil {
			occ = q.Schedule()
		}
	}
	x.q = q
	gate, err := pointGateWith(spec, params, a.Clients, occ, l.sw)
	if err != nil {
		return nil, err
	}
	in.startPoint(cfg)
	nc := len(a.Clients)
	r, totalUsers, err := newClientRun(cfg, a, pt, in)
	if err != nil {
		return nil, err
	}
	x.r = r

	horizonMS := releaseHorizonMS(cfg, spec, params)
	qr.maxFinishWindows = int(math.Ceil(horizonMS / windowMS))
	clients := make([]experiments.ClientResult, nc)
	fair := new(fairWindows)
	fair.start(in, nc, cfg.Metrics.FairnessWindowMS, durationMS)
	r.startGate(gate, occ, spec, horizonMS, in, m, cm, &s, clients, fair)
	rel := newReleaseTally(in, windowMS, in.keepReleases(len(a.T)), len(a.T))
	l.r, l.x, l.heap, l.rel, l.users, l.classes = r, x, r.heap, &rel, users, classes
	l.q, l.endMS = q, endMS
	if lazy {
		l.startPicks(q, endMS)
	}
	l.windows = metrics.NewWindowCursor(windowMS)
	if err := l.startHooks(gate, horizonMS, in); err != nil {
		return nil, err
	}
	x.done, x.hooks = l.done, &l.hooks
	return func() error {
		q.Finish()
		if err := r.heap.err; err != nil {
			return err
		}
		qr.flushFinishes()
		if qr.variable {
			qr.sortFinishes()
		}
		if qr.finishOrderViolated {
			return fmt.Errorf("the queue server finished requests out of order") // cannot happen: fixed service
		}

		clientTotals(cfg, r, m, cm, in, clientTally{busyMS: x.busyMS, serverSojournMaxMS: x.serverSojournMax, rel: &rel, users: totalUsers})
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
			classMetrics(cfg, m, &s, x.classOK, qr.bufs.classSojourn, seconds)
		}
		m.Recovery = measureGoodputRecovery(cfg, &s, windowMS)
		l.hooks.file(m)
		finishPoint(cfg, pt, spec, params, in, m, &s, clients, fair, len(a.Groups), a.GroupOf, r.gateMax, x.endToEndMax,
			cfg.Server.Option(server.OptDiscipline) == server.FIFO, rel.keep)
		return nil
	}, nil
}

// plainServer is the client model's plain server (server.Server): an
// admitted attempt's fate is known at its admission.
type plainServer struct {
	srv          *server.Server
	cancel       bool // cancel_on_timeout "drop-unstarted"
	deadlineMS   float64
	in           *Instruments
	rel          *releaseTally
	finishWindow metrics.WindowCursor     // the series window of the finishes
	done         *completions             // nil: the gate does not observe
	fate         func(limiter.Completion) // a test's fate log (Switches.Fate)
	hooks        *gateHooks

	busyMS, serverSojournMax, endToEndMax float64
}

// noteFate tells a test's fate log (Switches.Fate) the fate of attempt
// at, released at releaseMS by instance inst, done at doneMS.
func noteFate(fate func(limiter.Completion), at *attempt, inst int32, releaseMS, doneMS float64, out limiter.Outcome) {
	if fate != nil {
		fate(completionOf(at, inst, releaseMS, doneMS, out))
	}
}

// completionOf is the completion of attempt at, released at releaseMS by
// instance inst, done at doneMS with out.
func completionOf(at *attempt, inst int32, releaseMS, doneMS float64, out limiter.Outcome) limiter.Completion {
	return limiter.Completion{Seq: at.seq, Client: at.c, Instance: inst, ArrivalMS: at.t, ReleaseMS: releaseMS, DoneMS: doneMS, Outcome: out}
}

// serve takes admitted attempt at, released at release, its client giving
// up at abandonAt (+Inf: never), to the server (step 4 of the client
// model), and reacts as its client does.
func (p *plainServer) serve(r *clientRun, at *attempt, release, abandonAt float64) {
	t := at.t
	fl := r.flags[at.part]
	cm, s, in := r.cm, r.s, p.in
	inst := p.hooks.instance()
	r.lastQuery = max(r.lastQuery, release)
	if p.cancel && fl.timeout && p.srv.StartAt(release) > abandonAt {
		r.droppedUnstarted(at, inst, release, abandonAt, p.done, p.fate)
		return
	}
	start, finish := p.srv.ServeFor(release, at.svc)
	cm.Served++
	p.busyMS += at.svc
	if at.n > 0 {
		cm.RetriesServed++
	}
	p.rel.add(s, in, release, p.srv.Len())
	in.wait.Record(start - release)
	sojourn := max(at.svc, metrics.RoundHalfUp(finish-t))
	in.sojourn.Record(sojourn)
	p.serverSojournMax = max(p.serverSojournMax, finish-release)
	p.endToEndMax = max(p.endToEndMax, finish-t)
	out := r.answerOutcome(at, sojourn, p.deadlineMS, false)
	if p.done != nil {
		p.done.add(completionOf(at, inst, release, finish, out))
	}
	noteFate(p.fate, at, inst, release, finish, out)
	r.answered(at, out, false, finish, abandonAt, t, &p.finishWindow)
}
