package charts

import (
	"slices"

	"github.com/ratelab/ratelab/experiments"
)

// flowSection puts each client group's own bound at the shared FIFO
// server beside its measured worst time there (experiments.FlowBound,
// clients.csv's per-flow columns): per point with per-flow bounds (a
// per-client or hierarchical token bucket, the first maxClientLines of
// them) and per group (a client outside any group is its own), the
// longest release-to-finish of the group's clients, their FIFO bound
// (the best theta of the FIFO residual service curve) and their
// blind-multiplexing bound, the largest over the group's clients each.
// Nil when no point has per-flow bounds.
func flowSection(v *View) *Group {
	res := v.Res
	var pts []*experiments.Point
	for i := range res.Points {
		p := &res.Points[i]
		if slices.ContainsFunc(p.Clients, func(c experiments.ClientResult) bool { return c.Flow != nil }) {
			pts = append(pts, p)
		}
	}
	if len(pts) == 0 {
		return nil
	}
	pts = pts[:min(len(pts), maxClientLines)]
	tier := func(c int) string {
		if g := res.Clients[c].Group; g != "" {
			return g
		}
		return res.Clients[c].Name
	}
	var tiers []string
	for c := range res.Clients {
		if t := tier(c); !slices.Contains(tiers, t) {
			tiers = append(tiers, t)
		}
	}
	var names []string
	var measured, fifo, blind []Item
	for _, p := range pts {
		for _, t := range tiers {
			var m, f, b float64
			bounded, blinded := false, false
			for c, cl := range p.Clients {
				if tier(c) != t || cl.Flow == nil {
					continue
				}
				m = max(m, cl.SojournMaxMS)
				if cl.Flow.Note == "" {
					f, bounded = max(f, cl.Flow.FIFOBoundMS), true
				}
				if cl.Flow.BlindBoundMS > 0 {
					b, blinded = max(b, cl.Flow.BlindBoundMS), true
				}
			}
			names = append(names, limiterPointName(p)+" · "+t)
			measured = append(measured, Item{Value: m})
			fifo = append(fifo, optional(f, bounded))
			blind = append(blind, optional(b, blinded))
		}
	}
	g := &Group{ID: "flows", Title: "Per-client bounds at the shared server",
		Intro: "Each client group's own delay bound at the FIFO server its clients share (release to finish), beside the longest time a client of the group spent there: the FIFO residual service curve at its best theta (never above the aggregate's bound), and blind multiplexing, which assumes nothing of the order (no bar: the group's rate exceeds what the others leave). clients.csv has every client's."}
	title := "Measured worst and per-flow bounds per client group"
	o := newChart(title, "at the run's server, largest over the group's clients", "time at the server (ms)", Grid{Left: "70", Top: "70", Right: "30", Bottom: "130"})
	o.XAxis = []XAxis{{Type: "category", Name: "limiter · client group", NameLocation: "middle", NameGap: 95, Data: names, AxisLabel: thinned(len(names))}}
	o.measure("sojourn_bound_ms")
	o.add("measured worst", "bar", measured)
	o.add("FIFO bound", "bar", fifo)
	o.add("blind multiplexing bound", "bar", blind)
	g.Charts = append(g.Charts, chart("chart-flow-bounds", title, o))
	return g
}

// optional is a bar's value, or no bar.
func optional(v float64, ok bool) Item {
	if !ok {
		return Item{Value: "-"} // echarts: no value
	}
	return Item{Value: v}
}
