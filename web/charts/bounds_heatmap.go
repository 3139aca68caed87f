package charts

import (
	"fmt"
	"math"
	"slices"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// Heatmap scales, low to high: red marks the bad end of each measure.
var (
	heatBadHigh  = []string{"#86efac", "#fde68a", "#f87171"}
	heatGoodHigh = []string{"#f87171", "#fde68a", "#86efac"}
)

// heatMeasure is a measure a heatmap shows, and its color scale.
type heatMeasure struct {
	key, label string
	get        func(p *experiments.Point) float64
	colors     []string // low to high: red is the bad end
}

var heatMeasures = []heatMeasure{
	{"goodput", "goodput (req/s)", func(p *experiments.Point) float64 { return p.Metrics.GoodputRPS }, heatGoodHigh},
	{"sojourn", "p99 sojourn (ms)", func(p *experiments.Point) float64 { return float64(p.Metrics.Sojourn.P99) }, heatBadHigh},
}

// heatmapGroup draws each limiter that sweeps two parameters as heatmaps
// of goodput and p99 sojourn, the swept parameter across and the outer one
// up, the cells whose end-to-end bound meets the deadline outlined; nil
// when no limiter sweeps two.
func heatmapGroup(v *View) *Group {
	res := v.Res
	deadline := res.Config.Server.DeadlineMS
	g := &Group{ID: "heatmaps", Title: "Two-parameter sweeps",
		Intro: fmt.Sprintf("Outlined: the cells whose network-calculus end-to-end bound meets the deadline (%s ms) — settings that are safe for any traffic, not only this workload.", format.Num(deadline))}
	for li := range res.Config.Limiters {
		var pts []*experiments.Point
		for i := range res.Points {
			if res.Points[i].LimiterIndex == li {
				pts = append(pts, &res.Points[i])
			}
		}
		if len(pts) == 0 {
			continue
		}
		var xp, yp string // inner (swept) and outer parameter
		for _, name := range stageParamsOf(pts[0]) {
			if varies(pts, name) {
				if name == pts[0].Swept {
					xp = name
				} else if yp == "" {
					yp = name
				}
			}
		}
		if xp == "" || yp == "" {
			continue
		}
		for _, m := range heatMeasures {
			id := fmt.Sprintf("chart-heat-%d-%s", li, m.key)
			title := fmt.Sprintf("%s: %s", res.Config.Limiters[li].Label(), m.label)
			g.Charts = append(g.Charts, chart(id, title, heatmap(title, pts, xp, yp, m, deadline)))
		}
	}
	if len(g.Charts) == 0 {
		return nil
	}
	return g
}

// heatmap is one measure of pts on a grid of parameters xp and yp.
func heatmap(title string, pts []*experiments.Point, xp, yp string, m heatMeasure, deadlineMS float64) *Option {
	xs, ys := distinctValues(pts, xp), distinctValues(pts, yp)
	data := make([]Item, 0, len(pts))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		val := m.get(p)
		lo, hi = math.Min(lo, val), math.Max(hi, val)
		cell := Item{Value: []float64{float64(slices.Index(xs, p.Params.Get(xp))), float64(slices.Index(ys, p.Params.Get(yp))), val}}
		if b := p.Bounds; b != nil && b.Bounded && b.EndToEndBoundMS <= deadlineMS {
			cell.ItemStyle = &ItemStyle{BorderColor: "#111827", BorderWidth: 3}
		}
		data = append(data, cell)
	}
	if hi <= lo {
		hi = lo + 1
	}
	o := &Option{
		Grid:      []Grid{{Left: "80", Top: "70", Right: "30", Bottom: "100"}},
		Title:     Title{Text: title, Subtext: "outlined: end-to-end bound ≤ deadline", Left: "center"},
		Tooltip:   Tooltip{Position: "top"},
		VisualMap: &VisualMap{Min: lo, Max: hi, Calculable: true, Orient: "horizontal", Left: "center", Bottom: "0", InRange: InRange{Color: m.colors}},
		XAxis: []XAxis{{Type: "category", Data: labels(xs), Name: xp + " (" + ParamUnit(xp) + ")", NameLocation: "middle", NameGap: 28,
			SplitArea: &SplitArea{Show: true}}},
		YAxis: []YAxis{{Type: "category", Data: labels(ys), Name: yp + " (" + ParamUnit(yp) + ")", NameLocation: "middle", NameGap: 60,
			SplitArea: &SplitArea{Show: true}}},
	}
	o.add(m.label, "heatmap", data, func(s *Series) { s.Label = &Label{Show: true} })
	return o
}

// distinctValues lists a parameter's distinct values in sweep order.
func distinctValues(pts []*experiments.Point, name string) []float64 {
	var out []float64
	for _, p := range pts {
		if x := p.Params.Get(name); !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func labels(xs []float64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = format.Num(x)
	}
	return out
}
