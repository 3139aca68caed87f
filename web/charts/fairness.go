package charts

import (
	"fmt"
	"slices"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/web/format"
)

// maxClientBars bounds the per-client bar chart.
const maxClientBars = 100

// fairnessSection compares the clients of a run with two or more: Jain's
// index along the sweep and over time, the admitted share of each client
// group, and each client's admitted rate. Nil for a single client.
func fairnessSection(v *View) *Group {
	res := v.Res
	if len(res.Clients) < 2 {
		return nil
	}
	g := &Group{ID: "fairness", Title: "Fairness between clients",
		Intro: "Jain's index over the clients' admitted rates: 1 when every client gets the same, 1/n when one client gets everything."}
	nc := fmt.Sprintf("%d clients", len(res.Clients))
	g.Charts = append(g.Charts, v.sweepCharts("chart-jain", "Jain's fairness index", func(v *View, title string) *Option {
		o := v.newSweepChart(title, nc, nc, "Jain's index (1 = equal)")
		o.measure("jain_index")
		v.sweepLines(o, "", keyed("jain_index"), solid)
		v.intervals(o, "", "jain_index")
		fitY(o, 1)
		return o
	})...)

	ungrouped := slices.ContainsFunc(res.Clients, func(c workload.Client) bool { return c.Group == "" })
	if len(res.Groups) > 1 || len(res.Groups) == 1 && ungrouped {
		sub := "share of all admitted requests"
		if ungrouped {
			sub += "; ungrouped: the clients outside any group"
		}
		g.Charts = append(g.Charts, v.sweepCharts("chart-shares", "Admitted share per client group", func(v *View, title string) *Option {
			return v.groupShares(title, sub, ungrouped)
		})...)
	}
	g.Charts = append(g.Charts, v.clientBars(), v.jainOverTime())
	return g
}

// groupShares is the chart of admitted shares per client group; with
// ungrouped, the clients outside any group are one more share, so a
// point's shares add up to 100%.
func (v *View) groupShares(title, sub string, ungrouped bool) *Option {
	o := v.newSweepChart(title, sub, sub, "share of admitted (%)")
	for gi, name := range v.Res.Groups {
		style := solid
		if gi%2 == 1 {
			style = dashed
		}
		if gi >= 2 {
			style = dotted
		}
		v.sweepLines(o, " "+name, func(p *experiments.Point) (float64, bool) {
			if gi < len(p.Metrics.GroupSharePct) {
				return p.Metrics.GroupSharePct[gi], true
			}
			return 0, false
		}, style)
	}
	if ungrouped {
		v.sweepLines(o, " ungrouped", func(p *experiments.Point) (float64, bool) {
			if p.Metrics.Admitted == 0 || len(p.Metrics.GroupSharePct) == 0 {
				return 0, false
			}
			sum := 0.0
			for _, s := range p.Metrics.GroupSharePct {
				sum += s
			}
			return max(0, 100-sum), true
		}, dotted)
	}
	return o
}

// clientBars is each client's admitted rate at the chosen step, one bar
// series per limiter, for the first maxClientBars clients.
func (v *View) clientBars() Chart {
	res := v.Res
	n := min(len(res.Clients), maxClientBars)
	sub := "at the chosen point of each limiter"
	if n < len(res.Clients) {
		sub = fmt.Sprintf("first %d of %d clients, %s", n, len(res.Clients), sub)
	}
	title := "Admitted rate per client" + v.firstRun(&res.Points[v.Chosen])
	o := newChart(title, sub, "admitted (req/s)", Grid{Left: "70", Top: "70", Right: "30", Bottom: "110"})
	names := make([]string, n)
	for i := range names {
		names[i] = res.Clients[i].Name
	}
	o.XAxis = []XAxis{{Type: "category", Name: "client", NameLocation: "middle", NameGap: 40, Data: names, AxisLabel: &AxisLabel{Rotate: 30}}}
	for _, pi := range v.Step {
		p := &res.Points[pi]
		data := make([]Item, n)
		for i := range data {
			if i < len(p.Clients) {
				data[i] = Item{Value: p.Clients[i].AdmittedRPS}
			}
		}
		color := v.pointColor(p)
		o.add(v.pointLabel(p), "bar", data, func(s *Series) { s.ItemStyle = &ItemStyle{Color: color} })
	}
	return chart("chart-clients", title, o)
}

// jainOverTime is Jain's index per fairness window at the chosen step.
func (v *View) jainOverTime() Chart {
	res := v.Res
	W := res.Config.Metrics.FairnessWindowMS
	title := "Jain's index over time" + v.firstRun(&res.Points[v.Chosen])
	o := newLine(title, fmt.Sprintf("per %s ms window, at the chosen point of each limiter", format.Num(W)), "time (ms)", "Jain's index (1 = equal)", "value")
	o.measure("jain_index")
	for _, pi := range v.Step {
		p := &res.Points[pi]
		data := make([]Item, len(p.JainSeries))
		for k, j := range p.JainSeries {
			data[k] = xy(float64(k)*W, j)
		}
		o.addLine(v.pointLabel(p), data, styled(v.pointColor(p), solid, steps)...)
	}
	fitY(o, 1)
	return chart("chart-jain-time", title, o)
}
