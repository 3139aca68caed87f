package limiter

// The hooks a point's event loop (experiments/simulate/loop.go) offers a
// gate beyond Offer, each an optional interface: a gate that implements
// none costs the loop nothing. A gate made of other gates (Composite: a
// chain's gate stages) has the hooks its parts have: the loop tells each
// part that observes every completion and runs each part's syncs.

// Outcome is what became of an admitted request at the server.
type Outcome uint8

const (
	// OnTime: served, its sojourn within the server's deadline_ms.
	OnTime Outcome = iota
	// Late: served, its sojourn past deadline_ms.
	Late
	// TimedOut: its client gave up on it before its answer (its timeout):
	// served after that (its work wasted) or dropped unstarted
	// (cancel_on_timeout "drop-unstarted").
	TimedOut
	// Dropped: the server shed it (its door, an eviction, expiry at
	// dequeue, the end of a cut window).
	Dropped
)

func (o Outcome) String() string {
	switch o {
	case OnTime:
		return "on-time"
	case Late:
		return "late"
	case TimedOut:
		return "timed-out"
	case Dropped:
		return "dropped"
	}
	return "unknown"
}

// Completion is an admitted request leaving the system: the request Seq
// of Client that reached the gate at ArrivalMS (an attempt, under client
// behaviour: each retry is a request of its own here), which the gate
// released at ReleaseMS (for a replicated gate: its instance Instance,
// else 0), left at DoneMS (served: its finish; dropped: when it was
// dropped, which may be before its release when its client gave up on it
// first) with Outcome.
//
// Seq tells requests apart, two of a client at one time included: the
// workload's arrivals are numbered 0 … n-1 in their order, and a retry or
// a closed-loop user's request gets the loop's sequence number of its
// event (above n-1), unique in the point.
type Completion struct {
	Seq       int64
	Client    int32
	Instance  int32
	ArrivalMS float64
	ReleaseMS float64
	DoneMS    float64
	Outcome   Outcome
}

// LatencyMS is the request's time in the system, gate and server.
func (c Completion) LatencyMS() float64 { return c.DoneMS - c.ArrivalMS }

// Observer is a gate that learns from the completions of the requests it
// admitted (an adaptive concurrency limit): the loop calls Complete once
// per admitted request, at its DoneMS, in the loop's event order (time,
// then the order the events were made: a completion at t comes after the
// arrivals at t), never before an Offer at an earlier time nor after an
// Offer at a later one.
type Observer interface {
	Complete(c Completion)
}

// Replicated is a gate run as several instances behind a balancer: each
// request goes to the instance Route chooses (a deterministic rule of the
// request and the balancer's own state, never a global random source),
// which decides it (OfferTo). The loop routes every Offer through them and
// counts each instance's decisions, then files them with each instance's
// State (experiments.InstanceMetrics); Offer
// itself is what a caller outside the loop uses, the same as Route then
// OfferTo.
type Replicated interface {
	Gate
	Instances() int
	Route(t float64, client int32) int
	OfferTo(instance int, t float64, client int32) (release float64, ok bool)
	// State is a number that says where instance stands (its tokens, its
	// requests in flight), which the loop files at the end of the run.
	State(instance int) float64
}

// StoreReporter is a replicated gate whose instances share a store that
// can be down (sharing central): what they answered while it was, which
// the loop files with the instances (ok=false: no store).
type StoreReporter interface {
	StoreDown() (admitted, refused int, ok bool)
}

// Composite is a gate made of other gates (a chain's gate stages): the
// loop finds hooks (Observer, Syncer) in its parts too.
type Composite interface {
	Parts() []Gate
}

// Syncer is a gate whose instances share state on a schedule (the model of
// their shared store: a sync every interval, a lagging replica): the loop
// calls Sync(t) at each t NextSyncMS names, as an event in its order (a
// sync at t comes after the events at t made before it was scheduled),
// while the point has other events left (arrivals, releases, picks,
// completions: to the release horizon, as they do) and t is before the
// horizon (+Inf: no more syncs). A NaN, or a next sync not after the
// last, is an error of the point.
type Syncer interface {
	NextSyncMS() float64
	Sync(t float64)
}
