package charts

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/web/format"
)

// View is a finished run as the charts read it: its points grouped into
// sweep lines, and the point whose time series the page shows.
type View struct {
	Res *experiments.Result
	// Chosen is the point whose time series the page shows; Step lists, per
	// limiter, the point shown beside it (same swept value where the limiter
	// has it, else the same position in its sweep).
	Chosen int
	Step   []int
	// Lines are the sweep's lines: one per limiter, or one per combination
	// of a limiter's outer parameters when it sweeps more than one.
	Lines []SweepLine
	// Query is what the page's address asks: the table's order and filter,
	// the Pareto chart's columns.
	Query Query
	// Answer is the engine's answer to the config's objectives
	// (experiments/decide), nil without objectives.
	Answer *decide.Answer
	// parent is the whole run's view when this one holds some of its lines
	// (byUnit, a tandem's line): colors and ranks come from the parent.
	parent *View
}

// SweepLine is the points of one chart line, in sweep order.
type SweepLine struct {
	Name   string
	Points []*experiments.Point
	// params are the line's other parameters that vary ("rate_rps=200"),
	// scenario its swept fields, server, policy and load where they vary
	// ("load bursty"): pointLabel puts the parameters in parentheses and
	// the rest after them.
	params, scenario []string
}

// NewView groups a result's points into lines and picks the points of the
// time-series charts; chosen < 0 picks a default: with objectives, the
// recommended setting (RecommendedPoint), else the point a series report
// names, else the middle of the first limiter's sweep.
func NewView(res *experiments.Result, chosen int) *View {
	answer := decide.Decide(res) // on the stored points: axisX adds swept fields to their parameters
	res = axisX(res)
	v := &View{Res: res, Answer: answer}
	n := len(res.Points)
	if n == 0 {
		return v
	}
	if chosen < 0 || chosen >= n {
		chosen = RecommendedPoint(answer)
	}
	if chosen < 0 || chosen >= n {
		chosen = defaultPoint(res)
	}
	v.Chosen = chosen
	byLimiter := map[int][]*experiments.Point{}
	var order []int
	for i := range res.Points {
		p := &res.Points[i]
		if _, ok := byLimiter[p.LimiterIndex]; !ok {
			order = append(order, p.LimiterIndex)
		}
		byLimiter[p.LimiterIndex] = append(byLimiter[p.LimiterIndex], p)
	}
	cp := &res.Points[chosen]
	pos := slices.Index(byLimiter[cp.LimiterIndex], cp)
	for _, li := range order {
		pts := byLimiter[li]
		pick := -1
		if li == cp.LimiterIndex {
			// The chosen point itself: in a sweep of two parameters the
			// first point with its swept value may have another rate.
			pick = chosen
		}
		for _, p := range pts {
			if pick < 0 && p.Swept == cp.Swept && p.SweptValue() == cp.SweptValue() {
				pick = p.Index
			}
		}
		if pick < 0 {
			pick = pts[min(pos, len(pts)-1)].Index
		}
		v.Step = append(v.Step, pick)
		v.Lines = append(v.Lines, linesOf(pts, res.Config.Axes())...)
	}
	return v
}

// RecommendedPoint is the point a run page opens on when its config has
// objectives: the best overall setting's point in its binding scenario
// (with nothing feasible, the closest setting's, where it misses the
// most); -1 without an answer or a complete setting.
func RecommendedPoint(a *decide.Answer) int {
	if a == nil || a.Best < 0 {
		return -1
	}
	for _, ch := range a.Choices {
		if ch.Setting == a.Best {
			return ch.Point
		}
	}
	return a.Settings[a.Best].Point(-1)
}

func defaultPoint(res *experiments.Result) int {
	for _, r := range res.Config.Reports {
		for _, c := range r.Columns {
			if c.Limiter == nil || c.Swept == nil {
				continue
			}
			for i := range res.Points {
				p := &res.Points[i]
				if p.LimiterIndex == *c.Limiter && p.SweptValue() == *c.Swept {
					return i
				}
			}
		}
	}
	last := 0
	for i := range res.Points {
		if res.Points[i].LimiterIndex != res.Points[0].LimiterIndex {
			break
		}
		last = i
	}
	return last / 2
}

// linesOf splits one limiter's points into sweep lines by the values of
// its parameters other than the swept one; a line's name lists the ones
// that vary ("token-bucket (rate_rps=50)").
func linesOf(pts []*experiments.Point, axes []experiments.Axis) []SweepLine {
	var lines []SweepLine
	index := map[string]int{}
	for _, p := range pts {
		var fixed []string
		for _, name := range paramsOf(p) {
			if name != p.Swept && varies(pts, name) {
				fixed = append(fixed, fmt.Sprintf("%s=%s", name, format.Num(p.Params.Get(name))))
			}
		}
		params := slices.Clone(fixed)
		fields := axisSplit(axes, pts, p, p.Swept)
		fixed = append(fixed, fields...)
		fixed = append(fixed, variantSplit(pts, p)...)
		name := p.Limiter
		if len(fixed) > 0 {
			name += " (" + strings.Join(fixed, ", ") + ")"
		}
		i, ok := index[name]
		if !ok {
			i = len(lines)
			index[name] = i
			lines = append(lines, SweepLine{Name: name, params: params, scenario: append(variantNamed(pts, p), fields...)})
		}
		lines[i].Points = append(lines[i].Points, p)
	}
	return lines
}

// variantSplit names p's server, client policy and load where they vary
// in pts: points of another server, policy or load are other lines, never
// one line through the same x (a policy sweep at one limiter setting).
func variantSplit(pts []*experiments.Point, p *experiments.Point) []string {
	var out []string
	for _, get := range []func(q *experiments.Point) string{
		func(q *experiments.Point) string { return q.ServerName },
		func(q *experiments.Point) string { return q.PolicyName },
		func(q *experiments.Point) string { return q.LoadName },
	} {
		if v := get(p); v != "" && slices.ContainsFunc(pts, func(q *experiments.Point) bool { return get(q) != v }) {
			out = append(out, v)
		}
	}
	return out
}

// variantNamed is variantSplit with each name after its axis: "server
// fast", "policy retry", "load bursty".
func variantNamed(pts []*experiments.Point, p *experiments.Point) []string {
	var out []string
	for _, v := range []struct {
		axis string
		get  func(q *experiments.Point) string
	}{
		{"server", func(q *experiments.Point) string { return q.ServerName }},
		{"policy", func(q *experiments.Point) string { return q.PolicyName }},
		{"load", func(q *experiments.Point) string { return q.LoadName }},
	} {
		if name := v.get(p); name != "" && slices.ContainsFunc(pts, func(q *experiments.Point) bool { return v.get(q) != name }) {
			out = append(out, v.axis+" "+name)
		}
	}
	return out
}

// varies reports whether a parameter takes more than one value in pts.
func varies(pts []*experiments.Point, param string) bool {
	for _, p := range pts[1:] {
		if p.Params.Get(param) != pts[0].Params.Get(param) {
			return true
		}
	}
	return false
}

// Categorical reports whether every sweep line is a single point: the run
// compares limiters at one setting each, so its sweep charts show the
// limiters side by side as bars instead of lines against a parameter.
func (v *View) Categorical() bool {
	for _, l := range v.Lines {
		if len(l.Points) > 1 {
			return false
		}
	}
	return len(v.Lines) > 0
}

// splitsLimiters reports whether some limiter draws several lines (it
// sweeps more than one parameter).
func (v *View) splitsLimiters() bool { return len(v.Lines) > len(v.Step) }

// lineColor is sweep line i's color: its limiter's, so one limiter looks
// the same on every chart; when a limiter draws several lines, each line
// has a color of its own.
func (v *View) lineColor(i int) string {
	if r, j := v.globalLine(i); r != v {
		return r.lineColor(j)
	}
	if v.splitsLimiters() {
		return palette[i%len(palette)]
	}
	return limiterColor(v.Lines[i].Points[0].LimiterIndex)
}

// lineRank orders sweep line i for marked: its limiter, or the line itself
// when a limiter draws several.
func (v *View) lineRank(i int) int {
	if r, j := v.globalLine(i); r != v {
		return r.lineRank(j)
	}
	if v.splitsLimiters() {
		return i
	}
	return v.Lines[i].Points[0].LimiterIndex
}

// globalLine maps line i of this view to the run's whole view.
func (v *View) globalLine(i int) (*View, int) {
	if v.parent == nil {
		return v, i
	}
	first := v.Lines[i].Points[0]
	for j, l := range v.parent.Lines {
		if l.Points[0] == first {
			return v.parent, j
		}
	}
	return v, i
}

// lineOf is the index of the sweep line holding p, or -1.
func (v *View) lineOf(p *experiments.Point) int {
	for i, l := range v.Lines {
		if slices.Contains(l.Points, p) {
			return i
		}
	}
	return -1
}

// pointColor is the color of p's sweep line, for the charts at one point.
func (v *View) pointColor(p *experiments.Point) string {
	if i := v.lineOf(p); i >= 0 {
		return v.lineColor(i)
	}
	return limiterColor(p.LimiterIndex)
}

// pointLabel names a point by its limiter and swept value, its other
// swept parameters in parentheses, then the scenario its line is in:
// "token-bucket burst=10 (rate_rps=200), load bursty".
func (v *View) pointLabel(p *experiments.Point) string {
	i := v.lineOf(p)
	if i < 0 {
		return limiterPointName(p)
	}
	l := &v.Lines[i]
	name := limiterPointName(p)
	if len(l.params) > 0 {
		name += " (" + strings.Join(l.params, ", ") + ")"
	}
	if len(l.scenario) > 0 {
		name += ", " + strings.Join(l.scenario, ", ")
	}
	return name
}

// limiterPointName names a point by its limiter and swept value alone
// ("token-bucket burst=37").
func limiterPointName(p *experiments.Point) string {
	if p.Swept == "" {
		return p.Limiter
	}
	return fmt.Sprintf("%s %s=%s", p.Limiter, p.Swept, format.Num(p.SweptValue()))
}

// xRange is the smallest and largest swept value.
func (v *View) xRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range v.sweptPoints() {
		x := p.SweptValue()
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// points are the points of the view's lines, line by line.
func (v *View) points() []*experiments.Point {
	var out []*experiments.Point
	for _, l := range v.Lines {
		out = append(out, l.Points...)
	}
	return out
}

// sweptPoints are the points of lines that sweep a parameter, or every
// point when no line does: a limiter at one setting ("none") has no x of
// its own and is drawn flat across the others' range.
func (v *View) sweptPoints() []*experiments.Point {
	var out []*experiments.Point
	for _, p := range v.points() {
		if p.Swept != "" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return v.points()
	}
	return out
}

// sweptAxisName names the x axis of the sweep charts: the swept
// parameters with their units, for example "burst / queue (requests)".
func (v *View) sweptAxisName() string {
	var names, units []string
	for _, p := range v.sweptPoints() {
		name := p.Swept
		if name == "" {
			name = "(no parameter)"
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		if u := v.unit(p.Swept); u != "" && !slices.Contains(units, u) {
			units = append(units, u)
		}
	}
	s := strings.Join(names, " / ")
	if len(units) > 0 {
		s += " (" + strings.Join(units, ", ") + ")"
	}
	return s
}

// byUnit splits the sweep charts by the unit of the swept parameter, one
// view per unit in the order the units first appear; the limiters at one
// setting join the first. With one unit (or a categorical run) it is the
// view itself.
func (v *View) byUnit() []*View {
	if v.Categorical() {
		return []*View{v}
	}
	var units []string
	var unswept []SweepLine
	byUnit := map[string][]SweepLine{}
	for _, l := range v.Lines {
		if l.Points[0].Swept == "" {
			unswept = append(unswept, l)
			continue
		}
		u := v.unit(l.Points[0].Swept)
		if _, ok := byUnit[u]; !ok {
			units = append(units, u)
		}
		byUnit[u] = append(byUnit[u], l)
	}
	if len(units) < 2 {
		return []*View{v}
	}
	out := make([]*View, len(units))
	for k, u := range units {
		out[k] = &View{Res: v.Res, Chosen: v.Chosen, Step: v.Step, Lines: byUnit[u], parent: v}
	}
	out[0].Lines = append(out[0].Lines, unswept...)
	return out
}
