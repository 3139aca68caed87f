package simulate

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// The event loop's hooks for gates (limiter/hooks.go), found once per point
// (hooksOf) so that a gate without them costs nothing per event:
//
//   - limiter.Observer: every model tells the loop each admitted
//     request's completion (completions.add, a nil receiver for a gate
//     that does not observe) at the step that decides it; the loop
//     schedules it as an eventComplete at its time and calls Complete when
//     it comes, in the loop's order. A point on the forward pass's model
//     whose gate observes runs in the loop (modelPlain), one arrival at a
//     time through the forward pass's own step.
//   - limiter.Replicated: pointGate puts the gate behind routedGate, whose
//     Offer is the balancer's Route then the instance's OfferTo, counting
//     each instance's decisions; the models call Offer as for any gate.
//   - limiter.Syncer: the loop schedules the gate's syncs as eventSync
//     events while they fall inside the run.

// routedGate is a replicated gate as the loop offers it: every request
// through the balancer to one instance, counted.
type routedGate struct {
	r         limiter.Replicated
	instances []experiments.InstanceMetrics
}

// Offer routes the request at t from client to the instance the balancer
// chooses, which decides it.
func (g *routedGate) Offer(t float64, client int32) (float64, bool) {
	i := g.r.Route(t, client)
	release, ok := g.r.OfferTo(i, t, client)
	g.instances[i].Offered++
	if ok {
		g.instances[i].Admitted++
	}
	return release, ok
}

// NextAdmitMS is the instance's Retry-After when it can say one; the
// balancer's route is the one a request at t would take.
func (g *routedGate) NextAdmitMS(t float64, client int32) float64 {
	if a, ok := g.r.(limiter.Advisor); ok {
		return a.NextAdmitMS(t, client)
	}
	return t
}

// gateHooks are the hooks a point's gate has.
type gateHooks struct {
	observer limiter.Observer // nil: the gate learns nothing from completions
	syncer   limiter.Syncer   // nil: no syncs
	routed   *routedGate      // nil: one instance
}

// hooksOf finds gate's hooks (gate as pointGate made it).
func hooksOf(gate limiter.Gate) gateHooks {
	var h gateHooks
	inner := gate
	if rg, ok := gate.(*routedGate); ok {
		h.routed, inner = rg, rg.r
	}
	h.observer, _ = inner.(limiter.Observer)
	h.syncer, _ = inner.(limiter.Syncer)
	return h
}

// loop is whether the point needs the event loop for its gate.
func (h *gateHooks) loop() bool { return h.observer != nil || h.syncer != nil }

// file files the instances' decisions and state (a replicated gate).
func (h *gateHooks) file(m *experiments.Metrics) {
	if h.routed == nil {
		return
	}
	m.Instances = h.routed.instances
	for i := range m.Instances {
		m.Instances[i].State = h.routed.r.State(i)
	}
}

// completions schedules the completions of a point whose gate observes
// them (a nil *completions: the gate does not).
type completions struct {
	heap     *eventHeap
	observer limiter.Observer
	done     []limiter.Completion // by record id, with a free list
	free     []int32
}

// newCompletions is the completions of a gate with hooks h on heap (nil
// when the gate does not observe).
func newCompletions(h *gateHooks, heap *eventHeap) *completions {
	if h.observer == nil {
		return nil
	}
	return &completions{heap: heap, observer: h.observer}
}

// add schedules the completion of client's request that reached the gate
// at arrivalMS and left at doneMS with outcome.
func (o *completions) add(client int32, arrivalMS, doneMS float64, outcome limiter.Outcome) {
	if o == nil {
		return
	}
	var id int32
	if n := len(o.free); n > 0 {
		id = o.free[n-1]
		o.free = o.free[:n-1]
	} else {
		id = int32(len(o.done))
		o.done = append(o.done, limiter.Completion{})
	}
	o.done[id] = limiter.Completion{Client: client, ArrivalMS: arrivalMS, DoneMS: doneMS, Outcome: outcome}
	o.heap.pushEvent(doneMS, eventComplete, id)
}

// deliver tells the gate completion id, at its time.
func (o *completions) deliver(id int32) {
	c := o.done[id]
	o.free = append(o.free, id)
	o.observer.Complete(c)
}

// outcome is a served request's: on time when its sojourn is within the
// deadline, else late.
func outcome(onTime bool) limiter.Outcome {
	if onTime {
		return limiter.OnTime
	}
	return limiter.Late
}

// startSyncs schedules the gate's first sync (a Syncer) before endMS.
func (l *pointLoop) startSyncs(h *gateHooks, endMS float64) error {
	l.syncer, l.syncEndMS = h.syncer, endMS
	if l.syncer == nil {
		return nil
	}
	s := l.syncer.NextSyncMS()
	if math.IsNaN(s) || s < 0 {
		return fmt.Errorf("the gate's first sync is at %g ms", s)
	}
	if s < endMS {
		l.heap.pushEvent(s, eventSync, 0)
	}
	return nil
}

// sync runs the gate's sync at t and schedules its next one before the
// end of the run.
func (l *pointLoop) sync(t float64) error {
	l.syncer.Sync(t)
	s := l.syncer.NextSyncMS()
	if !(s > t) {
		return fmt.Errorf("the gate's next sync at %g ms is not after its sync at %g ms", s, t)
	}
	if s < l.syncEndMS {
		l.heap.pushEvent(s, eventSync, 0)
	}
	return nil
}

// pending is the number of completions scheduled and not yet delivered.
func (o *completions) pending() int {
	if o == nil {
		return 0
	}
	return len(o.done) - len(o.free)
}
