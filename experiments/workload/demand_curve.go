package workload

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/experiments/field"
)

// DemandCurve is a rate that follows a cycle of segments, each a rate for a
// duration, repeated from t = 0; the last cycle is cut at the window's end.
// Each segment is paced from its start, spaced 1000/rate_rps ms by repeated
// floating addition (so a segment may emit one arrival more than
// rate × duration for the accumulated rounding); a segment of rate 0 is a
// pause.
const DemandCurve PartType = "demand-curve"

// Segment is one piece of a demand curve.
type Segment struct {
	RateRPS    float64 `json:"rate_rps"`
	DurationMS float64 `json:"duration_ms"`
}

var segmentsField = Field{Name: "segments", Label: "Segments", Input: InputLines, Line: "rate_rps,duration_ms",
	Doc: "repeated from t = 0; the last cycle is cut at the window's end"}

func demandCurveKind() *Kind {
	return &Kind{
		Type:     DemandCurve,
		Label:    "demand curve (rate segments)",
		Model:    "paced arrivals at each segment's rate for its duration, the segments repeated from t = 0",
		Fields:   []Field{clientField, groupField, weightField, segmentsField},
		Validate: validateDemandCurve,
		Expected: expectedDemandCurve,
		Level:    levelDemandCurve,
		Generate: generateDemandCurve,
		Runs: func(g *Generator, p *Part) []Run {
			c := g.PartClients(p)[0]
			return []Run{&demandRun{segs: p.Segments, w: g.WindowMS(), done: !(0 < g.WindowMS()), paced: pacedRun{c: c, multiply: g.multiply}}}
		},
		Describe: func(p *Part) string { return fmt.Sprintf("demand curve of %d segments", len(p.Segments)) },
	}
}

func validateDemandCurve(p *Part, path string, durationMS float64) field.List {
	var errs field.List
	if len(p.Segments) == 0 {
		errs.Add(field.Join(path, "segments"), "needs at least one segment")
	}
	if len(p.Segments) > 10_000 {
		errs.Add(field.Join(path, "segments"), "at most 10000 segments")
	}
	total := 0.0
	for i, sg := range p.Segments {
		sp := field.Index(field.Join(path, "segments"), i)
		checkRate(&errs, field.Join(sp, "rate_rps"), sg.RateRPS, true)
		if !finite(sg.DurationMS) || sg.DurationMS <= 0 || sg.DurationMS > MaxDurationMS {
			errs.Add(field.Join(sp, "duration_ms"), "must be more than 0 and at most %d ms", MaxDurationMS)
		}
		total += sg.DurationMS
	}
	if total > 0 && total < 1 {
		errs.Add(field.Join(path, "segments"), "one cycle must last at least 1 ms")
	} else if starts := math.Ceil(durationMS/total) * float64(len(p.Segments)); total > 0 && starts > MaxSegmentStarts {
		// Each start costs a step even at rate 0, so many short
		// segments over a long run would keep the generator busy
		// for hours without emitting anything.
		errs.Add(field.Join(path, "segments"), "%.0f segment starts over the run; the limit is %d (fewer or longer segments)", starts, MaxSegmentStarts)
	}
	return errs
}

// levelDemandCurve is the curve's time-weighted mean rate over the
// window [0, w): sum(rate × duration) over its segments as they repeat
// from 0, the last cut at w, divided by w.
func levelDemandCurve(p *Part, w float64) float64 {
	var area, cycle float64
	for _, sg := range p.Segments {
		area += sg.RateRPS * sg.DurationMS
		cycle += sg.DurationMS
	}
	if !(cycle > 0 && w > 0) {
		return 0
	}
	full := math.Floor(w / cycle)
	area *= full
	rest := w - full*cycle
	for _, sg := range p.Segments {
		if rest <= 0 {
			break
		}
		d := math.Min(sg.DurationMS, rest)
		area += sg.RateRPS * d
		rest -= d
	}
	return area / w
}

// expectedDemandCurve counts whole cycles, then the segments of the cut
// last one. A segment started at s emits at s, s + 1000/rate, ... while
// t < end: at most rate*d/1000 + 2 (one for the start, one for the
// accumulated rounding).
func expectedDemandCurve(p *Part, w float64) float64 {
	segment := func(rate, d float64) float64 {
		if rate <= 0 {
			return 0
		}
		return rate*d/1000 + 2
	}
	n, cycle, count := 0.0, 0.0, 0.0
	for _, sg := range p.Segments {
		cycle += sg.DurationMS
		count += segment(sg.RateRPS, sg.DurationMS)
	}
	if cycle > 0 {
		full := math.Floor(w / cycle)
		n += full * count
		rest := w - full*cycle
		for _, sg := range p.Segments {
			if rest <= 0 {
				break
			}
			d := math.Min(sg.DurationMS, rest)
			n += segment(sg.RateRPS, d)
			rest -= d
		}
	}
	return n
}

func generateDemandCurve(g *Generator, p *Part) error {
	c := g.PartClients(p)[0]
	w := g.WindowMS()
	g.StartRun()
	for s := 0.0; s < w; {
		for _, sg := range p.Segments {
			g.Paced(s, math.Min(s+sg.DurationMS, w), sg.RateRPS, c)
			if s += sg.DurationMS; s >= w {
				break
			}
		}
	}
	return nil
}
