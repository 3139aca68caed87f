package workload

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments/field"
)

// Clients is a group of clients named "<group>-1".."<group>-N", each at
// rate_rps between start_ms and end_ms. With arrival "uniform" (the
// default) each client is paced and the clients are evenly out of phase
// (client k starts k/N of a spacing late); "synchronized" paces them in
// phase, so they tie (ties keep client order); "poisson" gives each client
// its own Poisson process.
const Clients PartType = "clients"

func clientsKind() *Kind {
	return &Kind{
		Type:  Clients,
		Label: "client group",
		Model: "N clients <group>-1..N, each at rate_rps between start_ms and end_ms: paced out of phase, paced in phase, or Poisson",
		Fields: []Field{groupField, clientsField, weightField, rateField.with("per client", ""), startField, endField,
			arrivalField.with("uniform: paced, evenly out of phase; synchronized: paced, in phase; poisson: each client a Poisson process", string(ArrivalUniform))},
		Validate: validateClients,
		Expected: func(p *Part, w float64) float64 {
			start, end := p.span(w)
			return float64(p.Clients) * p.RateRPS * (end - start) / 1000
		},
		Level:    func(p *Part, w float64) float64 { return p.spanLevel(float64(p.Clients)*p.RateRPS, w) },
		Generate: generateClients,
		Runs:     clientRuns,
		Describe: func(p *Part) string {
			arrival := p.Arrival
			if arrival == "" {
				arrival = ArrivalUniform
			}
			return fmt.Sprintf("%d %s clients × %g rps (%s)", p.Clients, p.Group, p.RateRPS, arrival)
		},
	}
}

func validateClients(p *Part, path string, _ float64) field.List {
	var errs field.List
	checkRate(&errs, field.Join(path, "rate_rps"), p.RateRPS, false)
	if p.Clients < 1 {
		errs.Add(field.Join(path, "clients"), "must be at least 1")
	}
	if p.Group == "" {
		errs.Add(field.Join(path, "group"), "is required: clients are named <group>-1 .. <group>-N")
	}
	errs = append(errs, checkArrival(field.Join(path, "arrival"), p.Arrival)...)
	return errs
}

// clientRuns streams each client's arrivals as a run of its own.
func clientRuns(g *Generator, p *Part) []Run {
	start, end := p.span(g.WindowMS())
	ids := g.PartClients(p)
	spacing := 1000 / p.RateRPS
	runs := make([]Run, len(ids))
	for k, c := range ids {
		switch p.Arrival {
		case ArrivalPoisson:
			runs[k] = PoissonRun(g.Rand(k), start, end, p.RateRPS, c)
		case ArrivalSynchronized:
			runs[k] = g.PacedRun(start, end, p.RateRPS, c)
		default:
			runs[k] = g.PacedRun(start+float64(k)*spacing/float64(len(ids)), end, p.RateRPS, c)
		}
	}
	return runs
}

// generateClients emits each client's arrivals as a run of its own.
func generateClients(g *Generator, p *Part) error {
	start, end := p.span(g.WindowMS())
	ids := g.PartClients(p)
	spacing := 1000 / p.RateRPS
	for k, c := range ids {
		g.StartRun()
		switch p.Arrival {
		case ArrivalPoisson:
			g.Poisson(g.Rand(k), start, end, p.RateRPS, c)
		case ArrivalSynchronized:
			g.Paced(start, end, p.RateRPS, c)
		default: // uniform: clients evenly out of phase
			g.Paced(start+float64(k)*spacing/float64(len(ids)), end, p.RateRPS, c)
		}
	}
	return nil
}
