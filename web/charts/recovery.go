package charts

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// recoverySection shows the recovery after a flash crowd (see
// experiments.Recovery): the recovery time of each limiter at the chosen
// step, and the two quantities it waits for over the trailing second, the
// acceptance ratio and the server queue. Nil when no point measured a
// recovery.
func recoverySection(v *View) *Group {
	res := v.Res
	var crowd *experiments.Recovery
	for _, pi := range v.Step {
		if r := res.Points[pi].Metrics.Recovery; r != nil {
			crowd = r
			break
		}
	}
	if crowd == nil || crowd.Rule == experiments.RecoveryGoodput {
		return nil // the client model's goodput recovery: clientSection
	}
	span := fmt.Sprintf("crowd from %s to %s ms", format.Num(crowd.CrowdStartMS), format.Num(crowd.CrowdEndMS))
	g := &Group{ID: "recovery", Title: "Recovery after the flash crowd" + v.firstRun(&res.Points[v.Chosen]),
		Intro: fmt.Sprintf("Recovery time: from the crowd's end until the trailing second's acceptance ratio is back to at least %s%% of its pre-crowd value and its mean server queue (in_system_max) at most %s%% of it. A hollow dashed bar: not recovered before the run ends (its height the time watched after the crowd).",
			format.Num(100*(1-experiments.RecoveryTolerance)), format.Num(100*(1+experiments.RecoveryTolerance)))}
	g.Charts = append(g.Charts, v.recoveryBars(span))

	// trailing is a quantity of the trailing second, one point per 100 ms
	// window, per limiter in its color.
	trailing := func(id, title, yName string, f func(s *experiments.Series, from, to int) float64) Chart {
		o := newLine(title, span+"; each point is the second ending there", "time (ms)", yName, "value")
		sw := res.Config.SeriesWindow()
		windows := int(res.Config.Workload.DurationMS / sw)
		for _, pi := range v.Step {
			p := &res.Points[pi]
			pts := make([]Item, 0, windows)
			for k := experiments.RecoveryWindows - 1; k < windows; k++ {
				pts = append(pts, xy(float64(k+1)*sw, f(&p.Series, k+1-experiments.RecoveryWindows, k+1)))
			}
			o.addLine(v.pointLabel(p), pts, styled(v.pointColor(p), solid, plain)...)
		}
		return chart(id, title, o)
	}
	g.Charts = append(g.Charts,
		trailing("chart-recovery-accept", "Acceptance over the trailing second", "accepted (%)", func(s *experiments.Series, from, to int) float64 {
			return 100 * s.AcceptRatio(from, to)
		}),
		trailing("chart-recovery-queue", "Server queue over the trailing second", "mean in_system_max (requests)", func(s *experiments.Series, from, to int) float64 {
			return s.QueueMean(from, to)
		}))
	return g
}

// recoveryBars is the recovery time of each limiter at the chosen step, a
// bar in its color. A limiter that did not recover before the run ends
// gets a hollow dashed bar as tall as the time the run watched after the
// crowd, labelled "did not recover" (an empty slot read as 0 ms).
func (v *View) recoveryBars(span string) Chart {
	res := v.Res
	names := make([]string, len(v.Step))
	data := make([]Item, len(v.Step))
	recovered, missed := 0, 0
	for i, pi := range v.Step {
		p := &res.Points[pi]
		names[i] = v.pointLabel(p)
		r := p.Metrics.Recovery
		switch {
		case r != nil && r.RecoveryMS != nil:
			recovered++
			data[i] = Item{Value: *r.RecoveryMS, ItemStyle: &ItemStyle{Color: v.pointColor(p)}}
		case r != nil:
			missed++
			watched := res.Config.Workload.DurationMS - r.CrowdEndMS
			data[i] = Item{Value: watched,
				ItemStyle: &ItemStyle{Color: "rgba(0,0,0,0)", BorderColor: v.pointColor(p), BorderWidth: 2, BorderType: "dashed"},
				Label:     &Label{Show: true, Position: "inside", Formatter: "did not recover", Color: "#374151"},
				Tip:       []string{names[i], fmt.Sprintf("did not recover in the %s ms after the crowd", format.Num(watched))}}
		default:
			data[i] = Item{Value: "-"}
		}
	}
	sub := span + ", at the chosen point of each limiter"
	switch {
	case recovered == 0 && missed > 0:
		sub = span + ": no limiter recovered before the run ends (dashed bars: the time watched)"
	case missed > 0:
		sub += "; dashed: did not recover before the run ends"
	}
	o := newChart("Recovery time", sub, "recovery (ms)", Grid{Left: "110", Top: "70", Right: "30", Bottom: "110"})
	o.Legend = &Legend{Show: boolPtr(false)}
	o.XAxis = []XAxis{{Type: "category", Data: names, AxisLabel: thinned(len(names))}}
	o.measure("recovery_ms")
	o.add("recovery_ms", "bar", data)
	return chart("chart-recovery", "Recovery time after the flash crowd", o)
}
