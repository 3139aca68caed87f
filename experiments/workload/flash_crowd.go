package workload

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments/field"
)

// FlashCrowd is a base rate over the whole window, multiplied by multiplier
// between start_ms and start_ms + duration_ms, with linear ramps of ramp_ms
// up at the start and down at the end of the crowd. By default (arrival
// "poisson") it is a non-homogeneous Poisson process, drawn by thinning
// candidates at the peak rate; "uniform" or "synchronized" pace it at the
// instantaneous rate. Requests go to one client, or at random to clients
// "<group>-1".."<group>-N" (in turn when paced).
const FlashCrowd PartType = "flash-crowd"

// The flash crowd's own fields.
var (
	baseRateField = Field{Name: "base_rps", Label: "Base rate", Unit: "req/s", Input: InputNumber, Sweep: true,
		Doc: "before and after the crowd"}
	multiplierField = Field{Name: "multiplier", Label: "Multiplier", Unit: "×", Input: InputNumber, Sweep: true,
		Doc: "peak = base × multiplier"}
	crowdDurationField = Field{Name: "duration_ms", Label: "Crowd duration", Unit: "ms", Input: InputNumber, Sweep: true,
		Doc: "from start_ms to the end of the crowd, ramps included"}
	rampField = Field{Name: "ramp_ms", Label: "Ramp", Unit: "ms", Input: InputNumber, Sweep: true, Default: "0",
		Doc: "linear up and down"}
)

func flashCrowdKind() *Kind {
	return &Kind{
		Type:  FlashCrowd,
		Label: "flash crowd",
		Model: "base_rps, multiplied by multiplier for duration_ms from start_ms with linear ramps of ramp_ms; Poisson or paced",
		Fields: []Field{clientField, groupField, clientsField, weightField, baseRateField, multiplierField,
			startField.with("start of the crowd", ""), crowdDurationField, rampField,
			arrivalField.with("poisson: thinning at the peak rate; uniform or synchronized: paced at the instantaneous rate", string(ArrivalPoisson))},
		Validate: validateFlashCrowd,
		Trigger:  func(p *Part) (float64, float64) { return p.StartMS, p.StartMS + p.DurationMS },
		Expected: func(p *Part, w float64) float64 {
			return p.BaseRPS*w/1000 + p.BaseRPS*(p.Multiplier-1)*p.DurationMS/1000
		},
		Generate: func(g *Generator, p *Part) error {
			ids := g.PartClients(p)
			g.StartRun()
			g.flashCrowd(p, ids)
			return nil
		},
		Runs: func(g *Generator, p *Part) []Run {
			return []Run{g.newFlashRun(p, g.PartClients(p))}
		},
		Describe: func(p *Part) string {
			return fmt.Sprintf("flash crowd %g rps × %g for %g ms", p.BaseRPS, p.Multiplier, p.DurationMS)
		},
	}
}

func validateFlashCrowd(p *Part, path string, durationMS float64) field.List {
	var errs field.List
	checkRate(&errs, field.Join(path, "base_rps"), p.BaseRPS, false)
	if !finite(p.Multiplier) || p.Multiplier < 1 || p.Multiplier > 1000 {
		errs.Add(field.Join(path, "multiplier"), "must be between 1 and 1000")
	} else {
		checkRate(&errs, field.Join(path, "multiplier"), p.BaseRPS*p.Multiplier, false)
	}
	if !finite(p.DurationMS) || p.DurationMS <= 0 || p.DurationMS > MaxDurationMS {
		errs.Add(field.Join(path, "duration_ms"), "must be more than 0 and at most %d ms", MaxDurationMS)
	}
	if !finite(p.RampMS) || p.RampMS < 0 || 2*p.RampMS > p.DurationMS {
		errs.Add(field.Join(path, "ramp_ms"), "must be between 0 and half of duration_ms")
	}
	checkGroupWithClients(&errs, path, p)
	errs = append(errs, checkArrival(field.Join(path, "arrival"), p.Arrival)...)
	// Poisson thinning draws candidates at the peak rate over the
	// whole run, however short the crowd.
	if draws := p.BaseRPS * p.Multiplier * durationMS / 1000; (p.Arrival == "" || p.Arrival == ArrivalPoisson) && draws > MaxThinningDraws {
		errs.Add(field.Join(path, "multiplier"), "draws about %.0f candidate arrivals at the peak rate over the run; the limit is %d (a lower peak, a shorter run or arrival \"uniform\")", draws, MaxThinningDraws)
	}
	return errs
}

// flashRate is the rate of a flash crowd at t: base outside [start,
// start+duration), the multiplied rate inside, with linear ramps of ramp_ms
// at both ends.
func flashRate(p *Part, t float64) float64 {
	peak := p.BaseRPS * p.Multiplier
	s, e := p.StartMS, p.StartMS+p.DurationMS
	switch {
	case t < s || t >= e:
		return p.BaseRPS
	case p.RampMS > 0 && t < s+p.RampMS:
		return p.BaseRPS + (peak-p.BaseRPS)*(t-s)/p.RampMS
	case p.RampMS > 0 && t >= e-p.RampMS:
		return p.BaseRPS + (peak-p.BaseRPS)*(e-t)/p.RampMS
	}
	return peak
}

// flashCrowd draws a non-homogeneous process: Poisson by thinning at the
// peak rate (default), or paced at the instantaneous rate (uniform).
func (g *Generator) flashCrowd(p *Part, ids []int32) {
	rng := g.Rand(0)
	n := len(ids)
	if p.Arrival == ArrivalUniform || p.Arrival == ArrivalSynchronized {
		k := 0
		for t := 0.0; t < g.w; t += 1000 / flashRate(p, t) {
			g.Emit(t, ids[k%n])
			k++
		}
		return
	}
	peak := p.BaseRPS * p.Multiplier
	mean := 1000 / peak
	for t := rng.ExpFloat64() * mean; t < g.w; t += rng.ExpFloat64() * mean {
		if rng.Float64()*peak < flashRate(p, t) {
			c := ids[0]
			if n > 1 {
				c = ids[rng.IntN(n)]
			}
			g.Emit(t, c)
		}
	}
}
