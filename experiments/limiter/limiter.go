// Package limiter holds the gates a sweep compares. A gate sees each arrival
// in time order and answers reject, or a release time >= t at which the
// request is handed to the server. Policers release at t; shapers later.
//
// Every gate is a deterministic state machine driven by the times passed in:
// nothing here reads a clock.
package limiter

// Gate decides on one arrival at t ms (non-decreasing from call to call) from
// client (an index into the workload's clients).
type Gate interface {
	Offer(t float64, client int32) (release float64, ok bool)
}

// Advisor is a gate that can say when it would admit again: after it
// rejected client's request at t, NextAdmitMS is the earliest time (>= t)
// at which a request of that client would be admitted if nothing else
// arrived before it, the gate's Retry-After. A gate implements it where
// that time is well defined (the policers); clients that honour it
// (workload.Behaviour.RetryAfter) do not retry earlier.
type Advisor interface {
	NextAdmitMS(t float64, client int32) float64
}

// Occupancy is what an admission gate reads from the server: the number of
// requests in the system (waiting or in service) at t.
type Occupancy interface {
	InSystem(t float64) int
}

// None admits everything at once: the baseline with no limiter.
type None struct{}

// Offer admits the request at t.
func (None) Offer(t float64, _ int32) (float64, bool) { return t, true }

// TypeNone is the baseline's type name.
const TypeNone Type = "none"

func noneKind() *Kind {
	return &Kind{
		Type:    TypeNone,
		Model:   "no limiter: every request goes to the server at once",
		Example: Params{},
		New:     func(*Spec, Params, Env) (Gate, error) { return None{}, nil },
	}
}
