package server

import "math"

// Queue is the server model with an explicit waiting queue, for every
// setting of Options: which waiting request a freed worker takes
// (discipline), what a full system does with a newcomer (door), whether a
// worker discards work that can no longer meet its deadline (expire), and
// whether service stops at the end of the arrival window (end). With the
// default settings it serves exactly as Server does.
//
// It is the seed lab's event loop (Posts 4 and 5) run forward one release
// at a time. c workers start with free time 0; the next pick happens at
// p = max(earliest free worker, the time the queue last became non-empty).
// Before a request released at t enters, every pick at p < t happens (so a
// request released exactly at p enters before the pick at p, and sees the
// worker freeing at p as idle); with end "cut" no pick happens at p >= the
// end of the window. A worker is busy at t while its free time is later
// than t; a bounded door counts the waiting requests plus the busy workers.
//
// At a pick, the request taken (the oldest, or the newest under lifo) has
// waited w = p - arrival; under expire "at-dequeue" it is discarded when
// w + its service time > deadline_ms, and the worker picks again at p.
// Otherwise it is served from p to p + its service time (service_ms, or
// the time given to OfferFor). Outcomes go to the Sink as they happen:
// served requests in non-decreasing order of pick, so of finish when the
// service is fixed (with a distribution finishes can overtake each other).
type Queue struct {
	sink                  Sink
	serviceMS, deadlineMS float64
	endMS                 float64 // no pick at or after (end "cut"), else +Inf
	lifo, expire          bool
	variable              bool // service times vary: free is kept sorted, fhead 0
	door                  string
	bound                 int
	classes               int

	free  []float64 // workers' free times, ascending from fhead (cyclic)
	fhead int

	q     ring[entry] // waiting requests, oldest first; evicted ones are dead
	qseq  int64       // sequence number of q's front entry
	live  int         // waiting requests that are not dead
	since float64     // when the queue last became non-empty
	byCls []ring[int64]

	lastMS  float64
	lastPos int64 // place of the last request let in

	// Deciding at entry (NewQueueDecidingAtEntry): the workers' FIFO
	// schedule of the requests it serves, the picks (ascending) at which
	// waiting requests will expire, and how many wait for the end of a cut
	// window.
	sched      *Server
	expiring   ring[float64]
	cutWaiting int
}

// Sink receives the outcome of every request a Queue accepted or shed.
type Sink interface {
	// Served: the request id, released to the server at release, started
	// at start and finished at finish.
	Served(id int32, release, start, finish float64)
	// Shed: the request id left unserved at at (its door, its eviction,
	// its expiry at a pick, or the end of the window), for why.
	Shed(id int32, at float64, why Why)
}

// Why a request was shed.
type Why uint8

// Reasons for shedding.
const (
	ShedDoor    Why = iota // the door found the system full
	ShedEvicted            // a request of a higher class took its place
	ShedExpired            // its turn came too late to meet the deadline
	ShedEnd                // still waiting when the window ended (end "cut")
)

type entry struct {
	id      int32
	class   uint8
	dead    bool
	arrival float64
	release float64
	service float64
}

// NewQueue returns an idle queue server for the spec (normalized and
// valid), a window ending at endMS, and classes request classes (priority
// order, 0 the highest; 0 or 1 when the workload has none).
func NewQueue(s Spec, endMS float64, classes int, sink Sink) *Queue {
	q := &Queue{
		sink:       sink,
		serviceMS:  s.ServiceMS,
		deadlineMS: s.DeadlineMS,
		endMS:      math.Inf(1),
		lifo:       s.Option(OptDiscipline) == LIFO,
		expire:     s.Option(OptExpire) == ExpireAtDequeue,
		door:       s.Option(OptDoor),
		bound:      s.DoorBound(),
		classes:    max(classes, 1),
		free:       make([]float64, max(s.Workers, 1)),
		q:          newRing[entry](64),
		variable:   !s.FixedService(),
	}
	if s.Option(OptEnd) == EndCut {
		q.endMS = endMS
	}
	if q.door == DoorPriority {
		q.byCls = make([]ring[int64], q.classes)
		for k := range q.byCls {
			q.byCls[k] = newRing[int64](16)
		}
	}
	return q
}

// NewQueueDecidingAtEntry is NewQueue for a FIFO queue that evicts
// nothing (discipline fifo, a door other than priority, and no Drop): a
// request released later waits behind every earlier one, so nothing after
// a request's entry changes when it is picked, and its fate is known as it
// enters. OfferFor tells the sink at once: served (from its pick, the
// workers' FIFO schedule, Schedule), shed at its pick (expired) or at the
// end of a cut window (its pick at or after it), as the picks would; those
// shed later wait until then, in InSystem. It serves exactly as NewQueue's
// queue does, outcome by outcome and count by count
// (TestDecidingAtEntryIsTheQueue), with no pick left to make.
func NewQueueDecidingAtEntry(s Spec, endMS float64, classes int, sink Sink) *Queue {
	q := NewQueue(s, endMS, classes, sink)
	if q.lifo || q.door == DoorPriority {
		panic("server: a queue that can be overtaken or evict decides by its picks")
	}
	q.sched = New(s)
	q.expiring = newRing[float64](16)
	return q
}

// Schedule is the workers' FIFO schedule of a queue deciding at entry (nil
// for another): its requests served, each at its pick. Under occupancy
// busy-ceil it is what a gate in front reads (Server.InSystem).
func (q *Queue) Schedule() *Server { return q.sched }

// StartAt is when a request released at t (non-decreasing, as for
// OfferFor) would be picked by a queue deciding at entry, without offering
// it.
func (q *Queue) StartAt(t float64) float64 { return q.sched.StartAt(t) }

// offerDecided is OfferFor deciding at entry.
func (q *Queue) offerDecided(id int32, arrival, t, serviceMS float64) bool {
	if q.door != DoorOpen && q.InSystem(t) >= q.bound {
		q.sink.Shed(id, t, ShedDoor)
		return false
	}
	if !(t < q.endMS) {
		q.sink.Shed(id, t, ShedEnd) // released after the window: no service starts
		return false
	}
	p := q.sched.StartAt(t)
	switch {
	case !(p < q.endMS):
		q.cutWaiting++
		q.sink.Shed(id, q.endMS, ShedEnd)
	case q.expire && (p-arrival)+serviceMS > q.deadlineMS:
		q.expiring.pushBack(p)
		q.sink.Shed(id, p, ShedExpired)
	default:
		start, finish := q.sched.ServeFor(t, serviceMS)
		q.sink.Served(id, t, start, finish)
	}
	return true
}

// busy is the number of workers busy at t (free time later than t).
func (q *Queue) busy(t float64) int {
	c := len(q.free)
	if c == 1 {
		if q.free[0] > t {
			return 1
		}
		return 0
	}
	// The free times ascend cyclically from fhead: find the first one > t.
	lo, hi := 0, c
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if q.free[(q.fhead+m)%c] > t {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return c - lo
}

// PickFirst is the pick rule, which every driver of a Queue's picks
// follows (the Queue's own, advance, before a request's release, and an
// event loop that makes the picks with Pick): a pick at pickMS happens
// before an event at eventMS when it is earlier, or at the same time when
// the event is a client giving up (timeout). A request released at p
// enters before the pick at p (and sees the worker freeing at p as idle;
// under lifo it is the one picked); a request picked at its client's
// deadline has started.
func PickFirst(pickMS, eventMS float64, timeout bool) bool {
	return pickMS < eventMS || timeout && pickMS == eventMS
}

// advance makes every pick that happens before a release at t.
func (q *Queue) advance(t float64) {
	if t < q.lastMS {
		panic("server: time went backwards")
	}
	q.lastMS = t
	for {
		p := q.NextPickMS()
		if !PickFirst(p, t, false) {
			return
		}
		q.pick(p)
	}
}

// NextPickMS is when the next pick happens, +Inf when none will (no
// request waits, or the window is cut before it). A caller that runs its
// own events makes the picks before each of its events with Pick, one at
// a time, since a pick's outcome can lead to an event before the next.
func (q *Queue) NextPickMS() float64 {
	if q.live == 0 {
		return math.Inf(1)
	}
	p := max(q.free[q.fhead], q.since)
	if !(p < q.endMS) {
		return math.Inf(1)
	}
	return p
}

// Pick makes the next pick (at NextPickMS, which must be finite): the
// request taken is served or, expired, shed.
func (q *Queue) Pick() {
	p := q.NextPickMS()
	if math.IsInf(p, 1) {
		panic("server: no pick to make")
	}
	q.lastMS = max(q.lastMS, p)
	q.pick(p)
}

// pick takes the next request at p and serves or expires it.
func (q *Queue) pick(p float64) {
	e := q.take()
	if q.expire && (p-e.arrival)+e.service > q.deadlineMS {
		q.sink.Shed(e.id, p, ShedExpired)
		return
	}
	finish := p + e.service
	if q.variable {
		q.refree(finish)
	} else {
		// Fixed service: the new free time is the latest, so the
		// earliest worker becomes the last of the cyclic order.
		q.free[q.fhead] = finish
		q.fhead++
		if q.fhead == len(q.free) {
			q.fhead = 0
		}
	}
	q.sink.Served(e.id, e.release, p, finish)
}

// refree gives the earliest free worker (free[0]) its new free time,
// keeping free sorted (variable service; fhead stays 0).
func (q *Queue) refree(finish float64) {
	f := q.free
	lo, hi := 1, len(f)
	for lo < hi { // the first index > finish
		m := int(uint(lo+hi) >> 1)
		if f[m] > finish {
			hi = m
		} else {
			lo = m + 1
		}
	}
	copy(f[:lo-1], f[1:lo])
	f[lo-1] = finish
}

// take removes the next request to serve: the oldest, or the newest under lifo.
func (q *Queue) take() entry {
	for {
		var e entry
		if q.lifo {
			e = q.q.popBack()
		} else {
			e = q.q.popFront()
			q.qseq++
		}
		if e.dead {
			continue
		}
		q.live--
		if q.byCls != nil {
			if q.lifo {
				q.byCls[e.class].popBack()
			} else {
				q.byCls[e.class].popFront()
			}
		}
		if q.live == 0 {
			q.reset()
		}
		return e
	}
}

// reset drops the dead entries of an empty queue.
func (q *Queue) reset() {
	q.qseq += int64(q.q.n)
	q.q.clear()
}

// InSystem is the number of requests waiting or in service at t, after
// every pick before t: what an admission gate in front reads.
func (q *Queue) InSystem(t float64) int {
	if q.sched != nil {
		// Deciding at entry: the requests served that have not finished
		// (picked or not: a service takes time), those waiting for a pick
		// that expires them, and those waiting for the cut.
		n := q.sched.inSystem(t)
		for q.expiring.n > 0 && q.expiring.front() < t {
			q.expiring.popFront()
		}
		return n + q.expiring.n + q.cutWaiting
	}
	q.advance(t)
	return q.live + q.busy(t)
}

// Offer hands over request id of class, which arrived at the gate at
// arrival and is released to the server at t (non-decreasing), and reports
// whether it entered. A request the door sheds, or one it evicts, goes to
// the sink at once. It takes the spec's service_ms.
func (q *Queue) Offer(id int32, class uint8, arrival, t float64) bool {
	return q.OfferFor(id, class, arrival, t, q.serviceMS)
}

// OfferFor is Offer for a request that takes serviceMS (a spec whose
// service is not fixed, or one worker).
func (q *Queue) OfferFor(id int32, class uint8, arrival, t, serviceMS float64) bool {
	if q.sched != nil {
		return q.offerDecided(id, arrival, t, serviceMS)
	}
	q.advance(t)
	if q.door != DoorOpen && q.live+q.busy(t) >= q.bound {
		if q.door != DoorPriority || !q.evict(class, t) {
			q.sink.Shed(id, t, ShedDoor)
			return false
		}
	}
	if !(t < q.endMS) {
		q.sink.Shed(id, t, ShedEnd) // released after the window: no service starts
		return false
	}
	if q.live == 0 {
		q.since = t
	}
	if q.byCls != nil {
		q.byCls[class].pushBack(q.qseq + int64(q.q.n))
	}
	q.lastPos = q.qseq + int64(q.q.n)
	q.q.pushBack(entry{id: id, class: class, arrival: arrival, release: t, service: serviceMS})
	q.live++
	return true
}

// LastPos is the place in the queue of the request the last Offer let in,
// which Drop takes while that request still waits.
func (q *Queue) LastPos() int64 { return q.lastPos }

// Drop removes a request still waiting at place pos (LastPos of its
// Offer) without a word to the sink: its client gave up and the server
// drops it unstarted (cancel_on_timeout "drop-unstarted"). The caller
// knows it still waits (it was neither served nor shed).
func (q *Queue) Drop(pos int64) {
	if q.sched != nil {
		panic("server: a queue deciding at entry drops nothing")
	}
	if pos < q.qseq || pos >= q.qseq+int64(q.q.n) {
		panic("server: dropped a request that does not wait")
	}
	e := q.q.at(int(pos - q.qseq))
	if e.dead {
		panic("server: dropped a request that does not wait")
	}
	e.dead = true
	q.live--
	if q.byCls != nil {
		r := &q.byCls[e.class]
		for i := r.n - 1; i >= 0; i-- {
			if *r.at(i) == pos {
				r.remove(i)
				break
			}
		}
	}
	if q.live == 0 {
		q.reset()
	}
}

// evict sheds the newest waiting request of a class lower than class (a
// larger index), if there is one.
func (q *Queue) evict(class uint8, t float64) bool {
	best, bestCls := int64(-1), -1
	for k := int(class) + 1; k < len(q.byCls); k++ {
		if r := &q.byCls[k]; r.n > 0 {
			if s := r.back(); s > best {
				best, bestCls = s, k
			}
		}
	}
	if bestCls < 0 {
		return false
	}
	q.byCls[bestCls].popBack()
	e := q.q.at(int(best - q.qseq))
	e.dead = true
	q.live--
	q.sink.Shed(e.id, t, ShedEvicted)
	return true
}

// CutEnd sheds every request still waiting at the end of a cut window, at
// EndMS, as Finish does, for a caller that runs its own events past the
// end (every pick before it made). Requests released later are shed as
// they arrive.
func (q *Queue) CutEnd() {
	if math.IsInf(q.endMS, 1) {
		panic("server: the window is not cut")
	}
	for q.q.n > 0 {
		e := q.q.popFront()
		if !e.dead {
			q.sink.Shed(e.id, q.endMS, ShedEnd)
		}
	}
	q.live = 0
	for k := range q.byCls {
		q.byCls[k].clear()
	}
	q.reset()
}

// Finish ends the run: every pick the settings allow happens (all of them
// after a drain), then every request still waiting is shed at the end of
// the window. (Under end "cut" a request released at or after the end is
// shed as it arrives, after the door.)
func (q *Queue) Finish() {
	q.advance(math.Inf(1))
	for q.q.n > 0 {
		e := q.q.popFront()
		if !e.dead {
			q.sink.Shed(e.id, q.endMS, ShedEnd)
		}
	}
	q.live = 0
}

// ring is a growable ring buffer.
type ring[T any] struct {
	buf     []T
	head, n int
}

func newRing[T any](size int) ring[T] { return ring[T]{buf: make([]T, size)} }

func (r *ring[T]) pushBack(v T) {
	if r.n == len(r.buf) {
		next := make([]T, 2*len(r.buf))
		for i := range r.n {
			next[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = next, 0
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

func (r *ring[T]) popFront() T {
	v := r.buf[r.head]
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}

func (r *ring[T]) popBack() T {
	r.n--
	return r.buf[(r.head+r.n)&(len(r.buf)-1)]
}

func (r *ring[T]) front() T { return r.buf[r.head] }

func (r *ring[T]) back() T { return r.buf[(r.head+r.n-1)&(len(r.buf)-1)] }

func (r *ring[T]) at(i int) *T { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

func (r *ring[T]) clear() { r.head, r.n = 0, 0 }

// remove takes out the i-th element, moving the later ones forward.
func (r *ring[T]) remove(i int) {
	for ; i < r.n-1; i++ {
		*r.at(i) = *r.at(i + 1)
	}
	r.n--
}
