package charts

import (
	"fmt"
	"strconv"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// instancesSection shows, for the chosen point of a limiter run as
// instances (Metrics.Instances), the rate its instances admitted over time
// against the configured limit: the effective limit (all instances
// together) and each instance's share, per series window. Nil for a
// point of one gate.
func instancesSection(v *View) *Group {
	res := v.Res
	p := &res.Points[v.Chosen]
	ins := p.Metrics.Instances
	if len(ins) == 0 {
		return nil
	}
	windows := 0
	for _, in := range ins {
		windows = max(windows, len(in.AdmittedSeries))
	}
	if windows == 0 {
		return nil
	}
	sw := int(res.Config.SeriesWindow())
	bucket := max((windows+maxSeriesPoints-1)/maxSeriesPoints, 1)
	width := float64(bucket * sw)
	rate := func(sum func(k int) int) []Item {
		data := make([]Item, 0, windows/bucket+1)
		for k := 0; k < windows; k += bucket {
			n := 0
			for j := k; j < k+bucket; j++ {
				n += sum(j)
			}
			data = append(data, xy(float64(k*sw), float64(n)*1000/width))
		}
		return data
	}
	g := &Group{ID: "instances", Title: "Instances, at " + v.pointLabel(p) + v.firstRun(p),
		Intro: fmt.Sprintf("The limiter runs as %d instances behind a balancer: what they admitted together (the effective limit) against the limit configured once, and what each admitted, by arrival.", len(ins))}
	sub := fmt.Sprintf("per %s ms window", format.Num(width))
	configured := 0.0
	if r := p.Metrics.Replicas; r != nil {
		configured = r.ConfiguredRPS
	}
	reference := func(o *Option) {
		if configured <= 0 {
			return
		}
		o.addLine("configured limit", []Item{xy(0, configured), xy(float64(windows*sw), configured)}, styled(offeredColor, dashed, plain)...)
	}

	o := newLine("Effective against configured limit", sub, "time (ms)", "admitted (req/s)", "value")
	zoomable(o, "chart-instances-effective")
	reference(o)
	o.addLine(v.pointLabel(p)+" admitted, all instances", rate(func(k int) int {
		n := 0
		for _, in := range ins {
			n += int(experiments.At(in.AdmittedSeries, k))
		}
		return n
	}), styled(v.pointColor(p), solid, steps)...)
	g.Charts = append(g.Charts, chart("chart-instances-effective", "Effective against configured limit", o))

	o = newLine("Admitted per instance", sub, "time (ms)", "admitted (req/s)", "value")
	zoomable(o, "chart-instances-each")
	reference(o)
	for i := range ins {
		series := ins[i].AdmittedSeries
		o.addLine("instance "+strconv.Itoa(i), rate(func(k int) int { return int(experiments.At(series, k)) }), styled(palette[i%len(palette)], solid, steps)...)
	}
	g.Charts = append(g.Charts, chart("chart-instances-each", "Admitted per instance", o))
	return g
}
