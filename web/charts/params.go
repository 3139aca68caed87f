package charts

import (
	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// What the charts read of the limiter registry, in one place: units, the
// nominal promise, and which parameters a point has.

// ParamUnit is the unit of a limiter parameter, for axis names and the
// run summary; "" for no parameter.
func ParamUnit(param string) string {
	if q, ok := limiter.ParamByName(param); ok {
		return q.Unit
	}
	return ""
}

// gateBound is the gate's own bound on its releases in any window of
// length windowMS: its arrival curve there, alpha(windowMS)
// (limiter.ArrivalCurve, every client of a keyed gate); ok=false for a
// gate without an arrival curve.
func gateBound(res *experiments.Result, p *experiments.Point, windowMS float64) (float64, bool) {
	c, ok := limiter.ArrivalCurve(&res.Config.Limiters[p.LimiterIndex], p.Params, len(res.Clients))
	if !ok {
		return 0, false
	}
	return c.At(windowMS), true
}

// paramsOf lists the parameters of a point's limiter type (none for a
// chain, whose parameters are its stages').
func paramsOf(p *experiments.Point) []string { return limiter.ParamsOf(p.Type) }

// stageParamsOf lists the parameters a point can sweep: its type's, or
// every parameter for a chain.
func stageParamsOf(p *experiments.Point) []string {
	if isChain(p) {
		var names []string
		for _, q := range limiter.AllParams() {
			names = append(names, q.Name)
		}
		return names
	}
	return limiter.ParamsOf(p.Type)
}

// isChain reports whether a point's limiter holds stages (a chain).
func isChain(p *experiments.Point) bool {
	k, ok := limiter.Lookup(p.Type)
	return ok && k.Compound()
}

// formatParams prints a point's parameters ("rate_rps=80 burst=20").
func formatParams(p *experiments.Point) string { return limiter.FormatParams(p.Type, p.Params) }
