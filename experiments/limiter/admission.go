package limiter

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments/cacheline"
)

// Admission is a concurrency limit: it rejects an arrival when limit
// requests are already in the system (waiting or in service at the server),
// and admits it at once otherwise. A limit of 0 refuses every request, as
// the seed lab's Post 2 runs round(capacity × deadline) = 0.
type Admission struct {
	_      cacheline.Pad // a sweep's points run side by side (package cacheline)
	limit  int
	server Occupancy
	_      cacheline.Pad
}

// NewAdmission reads the occupancy of server.
func NewAdmission(limit int, server Occupancy) *Admission {
	return &Admission{limit: limit, server: server}
}

// Offer admits while fewer than limit requests are in the system.
func (a *Admission) Offer(t float64, _ int32) (float64, bool) {
	if a.server.InSystem(t) >= a.limit {
		return 0, false
	}
	return t, true
}

// Admission gives no Retry-After (it is no Advisor, and its row's
// RetryAfter is empty): when it admits again depends on when requests
// leave the server, which the gate does not know when it refuses, and on
// what else arrives meanwhile. Clients that honour Retry-After retry on
// their backoff behind it.

// TypeAdmission is the concurrency limit's type name.
const TypeAdmission Type = "admission"

func admissionKind() *Kind {
	return &Kind{
		Type:        TypeAdmission,
		Model:       "concurrency limit: rejects when limit requests are in the system",
		Params:      []Param{limitParam},
		Size:        ParamLimit,
		Example:     Params{ParamLimit: 10},
		ReadsServer: true,
		New: func(_ *Spec, p Params, env Env) (Gate, error) {
			if env.Server == nil {
				return nil, fmt.Errorf("%s reads the occupancy of the run's server and cannot stand where there is none", TypeAdmission)
			}
			return NewAdmission(int(p[ParamLimit]), env.Server), nil
		},
	}
}
