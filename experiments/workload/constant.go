package workload

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments/field"
)

// Constant is one client paced at rate_rps between start_ms and end_ms:
// arrivals at start, then spaced 1000/rate_rps ms by repeated floating
// addition (the seed lab's rule: not start + k × spacing).
const Constant PartType = "constant"

// Poisson is one client sending a Poisson process of mean rate_rps between
// start_ms and end_ms: exponential gaps drawn from the part's own random
// stream.
const Poisson PartType = "poisson"

// rateFields are the fields of a single client at one rate.
func rateFields() []Field {
	return []Field{clientField, groupField, weightField, rateField, startField, endField}
}

func constantKind() *Kind {
	return rateKind(Constant, "constant rate", "one client paced at rate_rps between start_ms and end_ms",
		func(g *Generator, start, end, rate float64, c int32) { g.Paced(start, end, rate, c) },
		func(g *Generator, start, end, rate float64, c int32) Run { return g.PacedRun(start, end, rate, c) })
}

func poissonKind() *Kind {
	return rateKind(Poisson, "Poisson", "one client sending Poisson arrivals of mean rate_rps between start_ms and end_ms",
		func(g *Generator, start, end, rate float64, c int32) { g.Poisson(g.Rand(0), start, end, rate, c) },
		func(g *Generator, start, end, rate float64, c int32) Run {
			return PoissonRun(g.Rand(0), start, end, rate, c)
		})
}

// rateKind is the row of a one-client part at rate_rps over [start_ms,
// end_ms); emit produces its arrivals, run streams them.
func rateKind(typ PartType, label, model string, emit func(g *Generator, start, end, rate float64, c int32), run func(g *Generator, start, end, rate float64, c int32) Run) *Kind {
	return &Kind{
		Type:     typ,
		Label:    label,
		Model:    model,
		Fields:   rateFields(),
		Validate: validateRate,
		Expected: expectedRate,
		Level:    func(p *Part, w float64) float64 { return p.spanLevel(p.RateRPS, w) },
		Generate: func(g *Generator, p *Part) error {
			start, end := p.span(g.WindowMS())
			c := g.PartClients(p)[0]
			g.StartRun()
			emit(g, start, end, p.RateRPS, c)
			return nil
		},
		Runs: func(g *Generator, p *Part) []Run {
			start, end := p.span(g.WindowMS())
			c := g.PartClients(p)[0]
			return []Run{run(g, start, end, p.RateRPS, c)}
		},
		Describe: describeRate,
	}
}

func validateRate(p *Part, path string, _ float64) field.List {
	var errs field.List
	checkRate(&errs, field.Join(path, "rate_rps"), p.RateRPS, false)
	return errs
}

// expectedRate is the rate times the part's span inside the window.
func expectedRate(p *Part, w float64) float64 {
	start, end := p.span(w)
	return p.RateRPS * (end - start) / 1000
}

func describeRate(p *Part) string { return fmt.Sprintf("%s %g rps", p.Type, p.RateRPS) }
