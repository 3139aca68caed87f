package charts

import (
	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// What the charts know of limiter types and their parameters, in one
// place: units, the nominal promise, and which parameters a point has.

// ParamUnit is the unit of a limiter parameter, for axis names and the
// run summary; "" for no parameter.
func ParamUnit(param string) string {
	switch param {
	case limiter.ParamRate:
		return "req/s"
	case limiter.ParamWindow:
		return "ms"
	case "":
		return ""
	}
	return "requests"
}

// nominal is what a limiter's settings promise about any window of length
// L ms: rate × L for rate limiters, limit × L / window for window limiters;
// ok=false for limiters that promise no rate (admission, none).
func nominal(p *experiments.Point, windowMS float64) (float64, bool) {
	switch p.Type {
	case limiter.TypeTokenBucket, limiter.TypeLeakyBucket, limiter.TypePerClient, limiter.TypeHierarchical:
		return p.Params.RateRPS * windowMS / 1000, true
	case limiter.TypeFixedWindow, limiter.TypeSlidingCounter, limiter.TypeSlidingLog:
		return p.Params.Limit * windowMS / p.Params.WindowMS, true
	}
	return 0, false
}

// paramsOf lists the parameters of a point's limiter type (none for a
// chain, whose parameters are its stages').
func paramsOf(p *experiments.Point) []string { return limiter.ParamsOf(p.Type) }

// stageParamsOf lists the parameters a point can sweep: its type's, or
// every parameter for a chain.
func stageParamsOf(p *experiments.Point) []string {
	if isChain(p) {
		return limiter.AllParams
	}
	return limiter.ParamsOf(p.Type)
}

// isChain reports whether a point's limiter is a chain of stages.
func isChain(p *experiments.Point) bool { return p.Type == limiter.TypeChain }

// formatParams prints a point's parameters ("rate_rps=80 burst=20").
func formatParams(p *experiments.Point) string { return limiter.FormatParams(p.Type, p.Params) }
