package web

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ratelab/ratelab/experiments"
)

func init() { chartSections = append(chartSections, recoverySection) }

// recoverySection shows the recovery after a flash crowd (see
// experiments.Recovery): the recovery time of each limiter, and the two
// quantities it waits for over the trailing second, the acceptance ratio
// and the server queue. Nil when no point measured a recovery.
func recoverySection(v *ResultView) *ChartGroup {
	res := v.Res
	var crowd *experiments.Recovery
	for _, pi := range v.Step {
		if r := res.Points[pi].Metrics.Recovery; r != nil {
			crowd = r
			break
		}
	}
	if crowd == nil {
		return nil
	}
	span := fmt.Sprintf("crowd from %s to %s ms", formatNum(crowd.CrowdStartMS), formatNum(crowd.CrowdEndMS))
	g := &ChartGroup{ID: "recovery", Title: "Recovery after the flash crowd",
		Intro: fmt.Sprintf("Recovery time: from the crowd's end until the trailing second's acceptance ratio is back to at least %s%% of its pre-crowd value and its mean server queue (in_system_max) at most %s%% of it. No bar: not recovered before the run ends.",
			formatNum(100*(1-experiments.RecoveryTolerance)), formatNum(100*(1+experiments.RecoveryTolerance)))}

	names := make([]string, len(v.Step))
	data := make([]opts.BarData, len(v.Step))
	recovered := 0
	for i, pi := range v.Step {
		p := &res.Points[pi]
		names[i] = v.pointName(p)
		if r := p.Metrics.Recovery; r != nil && r.RecoveryMS != nil {
			recovered++
			data[i] = opts.BarData{Value: *r.RecoveryMS, ItemStyle: &opts.ItemStyle{Color: v.pointColor(p)}}
		} else {
			data[i] = opts.BarData{Value: nil}
		}
	}
	sub := span + ", at the chosen point of each limiter"
	if recovered == 0 {
		// An empty chart said nothing by itself.
		sub = span + ": no limiter recovered before the run ends"
	}
	b := charts.NewBar()
	b.SetGlobalOptions(
		charts.WithInitializationOpts(opts.Initialization{ChartID: "chart-recovery"}),
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: "Recovery time", Subtitle: sub, Left: "center"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithGridOpts(opts.Grid{Left: "110", Right: "30", Top: "70", Bottom: "110"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", AxisLabel: &opts.AxisLabel{Rotate: 20, Interval: "0"}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "recovery (ms)", NameLocation: "middle", NameGap: 50}),
	)
	b.SetXAxis(names)
	b.AddSeries("recovery_ms", data)
	g.Charts = append(g.Charts, Chart{ID: "chart-recovery", Title: "Recovery time after the flash crowd", Option: optionJSON(b)})

	// The trailing-second quantities, one point per 100 ms window.
	trailing := func(id, title, yName string, f func(s *experiments.Series, from, to int) float64) {
		c := newLine(id, title, span+"; each point is the second ending there", "time (ms)", yName, "value")
		windows := int(res.Config.Workload.DurationMS / experiments.SeriesWindowMS)
		for _, pi := range v.Step {
			p := &res.Points[pi]
			pts := make([]opts.LineData, 0, windows)
			for k := experiments.RecoveryWindows - 1; k < windows; k++ {
				pts = append(pts, xy(float64((k+1)*experiments.SeriesWindowMS), f(&p.Series, k+1-experiments.RecoveryWindows, k+1)))
			}
			// In the limiter's color, as on every other chart of the page.
			c.AddSeries(v.pointName(p), pts, append([]charts.SeriesOpts{plain}, styled(v.pointColor(p), solid)...)...)
		}
		g.Charts = append(g.Charts, Chart{ID: id, Title: title, Option: optionJSON(c)})
	}
	trailing("chart-recovery-accept", "Acceptance over the trailing second", "accepted (%)", func(s *experiments.Series, from, to int) float64 {
		return 100 * s.AcceptRatio(from, to)
	})
	trailing("chart-recovery-queue", "Server queue over the trailing second", "mean in_system_max (requests)", func(s *experiments.Series, from, to int) float64 {
		return s.QueueMean(from, to)
	})
	return g
}
