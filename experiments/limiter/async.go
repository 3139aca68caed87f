package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/field"
)

// Sharing async is Gubernator v2.13.0's GLOBAL behaviour (global.go,
// gubernator.go) over the instances of a gubernator gate, one key:
//
//   - the key's owner is the instance owner_instance (Gubernator picks it
//     by a consistent hash of the key over its peers' addresses; the
//     model takes the result as given, and the differential test reads
//     it from the real cluster);
//   - the owner decides a request on its own item, as one gate does, and
//     queues a broadcast of the key;
//   - another instance decides it on its cached copy (getGlobalRateLimit:
//     its local item, made by itself or by the owner's last broadcast)
//     and queues the hit, admitted or not. The queued hits of the key add
//     up into one request that keeps the first hit's CreatedAt; it goes
//     to the owner sync_wait_ms after that first hit (runAsyncHits: the
//     interval starts at the first hit after a send), or at once when a
//     batch holds batch_limit keys (with the gate's one key: batch_limit
//     1);
//   - the owner applies the forwarded hits (GetPeerRateLimits) with
//     DRAIN_OVER_LIMIT at their CreatedAt, its cache read at the time
//     they arrive (an item expired by then is replaced by one made at
//     that CreatedAt), and queues a broadcast of the key;
//   - a queued broadcast goes sync_wait_ms after the first update since
//     the last one (runBroadcasts), or at once with batch_limit 1: the
//     owner reads its item with Hits 0 at the last update's CreatedAt and
//     every other instance replaces its item with the answer
//     (UpdatePeerGlobals: expiring at its reset time, created now).
//
// The sends and broadcasts are the instances' own timers; the model runs
// those due at or before a request's time first, in (due time, the order
// they were set), then the request, so the instances hold exactly the
// state the cluster holds when the request reaches it (the harness of
// the differential test fires the library's timers in the same order).
// No network time: a send reaches the owner when it leaves.
const (
	SharingAsync = "async"
	// ParamSyncWait is GlobalSyncWait, ParamBatchLimit GlobalBatchLimit.
	ParamSyncWait   = "sync_wait_ms"
	ParamBatchLimit = "batch_limit"
	ParamOwner      = "owner_instance"
)

// asyncParams are sharing async's replica parameters (instances.go lists
// them in ReplicaParams).
func asyncParams() []Param {
	return []Param{
		{Name: ParamSyncWait, Admits: AdmitsNone, Label: "Sync wait", Unit: "ms", Integer: true, Min: 1, Max: 60_000, Default: 100,
			Doc: "sharing async: GlobalSyncWait, the time from a key's first queued hit (or update) to its send to the owner (or broadcast to the others); Gubernator's default 100"},
		{Name: ParamBatchLimit, Admits: AdmitsNone, Label: "Batch limit", Unit: "keys", Integer: true, Min: 1, Max: 1000, Default: 1000,
			Doc: "sharing async: GlobalBatchLimit, the keys a batch holds before it goes without waiting (the gate has one key: 1 sends every hit at once); Gubernator's default 1000"},
		{Name: ParamOwner, Admits: AdmitsNone, Label: "Owner", Unit: "instance", Integer: true, Min: 0, Max: MaxInstances - 1, Optional: true,
			Doc: "sharing async: the instance that owns the key (Gubernator's consistent hash picks one of the peers)"},
	}
}

// validateAsync checks a replicated spec with sharing async: a gubernator
// gate, the owner among the instances, no scaling event.
func (s *Spec) validateAsync(path string) field.List {
	var errs field.List
	if s.Options[OptionSharing] != SharingAsync {
		return nil
	}
	if s.Type != TypeGubernator {
		errs.Add(field.Join(path, OptionSharing), "async is Gubernator's GLOBAL behaviour: it takes the gubernator gate, not %s", s.Type)
	}
	for _, o := range s.Params[ParamOwner] {
		for _, n := range s.Params[ParamInstances] {
			if o >= n {
				errs.Add(field.Join(path, ParamOwner), "must be one of the instances (0 to %g), not %g", n-1, o)
			}
		}
	}
	for _, v := range s.Params[ParamScaleTo] {
		if v != 0 {
			errs.Add(field.Join(path, ParamScaleTo), "sharing async takes no scaling event: a change of Gubernator's peers moves the key's owner, which the model does not follow")
			break
		}
	}
	return errs
}

// asyncSet is a replicated gubernator gate under sharing async: the
// instance set's balancer and gates (each a *Gubernator), and the timers
// of the GLOBAL behaviour.
type asyncSet struct {
	_ cacheline.Pad // a sweep's points run side by side (package cacheline)
	*InstanceSet
	owner      int
	syncWaitMS float64
	batchOne   bool // batch_limit 1: every hit and update goes at once
	// each instance's queued hits: their count and the first's CreatedAt
	hits   []int64
	hitsAt []int64
	// timers[i] is instance i's send interval, timers[len(gates)] the
	// owner's broadcast interval
	timers    []asyncInterval
	updates   bool  // an update is queued for the broadcast
	updateAt  int64 // the last queued update's CreatedAt
	seq       uint64
	nextDueMS float64 // the earliest due timer
	_         cacheline.Pad
}

// asyncInterval is Gubernator's Interval (interval.go), a one-shot timer:
// Next arms it sync_wait_ms ahead, or, when it is armed already, asks for
// one more interval after this one (its channel of one); runAsyncHits and
// runBroadcasts call Next on every hit and update of the key (their map
// then holds one key), so under steady traffic the interval fires every
// sync_wait_ms.
type asyncInterval struct {
	due     float64 // +Inf: not armed
	seq     uint64  // the order it was armed in: ties fire in it
	pending bool
}

func newAsyncSet(r *InstanceSet, p Params) *asyncSet {
	n := len(r.gates)
	a := &asyncSet{InstanceSet: r, owner: int(p.Get(ParamOwner)), syncWaitMS: p.Get(ParamSyncWait), batchOne: p.Get(ParamBatchLimit) == 1,
		hits: make([]int64, n), hitsAt: make([]int64, n), timers: make([]asyncInterval, n+1), nextDueMS: math.Inf(1)}
	for i := range a.timers {
		a.timers[i].due = math.Inf(1)
	}
	return a
}

// next is Interval.Next of timer k at t.
func (a *asyncSet) next(k int, t float64) {
	if !math.IsInf(a.timers[k].due, 1) {
		a.timers[k].pending = true
		return
	}
	a.arm(k, t)
}

func (a *asyncSet) arm(k int, t float64) {
	a.timers[k] = asyncInterval{due: t + a.syncWaitMS, seq: a.seq}
	a.seq++
	a.nextDueMS = min(a.nextDueMS, a.timers[k].due)
}

func (a *asyncSet) gate(i int) *Gubernator { return a.gates[i].(*Gubernator) }

// OfferTo lets instance i decide the request at t, after the timers due
// by then.
func (a *asyncSet) OfferTo(i int, t float64, _ int32) (float64, bool) {
	a.runTimers(t)
	now := gubernatorMS(t)
	g := a.gate(i)
	ok := g.apply(now, now, 1, g.drain).status == gubernatorUnder
	if i == a.owner {
		a.queueUpdate(now, t)
	} else {
		a.queueHit(i, now, t)
	}
	if ok && a.inflight != nil {
		a.inflight[i]++
	}
	return t, ok
}

// Offer routes then decides.
func (a *asyncSet) Offer(t float64, client int32) (float64, bool) {
	return a.OfferTo(a.Route(t, client), t, client)
}

// queueHit is QueueHit of a hit at createdAt on instance i, at t.
func (a *asyncSet) queueHit(i int, createdAt int64, t float64) {
	if a.batchOne {
		a.hits[i], a.hitsAt[i] = 1, createdAt
		a.send(i, t)
		return
	}
	if a.hits[i] == 0 {
		a.hitsAt[i] = createdAt
	}
	a.hits[i]++
	a.next(i, t)
}

// send is sendHits of instance i's queued hits at t: the owner applies
// them (GetPeerRateLimits, DRAIN_OVER_LIMIT) and queues an update.
func (a *asyncSet) send(i int, t float64) {
	now := gubernatorMS(t)
	a.gate(a.owner).apply(now, a.hitsAt[i], a.hits[i], true)
	a.hits[i] = 0
	a.queueUpdate(a.hitsAt[i], t)
}

// queueUpdate is QueueUpdate of the owner's request at createdAt, at t.
func (a *asyncSet) queueUpdate(createdAt int64, t float64) {
	a.updateAt = createdAt
	if a.batchOne {
		a.broadcast(t)
		return
	}
	a.updates = true
	a.next(len(a.gates), t)
}

// broadcast is broadcastPeers at t: the owner's item read with Hits 0 at
// the last update's CreatedAt, given to every other instance.
func (a *asyncSet) broadcast(t float64) {
	now := gubernatorMS(t)
	a.updates = false
	rl := a.gate(a.owner).apply(now, a.updateAt, 0, false)
	for j := range a.gates {
		if j != a.owner {
			a.gate(j).takeBroadcast(rl, now)
		}
	}
}

// runTimers fires the intervals due at or before t, earliest first, ties
// in the order they were armed. A firing interval that was asked for one
// more is armed again first (the test's patched library does the same),
// then its loop sends what it holds: an instance's queued hits, or the
// owner's broadcast when an update is queued.
func (a *asyncSet) runTimers(t float64) {
	for a.nextDueMS <= t {
		k := 0
		for j := range a.timers {
			if x, y := &a.timers[j], &a.timers[k]; x.due < y.due || x.due == y.due && x.seq < y.seq {
				k = j
			}
		}
		due := a.timers[k].due
		pending := a.timers[k].pending
		a.timers[k] = asyncInterval{due: math.Inf(1)}
		if pending {
			a.arm(k, due)
		}
		switch {
		case k == len(a.gates):
			if a.updates {
				a.broadcast(due)
			}
		case a.hits[k] > 0:
			a.send(k, due)
		}
		a.nextDueMS = math.Inf(1)
		for j := range a.timers {
			a.nextDueMS = min(a.nextDueMS, a.timers[j].due)
		}
	}
}

// State is the instance's requests in flight under least-inflight, else
// what its cached item has left.
func (a *asyncSet) State(i int) float64 {
	if a.inflight != nil {
		return float64(a.inflight[i])
	}
	return a.gate(i).Remaining()
}

// observedAsync is an async set behind least-inflight, which hears each
// admitted request's completion.
type observedAsync struct{ *asyncSet }

// Complete takes a completed request out of its instance's count.
func (o *observedAsync) Complete(c Completion) {
	if i := int(c.Instance); i >= 0 && i < len(o.inflight) && o.inflight[i] > 0 {
		o.inflight[i]--
	}
}
