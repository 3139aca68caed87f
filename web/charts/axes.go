package charts

import (
	"maps"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// Swept fields beyond the limiters (experiments.Config.Axes) on the sweep
// charts' x axis. A limiter that sweeps a parameter keeps it on the x axis
// (its points at other values of the swept fields are further lines); a
// limiter at one setting puts the innermost swept field there (a workload
// or server field before the seed). The view then sees each such point as
// if the field were one of its parameters: Swept names the field by its
// config path, Params holds its value, so every chart, the table and the
// step picker read it as they read a limiter parameter.

// axisX returns res with the swept field on the x axis of the points
// whose limiter sweeps nothing (a copy; res itself is never changed), or
// res when the config sweeps no field.
func axisX(res *experiments.Result) *experiments.Result {
	axes := res.Config.Axes()
	if len(axes) == 0 || len(res.Points) == 0 {
		return res
	}
	x := len(axes) - 1
	for i := len(axes) - 1; i >= 0; i-- {
		if axes[i].Part != experiments.AxisSeed {
			x = i
			break
		}
	}
	sweeps := map[int]bool{} // limiters whose own parameter takes several values
	first := map[int]float64{}
	for i := range res.Points {
		p := &res.Points[i]
		if p.Swept == "" {
			continue
		}
		if f, ok := first[p.LimiterIndex]; !ok {
			first[p.LimiterIndex] = p.SweptValue()
		} else if f != p.SweptValue() {
			sweeps[p.LimiterIndex] = true
		}
	}
	out := *res
	out.Points = slices.Clone(res.Points)
	for i := range out.Points {
		p := &out.Points[i]
		if sweeps[p.LimiterIndex] || x >= len(p.Axes) {
			continue
		}
		p.Params = maps.Clone(p.Params)
		if p.Params == nil {
			p.Params = map[string]float64{}
		}
		p.Params[axes[x].Path] = p.Axes[x]
		p.Swept = axes[x].Path
	}
	return &out
}

// unit is the unit of a swept parameter or field, for axis names.
func (v *View) unit(name string) string {
	for _, a := range v.Res.Config.Axes() {
		if a.Path == name {
			return a.Unit
		}
	}
	return ParamUnit(name)
}

// axisSplit names the swept fields that vary among pts, with the point's
// values ("workload.parts[0].rate_rps=50"), so points at other values draw
// other lines; the point's x (skip, its Swept) is left out.
func axisSplit(axes []experiments.Axis, pts []*experiments.Point, p *experiments.Point, skip string) []string {
	var out []string
	for j, a := range axes {
		if a.Path == skip || j >= len(p.Axes) {
			continue
		}
		if slices.ContainsFunc(pts, func(q *experiments.Point) bool { return j < len(q.Axes) && q.Axes[j] != p.Axes[j] }) {
			out = append(out, a.Path+"="+format.Num(p.Axes[j]))
		}
	}
	return out
}

// keyed is the measure of a results column by key: with replications, its
// mean (experiments.Column.Value).
func keyed(key string) metric {
	c := experiments.ColumnByKey(key)
	return func(p *experiments.Point) (float64, bool) {
		if c == nil || c.Value == nil {
			return 0, false
		}
		return c.Value(p)
	}
}

// intervals adds, for a replicated run, each sweep line's 95% confidence
// interval of a column as error bars: a vertical segment from the lower
// to the upper end at each point, in the line's color. The bars stay out
// of the tooltip (their ends and gaps would be three rows a point); an
// undrawn series of the same name (one legend entry toggles both) gives
// the tooltip one row a line, "<line> 95% CI 71.3 – 75.1", each end at
// the column's places.
func (v *View) intervals(o *Option, suffix, key string) {
	if categorical(o) || !v.Res.Config.Replicated() {
		return
	}
	f := experiments.Fixed1
	if c := experiments.ColumnByKey(key); c != nil {
		f = c.MeanFormat()
	}
	for i, l := range v.Lines {
		var bars, rows []Item
		for _, p := range l.Points {
			lo, hi, ok := p.Interval(key)
			if !ok || p.Swept == "" {
				continue
			}
			x := p.SweptValue()
			bars = append(bars, xy(x, lo), xy(x, hi), Item{Value: []any{x, "-"}})
			text := string(experiments.AppendValue(nil, f, lo)) + " – " + string(experiments.AppendValue(nil, f, hi))
			rows = append(rows, Item{Value: []any{x, text}})
		}
		if len(bars) == 0 {
			continue
		}
		name := l.Name + suffix + " 95% CI"
		color := v.lineColor(i)
		of := func(s *Series) { s.line, s.measure = i+1, strings.TrimSpace(suffix) }
		o.addLine(name, bars, plain, lineType("solid"), colored(color), of, func(s *Series) {
			s.LineStyle.Width = 1
			s.Tooltip = &SeriesTooltip{Show: false}
		})
		// The row's value is text: echarts draws nothing at a y that is
		// not a number and prints the text as it is.
		o.addLine(name, rows, plain, lineType("solid"), colored(color), of)
	}
}
