package charts

import (
	"fmt"
	"slices"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
)

// Pareto chart's default columns: goodput (up) against p99 sojourn (across).
const (
	paretoX = "sojourn_p99_ms"
	paretoY = "goodput_rps"
)

// ParetoKeys are the results columns the Pareto chart can plot: the
// results table's metric columns.
func ParetoKeys() []string {
	keys := make([]string, 0, len(tableColumns))
	for _, c := range tableColumns {
		keys = append(keys, c.key)
	}
	return keys
}

// AxisChoice is a chart's choice of columns, a form of two selects that
// reloads the page with them (a permalink: ?px=...&py=...).
type AxisChoice struct {
	X, Y    string // the columns shown
	Options []AxisOption
}

// AxisOption is one column a select offers.
type AxisOption struct{ Key, Label string }

// paretoSection plots every point on two results columns, the Pareto front
// (experiments/decide.Front) as a line and the points meeting every
// objective marked. The columns are the page's Query's (px, py), else
// goodput_rps against sojourn_p99_ms, or, when the config has objectives,
// against the first objective's column other than goodput_rps. Nil with
// fewer than two points.
func paretoSection(v *View) *Group {
	res := v.Res
	if len(res.Points) < 2 {
		return nil
	}
	objs := res.Config.Objectives
	xKey, yKey := paretoX, paretoY
	for _, o := range objs {
		if o.Metric != paretoY {
			xKey = o.Metric
			break
		}
	}
	if v.Query.ParetoX != "" {
		xKey = v.Query.ParetoX
	}
	if v.Query.ParetoY != "" {
		yKey = v.Query.ParetoY
	}
	paretoY := yKey
	xLower, yLower := decide.LowerIsBetter(objs, xKey), decide.LowerIsBetter(objs, paretoY)
	xc, yc := experiments.ColumnByKey(xKey), experiments.ColumnByKey(paretoY)
	if xc == nil || yc == nil {
		return nil
	}
	front := decide.Front(res.Points, xKey, xLower, paretoY, yLower)
	answer := v.Answer
	better := func(lower bool) string {
		if lower {
			return "lower is better"
		}
		return "higher is better"
	}
	sub := fmt.Sprintf("%s: %s; %s: %s", ColumnLabel(xKey), better(xLower), ColumnLabel(paretoY), better(yLower))
	o := newChart("Pareto front: "+ColumnLabel(paretoY)+" against "+ColumnLabel(xKey), sub, ColumnLabel(paretoY), Grid{Left: "70", Top: "70", Right: "30", Bottom: "95"})
	o.XAxis = []XAxis{{Type: "value", Name: ColumnLabel(xKey), NameLocation: "middle", NameGap: 28, Scale: true}}
	o.Tooltip = Tooltip{Show: boolPtr(true), Trigger: "item"}
	o.measureX(xKey)
	o.measure(paretoY)
	item := func(i int) (Item, bool) {
		x, okx := xc.Value(&res.Points[i])
		y, oky := yc.Value(&res.Points[i])
		return xy(x, y), okx && oky
	}
	var all, feasible, line []Item
	for i := range res.Points {
		it, ok := item(i)
		if !ok {
			continue
		}
		all = append(all, it)
		if answer != nil && answer.Verdicts[i].MeetsAll {
			feasible = append(feasible, it)
		}
	}
	for _, i := range front {
		it, _ := item(i)
		line = append(line, it)
	}
	o.add("every point", "scatter", all, colored(referenceColor), func(s *Series) { s.Symbol, s.SymbolSize = "circle", 6 })
	if answer != nil {
		o.add("meets every objective", "scatter", feasible, colored("#16a34a"), func(s *Series) { s.Symbol, s.SymbolSize = "diamond", 12 })
	}
	o.addLine("Pareto front", line, solid, colored("#2563eb"), dots)
	intro := "Every point of the sweep on two results columns; the line joins the points no other point beats on both"
	if answer != nil {
		intro += "; the diamonds meet every objective"
	}
	g := &Group{ID: "pareto", Title: "Pareto front", Intro: intro + ".", Axes: &AxisChoice{X: xKey, Y: yKey}}
	keys := ParetoKeys()
	for _, k := range []string{yKey, xKey} {
		if !slices.Contains(keys, k) {
			keys = append([]string{k}, keys...)
		}
	}
	for _, k := range keys {
		if k == "jain_index" && len(res.Clients) <= 1 && xKey != k && yKey != k {
			continue
		}
		g.Axes.Options = append(g.Axes.Options, AxisOption{Key: k, Label: ColumnLabel(k)})
	}
	g.Charts = []Chart{chart("chart-pareto", o.Title.Text, o)}
	return g
}
