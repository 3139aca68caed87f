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

// nominal is what a point's settings promise about any window of length
// windowMS (its Kind's Nominal, for every client of a keyed gate); ok=false
// for limiters that promise no rate.
func nominal(res *experiments.Result, p *experiments.Point, windowMS float64) (float64, bool) {
	return limiter.Nominal(&res.Config.Limiters[p.LimiterIndex], p.Params, len(res.Clients), windowMS)
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
