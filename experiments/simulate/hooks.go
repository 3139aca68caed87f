package simulate

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
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
//     events, to the release horizon while the point has other events
//     left.
//
// A gate made of gates (limiter.Composite, a chain) has its parts' hooks.
// A gate that is only Replicated needs no event: it stays on the forward
// pass's fast path.

// routedGate is a replicated gate as the loop offers it: every request
// through the balancer to one instance, counted. Each instance's Offered
// and Admitted count the gate's decisions: every offer it was routed
// (under client behaviour every attempt, retries included: the point's
// ClientMetrics.Attempts, not its Arrivals) and every admission, whether
// or not the point scores the request (under end-minus-deadline scoring
// the queue model's Metrics.Admitted counts only the scored ones).
type routedGate struct {
	r         limiter.Replicated
	instances []experiments.InstanceMetrics
	last      int32 // the instance of the last offer
	// window is the series' windows (set by hooksOf from the worker's
	// Instruments), in which each instance's admissions are counted by
	// arrival (InstanceMetrics.AdmittedSeries).
	window metrics.WindowCursor
	series bool // count them (hooksOf: a point measured, not a decision diff)
}

// Offer routes the request at t from client to the instance the balancer
// chooses, which decides it.
func (g *routedGate) Offer(t float64, client int32) (float64, bool) {
	i := g.r.Route(t, client)
	g.last = int32(i)
	release, ok := g.r.OfferTo(i, t, client)
	g.instances[i].Offered++
	if ok {
		in := &g.instances[i]
		in.Admitted++
		if !g.series {
			return release, ok
		}
		w := int(g.window.Index(t))
		for w >= len(in.AdmittedSeries) {
			in.AdmittedSeries = append(in.AdmittedSeries, 0)
		}
		in.AdmittedSeries[w]++
	}
	return release, ok
}

// NextAdmitMS is the replicated gate's own Retry-After when it can say
// one (an Advisor: it answers for the whole gate, balancer included),
// else t (no advice).
func (g *routedGate) NextAdmitMS(t float64, client int32) float64 {
	if a, ok := g.r.(limiter.Advisor); ok {
		return a.NextAdmitMS(t, client)
	}
	return t
}

// gateHooks are the hooks a point's gate has, its parts' included
// (limiter.Composite).
type gateHooks struct {
	observer limiter.Observer // nil: the gate learns nothing from completions
	syncer   limiter.Syncer   // nil: no syncs
	routed   *routedGate      // nil: one instance
	trace    *adaptiveTrace   // nil: the gate is not adaptive (adaptive.go)
}

// hooksOf finds gate's hooks (gate as pointGate made it): the gate's own
// and its parts', a completion told to every part that observes and
// every part's syncs run. A replicated gate counts its instances'
// admissions in the series windows in readied (Instruments.startPoint).
func hooksOf(gate limiter.Gate, in *Instruments) gateHooks {
	var h gateHooks
	inner := gate
	if rg, ok := gate.(*routedGate); ok {
		h.routed, inner = rg, rg.r
		if in != nil && in.seriesWindowMS > 0 {
			rg.window, rg.series = metrics.NewWindowCursor(in.seriesWindowMS), true
		}
	}
	switch t := inner.(type) {
	case *adaptiveTrace:
		h.trace = t
	case adaptiveSyncTrace:
		h.trace = t.adaptiveTrace
	}
	var obs observers
	var syn syncers
	collectHooks(inner, &obs, &syn)
	switch len(obs) {
	case 0:
	case 1:
		h.observer = obs[0]
	default:
		h.observer = obs
	}
	switch len(syn) {
	case 0:
	case 1:
		h.syncer = syn[0]
	default:
		h.syncer = syn
	}
	return h
}

// collectHooks adds the hooks of g and of its parts, depth first.
func collectHooks(g limiter.Gate, obs *observers, syn *syncers) {
	if o, ok := g.(limiter.Observer); ok {
		*obs = append(*obs, o)
	}
	if s, ok := g.(limiter.Syncer); ok {
		*syn = append(*syn, s)
	}
	if c, ok := g.(limiter.Composite); ok {
		for _, p := range c.Parts() {
			collectHooks(p, obs, syn)
		}
	}
}

// observers are the parts of a gate that observe: each hears every
// completion, in order.
type observers []limiter.Observer

func (o observers) Complete(c limiter.Completion) {
	for _, x := range o {
		x.Complete(c)
	}
}

// syncers are the parts of a gate that sync: the next sync is the
// earliest of theirs (NaN if any is), and a sync at t runs every part due
// at t.
type syncers []limiter.Syncer

func (s syncers) NextSyncMS() float64 {
	next := math.Inf(1)
	for _, x := range s {
		next = min(next, x.NextSyncMS())
	}
	return next
}

func (s syncers) Sync(t float64) {
	for _, x := range s {
		if x.NextSyncMS() <= t {
			x.Sync(t)
		}
	}
}

// loop is whether the point needs the event loop for its gate.
func (h *gateHooks) loop() bool { return h.observer != nil || h.syncer != nil }

// instance is the instance that decided the gate's last offer (0: one
// instance).
func (h *gateHooks) instance() int32 {
	if h.routed == nil {
		return 0
	}
	return h.routed.last
}

// file files the instances' decisions and state (a replicated gate).
func (h *gateHooks) file(m *experiments.Metrics) {
	if h.routed == nil {
		return
	}
	m.Instances = h.routed.instances
	for i := range m.Instances {
		m.Instances[i].State = h.routed.r.State(i)
	}
	if d, ok := h.routed.r.(limiter.StoreReporter); ok {
		if admitted, refused, ok := d.StoreDown(); ok {
			m.Replicas = &experiments.ReplicaMetrics{Store: &experiments.StoreMetrics{DownAdmitted: admitted, DownRefused: refused}}
		}
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
// when the gate does not observe), in buf (a worker's, kept across
// points).
func newCompletions(h *gateHooks, heap *eventHeap, buf *completions) *completions {
	if h.observer == nil {
		return nil
	}
	*buf = completions{heap: heap, observer: h.observer, done: buf.done[:0], free: buf.free[:0]}
	return buf
}

// add schedules completion c at its DoneMS (a nil o: nothing).
func (o *completions) add(c limiter.Completion) {
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
	o.done[id] = c
	o.heap.pushEvent(c.DoneMS, eventComplete, id)
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
// release horizon while the point has other events left: arrivals
// (listLeft), scheduled events, or the queue's picks (made by the loop).
// Without them the syncs end: nothing is left for a sync to change.
func (l *pointLoop) sync(t float64, listLeft bool) error {
	l.syncer.Sync(t)
	s := l.syncer.NextSyncMS()
	if !(s > t) {
		return fmt.Errorf("the gate's next sync at %g ms is not after its sync at %g ms", s, t)
	}
	left := listLeft || l.eventsLeft()
	if s < l.syncEndMS && left {
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
