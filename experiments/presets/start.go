package presets

import (
	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/workload"
)

// The new-sweep form's starting rows: what a new user sees, and what "+ Add
// workload part" and "+ Add limiter" add. They are engine configs, so the
// form names no type of its own.

var doublings = limiter.Values{1, 2, 4, 8, 16, 32, 64}

// Start is the sweep a new user sees: one Poisson client at 90 req/s
// against a token bucket at 100 req/s swept over its burst, into one 10 ms
// worker.
func Start() *experiments.Config {
	cfg := &experiments.Config{
		Version: experiments.Version, Name: "my sweep", Seed: 1,
		Workload: workload.Spec{DurationMS: 10_000, Parts: []workload.Part{StartPart(workload.Poisson, 90)}},
		Limiters: []limiter.Spec{{Type: limiter.TypeTokenBucket, Params: map[string]limiter.Values{
			limiter.ParamRate: {100}, limiter.ParamBurst: doublings}}},
	}
	cfg.Normalize()
	return cfg
}

// StartPart is a one-client part of a type at a rate.
func StartPart(typ workload.PartType, rateRPS float64) workload.Part {
	return workload.Part{Type: typ, RateRPS: rateRPS}
}

// NewPart is the row "+ Add workload part" adds: a constant 50 req/s.
func NewPart() workload.Part { return StartPart(workload.Constant, 50) }

// NewLimiter is the row "+ Add limiter" adds: a leaky bucket at 100 req/s
// swept over its queue.
func NewLimiter() limiter.Spec {
	return limiter.Spec{Type: limiter.TypeLeakyBucket, Params: map[string]limiter.Values{
		limiter.ParamRate: {100}, limiter.ParamQueue: doublings}}
}
