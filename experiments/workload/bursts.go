package workload

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments/field"
)

// Bursts is a list of bursts, each count requests at at_ms spread evenly
// over spread_ms (all at at_ms when 0), from one client or dealt round
// robin to clients "<group>-1".."<group>-N" within each burst. Arrivals at
// or after the window's end are dropped.
const Bursts PartType = "bursts"

// Burst is count requests at at_ms, spread evenly over spread_ms.
type Burst struct {
	AtMS     float64 `json:"at_ms"`
	Count    int     `json:"count"`
	SpreadMS float64 `json:"spread_ms,omitempty"`
}

var burstsField = Field{Name: "bursts", Label: "Bursts", Input: InputLines, Line: "at_ms,count[,spread_ms]",
	Doc: "count requests at at_ms, spread evenly over spread_ms"}

func burstsKind() *Kind {
	return &Kind{
		Type:     Bursts,
		Label:    "bursts",
		Model:    "count requests at at_ms, spread evenly over spread_ms, round robin over the clients",
		Fields:   []Field{clientField, groupField, clientsField, weightField, burstsField},
		Validate: validateBursts,
		Expected: func(p *Part, _ float64) float64 {
			n := 0.0
			for _, b := range p.Bursts {
				n += float64(b.Count)
			}
			return n
		},
		Generate: generateBursts,
		Describe: func(p *Part) string { return fmt.Sprintf("%d bursts", len(p.Bursts)) },
	}
}

func validateBursts(p *Part, path string, _ float64) field.List {
	var errs field.List
	if len(p.Bursts) == 0 {
		errs.Add(field.Join(path, "bursts"), "needs at least one burst")
	}
	checkGroupWithClients(&errs, path, p)
	total := 0
	for i, b := range p.Bursts {
		bp := field.Index(field.Join(path, "bursts"), i)
		checkTime(&errs, field.Join(bp, "at_ms"), b.AtMS)
		if b.Count < 1 || b.Count > MaxBurstCount {
			errs.Add(field.Join(bp, "count"), "must be between 1 and %d", MaxBurstCount)
		}
		if !finite(b.SpreadMS) || b.SpreadMS < 0 || b.SpreadMS > MaxDurationMS {
			errs.Add(field.Join(bp, "spread_ms"), "must be between 0 and %d ms", MaxDurationMS)
		}
		total += b.Count
	}
	if total > MaxBurstCount {
		errs.Add(field.Join(path, "bursts"), "at most %d requests in all", MaxBurstCount)
	}
	return errs
}

// generateBursts emits the bursts in the order given as one run, then sorts
// it by time (ties keep that order).
func generateBursts(g *Generator, p *Part) error {
	ids := g.PartClients(p)
	w := g.WindowMS()
	g.StartRun()
	for _, b := range p.Bursts {
		for j := 0; j < b.Count; j++ {
			t := b.AtMS
			if b.SpreadMS > 0 {
				t += float64(j) * b.SpreadMS / float64(b.Count)
			}
			if t < w {
				g.Emit(t, ids[j%len(ids)])
			}
		}
	}
	g.SortRun()
	return nil
}
