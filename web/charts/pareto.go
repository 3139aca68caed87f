package charts

import (
	"fmt"
	"slices"

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
	xc, yc := res.Config.ObjectiveColumn(xKey), res.Config.ObjectiveColumn(paretoY)
	if xc == nil || yc == nil {
		return nil
	}
	front := decide.Front(res.Points, xc, xLower, yc, yLower)
	answer := v.Answer
	better := func(lower bool) string {
		if lower {
			return "lower is better"
		}
		return "higher is better"
	}
	// The columns go in the subtitle, on two lines: the chart may be half
	// the page wide (beside the parallel chart), too narrow for one.
	title := "Pareto front: " + ColumnLabel(paretoY) + " against " + ColumnLabel(xKey)
	sub := fmt.Sprintf("%s, %s,\nagainst %s, %s", ColumnLabel(paretoY), better(yLower), ColumnLabel(xKey), better(xLower))
	// The grid starts below the subtitle's two lines with room for a
	// pin's head on a point at the top.
	o := newChart("Pareto front", sub, ColumnLabel(paretoY), Grid{Left: "70", Top: "104", Right: "30", Bottom: "95"})
	o.XAxis = []XAxis{{Type: "value", Name: ColumnLabel(xKey), NameLocation: "middle", NameGap: 28, Scale: true}}
	o.Tooltip = Tooltip{Show: boolPtr(true), Trigger: "item"}
	o.measureX(xKey)
	o.measure(paretoY)
	names := pointNames(v)
	item := func(i int) (Item, bool) {
		x, okx := xc.Value(&res.Points[i])
		y, oky := yc.Value(&res.Points[i])
		it := xy(x, y)
		it.Point, it.Tip = &i, names[i].tip(v, i)
		return it, okx && oky
	}
	var all, feasible, line, recommended, shown []Item
	for i := range res.Points {
		it, ok := item(i)
		if !ok {
			continue
		}
		all = append(all, it)
		if answer != nil && answer.Verdicts[i].MeetsAll {
			feasible = append(feasible, it)
		}
		if names[i].recommended {
			recommended = append(recommended, it)
		}
		if i == v.Chosen {
			shown = append(shown, it)
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
	if len(recommended) > 0 {
		o.add("recommended", "scatter", recommended, colored(recommendedColor), func(s *Series) { s.Symbol, s.SymbolSize, s.SymbolOffset = "pin", 26, []any{0, "-50%"} })
	}
	o.add("shown below", "scatter", shown, colored("#111827"), func(s *Series) { s.Symbol, s.SymbolSize = "emptyCircle", 16 })
	intro := "Every point of the sweep on two results columns; the line joins the points no other point beats on both"
	if answer != nil {
		intro += "; the diamonds meet every objective, the pins are the recommended settings (in their binding scenario)"
	}
	intro += "; the ring is the point Deploy and Over time show. Click a point to show it there"
	g := &Group{ID: "pareto", Title: "Pareto front", Intro: intro, Axes: &AxisChoice{X: xKey, Y: yKey}}
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
	g.Charts = []Chart{chart("chart-pareto", title, o)}
	if pc := parallelChart(v); pc != nil {
		g.Charts = append(g.Charts, *pc)
		g.Intro += "; the lines below are the settings over every objective's worst value"
	}
	g.Intro += "."
	return g
}

// recommendedColor marks the recommended settings.
const recommendedColor = "#ea580c"

// pointName is what a chart says a point is: its setting and scenario
// (with objectives, as experiments/decide groups the points), else its
// limiter, parameters and what else tells it apart (PointExtras).
type pointName struct {
	setting, scenario string
	recommended, best bool
}

// pointNames names every point of the view's run.
func pointNames(v *View) []pointName {
	res, a := v.Res, v.Answer
	out := make([]pointName, len(res.Points))
	if a == nil {
		extras := PointExtras(res.Config, res.Points)
		for i := range res.Points {
			p := &res.Points[i]
			name := p.Limiter
			if len(p.Params) > 0 {
				name += " " + formatParams(p)
			}
			out[i].setting = name
			out[i].scenario = extras[i]
		}
		return out
	}
	recommended := map[int]bool{}
	for _, ch := range a.Choices {
		if ch.Feasible > 0 && ch.Point >= 0 {
			recommended[ch.Point] = true
		}
	}
	best := RecommendedPoint(a)
	for i := range out {
		if i >= len(a.SettingOf) {
			break
		}
		s := &a.Settings[a.SettingOf[i]]
		name := s.Limiter
		if n := s.Name(); n != "" {
			name += " " + n
		}
		out[i] = pointName{setting: name, scenario: a.Scenarios[a.ScenarioOf[i]].Name(), recommended: recommended[i], best: i == best && a.Feasible > 0}
	}
	return out
}

// tip is a point's tooltip lines before its values.
func (n pointName) tip(v *View, i int) []string {
	lines := []string{fmt.Sprintf("point %d", i), "setting: " + n.setting}
	if n.scenario != "" {
		lines = append(lines, "scenario: "+n.scenario)
	}
	switch {
	case n.best:
		lines = append(lines, "best overall (recommended)")
	case n.recommended:
		lines = append(lines, "recommended for its limiter")
	}
	if v.Answer != nil && i < len(v.Answer.Verdicts) && v.Answer.Verdicts[i].MeetsAll {
		lines = append(lines, "meets every objective here")
	}
	return lines
}
