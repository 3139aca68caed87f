package web

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/workload"
)

// Chart is one echarts chart on a page: the element id (unique on the
// page, also go-echarts' ChartID), a title for readers without JavaScript,
// and the echarts option as JSON. The page puts Option in a data-option
// attribute, HTML-escaped by templ, and static/app.js draws it: no user
// text ever lands inside a script.
type Chart struct {
	ID     string
	Title  string
	Option string
}

// ChartGroup is one section of charts on the run page.
type ChartGroup struct {
	ID     string // anchor of the section
	Title  string
	Intro  string
	Charts []Chart
}

// ChartSection builds one section of the run page from a finished run, or
// returns nil when the run has nothing to show in it (for example fairness
// with a single client).
type ChartSection func(v *ResultView) *ChartGroup

// chartSections are the run page's sections in page order. To add a section,
// write a ChartSection (in its own file if you like) and append it here.
var chartSections = []ChartSection{
	throughputSection,
	delaySection,
	downstreamSection,
	fairnessSection,
	timeSection,
}

// ResultView is a finished run as the charts read it.
type ResultView struct {
	Res *experiments.Result
	// Chosen is the point whose time series the page shows; Step lists, per
	// limiter, the point shown beside it (same swept value where the limiter
	// has it, else the same position in its sweep).
	Chosen int
	Step   []int
	// Lines are the sweep's lines: one per limiter, or one per combination
	// of a limiter's outer parameters when it sweeps more than one.
	Lines []SweepLine
	// parent is the whole run's view when this one holds some of its lines
	// (byUnit, a tandem's line): colors and ranks come from the parent.
	parent *ResultView
}

// SweepLine is the points of one chart line, in sweep order.
type SweepLine struct {
	Name   string
	Points []*experiments.Point
}

// NewResultView groups a result's points into lines and picks the points
// of the time-series charts; chosen < 0 picks a default (the point a
// series report names, else the middle of the first limiter's sweep).
func NewResultView(res *experiments.Result, chosen int) *ResultView {
	v := &ResultView{Res: res}
	n := len(res.Points)
	if n == 0 {
		return v
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
		v.Lines = append(v.Lines, splitLines(pts)...)
	}
	return v
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

// splitLines splits one limiter's points by the values of its parameters
// other than the swept one.
func splitLines(pts []*experiments.Point) []SweepLine {
	var lines []SweepLine
	index := map[string]int{}
	for _, p := range pts {
		var fixed []string
		for _, name := range limiter.ParamsOf(p.Type) {
			if name != p.Swept && varies(pts, name) {
				fixed = append(fixed, fmt.Sprintf("%s=%s", name, formatNum(p.Params.Get(name))))
			}
		}
		name := p.Limiter
		if len(fixed) > 0 {
			name += " (" + strings.Join(fixed, ", ") + ")"
		}
		i, ok := index[name]
		if !ok {
			i = len(lines)
			index[name] = i
			lines = append(lines, SweepLine{Name: name})
		}
		lines[i].Points = append(lines[i].Points, p)
	}
	return lines
}

func varies(pts []*experiments.Point, param string) bool {
	for _, p := range pts[1:] {
		if p.Params.Get(param) != pts[0].Params.Get(param) {
			return true
		}
	}
	return false
}

// Groups builds every section that has something to show.
func (v *ResultView) Groups() []*ChartGroup {
	var out []*ChartGroup
	if len(v.Res.Points) == 0 {
		return nil
	}
	for _, s := range chartSections {
		if g := s(v); g != nil && len(g.Charts) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// paramUnit is the unit of a limiter parameter, for axis names.
func paramUnit(param string) string {
	switch param {
	case limiter.ParamRate:
		return "req/s"
	case limiter.ParamWindow:
		return "ms"
	case "":
		return ""
	}
	return "requests"
}

// sweptAxisName names the x axis of the sweep charts: the swept
// parameters with their units, for example "burst / queue (requests)".
func (v *ResultView) sweptAxisName() string {
	var names, units []string
	for _, p := range v.sweptPoints() {
		name := p.Swept
		if name == "" {
			name = "(no parameter)"
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		if u := paramUnit(p.Swept); u != "" && !slices.Contains(units, u) {
			units = append(units, u)
		}
	}
	s := strings.Join(names, " / ")
	if len(units) > 0 {
		s += " (" + strings.Join(units, ", ") + ")"
	}
	return s
}

// newLine starts a line chart with the house style: title and subtitle,
// axis names with units, a scrolling legend at the bottom, axis tooltips,
// no animation.
func newLine(id, title, subtitle, xName, yName string, xType string) *charts.Line {
	c := charts.NewLine()
	c.SetGlobalOptions(
		charts.WithInitializationOpts(opts.Initialization{ChartID: id}),
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: title, Subtitle: subtitle, Left: "center"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "plain", Bottom: "0"}),
		charts.WithGridOpts(opts.Grid{Left: "70", Right: "30", Top: "70", Bottom: "95"}),
		charts.WithXAxisOpts(opts.XAxis{Type: xType, Name: xName, NameLocation: "middle", NameGap: 28, Scale: opts.Bool(xType == "value")}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: yName, NameLocation: "middle", NameGap: 50}),
	)
	return c
}

// optionJSON renders a chart's option as JSON (go-echarts' own option map,
// marshalled with HTML escaping on).
func optionJSON(c interface {
	Validate()
	JSON() map[string]interface{}
}) string {
	switch t := c.(type) {
	case *charts.Line:
		fitLegend(&t.Legend, t.GridList, t.MultiSeries)
	case *charts.Bar:
		fitLegend(&t.Legend, t.GridList, t.MultiSeries)
	}
	c.Validate()
	b, err := json.Marshal(c.JSON())
	if err != nil {
		// The option holds only numbers and strings: this cannot fail.
		panic(fmt.Sprintf("chart option: %v", err))
	}
	return string(b)
}

// Legend layout: a chart is at least 520 px wide (static/style.css:
// minmax(520px, 1fr)), about 650 px on a 1440 px screen; the grid's bottom
// margin holds two legend rows.
const (
	legendWidth   = 560
	legendRowPx   = 22
	legendMaxRows = 4
)

// legendRows estimates how many rows echarts needs for a plain legend of
// these names (a 25 px icon, 5 px padding and 10 px gap per item, about
// 6 px per character of 12 px text).
func legendRows(names []string) int {
	rows, x := 1, 0
	for _, n := range names {
		w := 40 + 6*len([]rune(n))
		if x > 0 && x+w > legendWidth {
			rows, x = rows+1, 0
		}
		x += w
	}
	return rows
}

// fitLegend keeps a long legend off the x axis name: three or four rows
// raise the grid's bottom by a row each; more become a one-row scrolling
// legend. (A plain legend that wraps to a third row used to be drawn over
// the axis name, as in a sweep of two token-bucket parameters.)
func fitLegend(l *opts.Legend, grids []opts.Grid, series charts.MultiSeries) {
	if l.Show != nil && !*l.Show || len(grids) == 0 {
		return
	}
	names := make([]string, 0, len(series))
	for _, s := range series {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	rows := legendRows(names)
	if rows <= 2 {
		return
	}
	if rows > legendMaxRows {
		l.Type = "scroll"
		return
	}
	if b, err := strconv.Atoi(grids[0].Bottom); err == nil {
		grids[0].Bottom = strconv.Itoa(b + legendRowPx*(rows-2))
	}
}

func xy(x, y float64) opts.LineData { return opts.LineData{Value: []float64{x, y}} }

// Line types: a limiter keeps its color on every chart (colored); the line
// type tells the measures of one chart apart.
var (
	solid  = charts.WithLineStyleOpts(opts.LineStyle{Type: "solid", Width: 2})
	dashed = charts.WithLineStyleOpts(opts.LineStyle{Type: "dashed", Width: 2})
	dotted = charts.WithLineStyleOpts(opts.LineStyle{Type: "dotted", Width: 2})
)

// palette colors the limiters, in order.
var palette = []string{"#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777", "#4b5563", "#65a30d"}

// referenceColor draws reference lines (offered load, deadline, capacity).
const referenceColor = "#6b7280"

// limiterColor is limiter li's color.
func limiterColor(li int) string { return palette[li%len(palette)] }

// marked sizes a sweep line's marks and width by its limiter: earlier
// limiters draw wider and larger, so where two limiters measure the same
// the earlier one still shows around the later one.
func marked(li int) charts.SeriesOpts {
	size := max(4, 10-3*li)
	width := float32(max(1.5, 4-1.5*float64(li)))
	return func(s *charts.SingleSeries) {
		s.Symbol, s.SymbolSize = "circle", size
		if s.LineStyle != nil {
			ls := *s.LineStyle
			ls.Width = width
			s.LineStyle = &ls
		}
	}
}

// colored sets a series' line and symbol color, keeping its line type. Give
// it after the line-type option.
func colored(color string) charts.SeriesOpts {
	return func(s *charts.SingleSeries) {
		ls := opts.LineStyle{Width: 2}
		if s.LineStyle != nil {
			ls = *s.LineStyle // a copy: the line-type options share theirs
		}
		ls.Color = color
		s.LineStyle = &ls
		s.ItemStyle = &opts.ItemStyle{Color: color}
	}
}

// styled is a line type in a color.
func styled(color string, lineType charts.SeriesOpts) []charts.SeriesOpts {
	return []charts.SeriesOpts{lineType, colored(color)}
}

var (
	dots  = charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true), Symbol: "circle", SymbolSize: 6})
	plain = charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)})
	steps = charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false), Step: "start"})
)

// Categorical reports whether every sweep line is a single point: the run
// compares limiters at one setting each, so its sweep charts show the
// limiters side by side as bars instead of lines against a parameter.
func (v *ResultView) Categorical() bool {
	for _, l := range v.Lines {
		if len(l.Points) > 1 {
			return false
		}
	}
	return len(v.Lines) > 0
}

// newSweepChart starts a chart of measures against the swept parameter
// (lineSub is its subtitle), or, for a categorical run, against the
// limiters as bars (barSub).
func (v *ResultView) newSweepChart(id, title, lineSub, barSub, yName string) *charts.Line {
	if !v.Categorical() {
		return newLine(id, title, lineSub, v.sweptAxisName(), yName, "value")
	}
	c := newLine(id, title, barSub, "limiter", yName, "category")
	names := make([]string, len(v.Lines))
	for i, l := range v.Lines {
		names[i] = l.Name
	}
	c.SetXAxis(names)
	c.SetGlobalOptions(charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: "limiter", NameLocation: "middle", NameGap: 58,
		AxisLabel: &opts.AxisLabel{Interval: "0", Rotate: 12}}))
	return c
}

// categorical reports whether c puts the limiters on its x axis.
func categorical(c *charts.Line) bool { return c.XAxisList[0].Type == "category" }

// asBar draws a series as bars.
func asBar(s *charts.SingleSeries) { s.Type = "bar" }

// sweepLines adds one series per sweep line of metric(point), in the
// line's color and the given line type. On a categorical chart it adds one
// bar series instead, a bar per limiter, named by suffix (or the y axis).
func (v *ResultView) sweepLines(c *charts.Line, suffix string, metric func(p *experiments.Point) (float64, bool), lineType charts.SeriesOpts) {
	if categorical(c) {
		name := strings.TrimSpace(suffix)
		if name == "" {
			name = c.YAxisList[0].Name
		}
		data := make([]opts.LineData, len(v.Lines))
		for i, l := range v.Lines {
			data[i] = opts.LineData{Value: "-"} // echarts: no value
			if y, ok := metric(l.Points[0]); ok {
				data[i] = opts.LineData{Value: y}
			}
		}
		c.AddSeries(name, data, lineType, colored(palette[len(c.MultiSeries)%len(palette)]), asBar)
		return
	}
	lo, hi := v.xRange()
	for i, l := range v.Lines {
		if p := l.Points[0]; len(l.Points) == 1 && p.Swept == "" && lo < hi {
			// One setting, nothing swept: the same at every x (it was a
			// lone point at x = 0 that stretched the axis).
			if y, ok := metric(p); ok {
				c.AddSeries(l.Name+suffix, []opts.LineData{xy(lo, y), xy(hi, y)}, plain, lineType, colored(v.lineColor(i)))
			}
			continue
		}
		var data []opts.LineData
		for _, p := range l.Points {
			if y, ok := metric(p); ok {
				data = append(data, xy(p.SweptValue(), y))
			}
		}
		if len(data) > 0 {
			c.AddSeries(l.Name+suffix, data, dots, lineType, colored(v.lineColor(i)), marked(v.lineRank(i)))
		}
	}
}

// splitLines reports whether some limiter draws several lines (it sweeps
// more than one parameter).
func (v *ResultView) splitLines() bool { return len(v.Lines) > len(v.Step) }

// lineColor is sweep line i's color: its limiter's, so one limiter looks
// the same on every chart; when a limiter draws several lines, each line
// has its own color (one color for rate_rps=50, 100 and 150 made them
// impossible to tell apart).
func (v *ResultView) lineColor(i int) string {
	if r, j := v.globalLine(i); r != v {
		return r.lineColor(j)
	}
	if v.splitLines() {
		return palette[i%len(palette)]
	}
	return limiterColor(v.Lines[i].Points[0].LimiterIndex)
}

// lineRank orders sweep line i for marked: its limiter, or the line itself
// when a limiter draws several.
func (v *ResultView) lineRank(i int) int {
	if r, j := v.globalLine(i); r != v {
		return r.lineRank(j)
	}
	if v.splitLines() {
		return i
	}
	return v.Lines[i].Points[0].LimiterIndex
}

// lineOf is the index of the sweep line holding p, or -1.
func (v *ResultView) lineOf(p *experiments.Point) int {
	for i, l := range v.Lines {
		if slices.Contains(l.Points, p) {
			return i
		}
	}
	return -1
}

// pointColor is the color of p's sweep line, for the charts at one point.
func (v *ResultView) pointColor(p *experiments.Point) string {
	if i := v.lineOf(p); i >= 0 {
		return v.lineColor(i)
	}
	return limiterColor(p.LimiterIndex)
}

// pointName labels a point by its sweep line and swept value, so the
// limiter's other swept parameters show too ("token-bucket (rate_rps=50)
// burst=37", not just "token-bucket burst=37").
func (v *ResultView) pointName(p *experiments.Point) string {
	i := v.lineOf(p)
	if i < 0 {
		return pointName(p)
	}
	if p.Swept == "" {
		return v.Lines[i].Name
	}
	return fmt.Sprintf("%s %s=%s", v.Lines[i].Name, p.Swept, formatNum(p.SweptValue()))
}

// xRange is the smallest and largest swept value.
func (v *ResultView) xRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range v.sweptPoints() {
		x := p.SweptValue()
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// points are the points of the view's lines, line by line.
func (v *ResultView) points() []*experiments.Point {
	var out []*experiments.Point
	for _, l := range v.Lines {
		out = append(out, l.Points...)
	}
	return out
}

// sweptPoints are the points of lines that sweep a parameter, or every
// point when no line does: a limiter at one setting ("none") has no x of
// its own and is drawn flat across the others' range.
func (v *ResultView) sweptPoints() []*experiments.Point {
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

// byUnit splits the sweep charts by the unit of the swept parameter: one
// x axis holding burst (requests), window_ms (ms) and rate_rps (req/s)
// squeezed a limit of 1..10 against windows of 100..1000 ms. With one
// unit (or a categorical run) it is the view itself.
func (v *ResultView) byUnit() []*ResultView {
	if v.Categorical() {
		return []*ResultView{v}
	}
	var units []string
	var unswept []SweepLine // limiters at one setting ("none"): a point at x = 0
	byUnit := map[string][]SweepLine{}
	for _, l := range v.Lines {
		if l.Points[0].Swept == "" {
			unswept = append(unswept, l)
			continue
		}
		u := paramUnit(l.Points[0].Swept)
		if _, ok := byUnit[u]; !ok {
			units = append(units, u)
		}
		byUnit[u] = append(byUnit[u], l)
	}
	if len(units) < 2 {
		return []*ResultView{v}
	}
	out := make([]*ResultView, len(units))
	for k, u := range units {
		out[k] = &ResultView{Res: v.Res, Chosen: v.Chosen, Step: v.Step, Lines: byUnit[u], parent: v}
	}
	out[0].Lines = append(out[0].Lines, unswept...)
	return out
}

// sweepCharts draws one sweep chart per unit of the swept parameters
// (see byUnit): the first keeps id, the others get id-2, id-3, ... and
// every title names its parameters when there are several.
func (v *ResultView) sweepCharts(id, title string, build func(sv *ResultView, id, title string) *charts.Line) []Chart {
	views := v.byUnit()
	out := make([]Chart, 0, len(views))
	for k, sv := range views {
		cid, t := id, title
		if k > 0 {
			cid = fmt.Sprintf("%s-%d", id, k+1)
		}
		if len(views) > 1 {
			t = title + ": " + sv.sweptAxisName()
		}
		out = append(out, Chart{ID: cid, Title: t, Option: optionJSON(build(sv, cid, t))})
	}
	return out
}

// globalLine maps line i of this view to the run's whole view.
func (v *ResultView) globalLine(i int) (*ResultView, int) {
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

func (v *ResultView) flat(c *charts.Line, name string, y float64) {
	if categorical(c) {
		data := make([]opts.LineData, len(v.Lines))
		for i := range data {
			data[i] = opts.LineData{Value: y}
		}
		c.AddSeries(name, data, append([]charts.SeriesOpts{plain}, styled(referenceColor, dotted)...)...)
		return
	}
	lo, hi := v.xRange()
	c.AddSeries(name, []opts.LineData{xy(lo, y), xy(hi, y)}, append([]charts.SeriesOpts{plain}, styled(referenceColor, dotted)...)...)
}

func always(f func(m *experiments.Metrics) float64) func(p *experiments.Point) (float64, bool) {
	return func(p *experiments.Point) (float64, bool) { return f(&p.Metrics), true }
}

func throughputSection(v *ResultView) *ChartGroup {
	g := &ChartGroup{ID: "throughput", Title: "Goodput and rejections",
		Intro: "Goodput counts requests served within the deadline, per second of the arrival window."}

	title := "Goodput against the swept parameter"
	if v.Categorical() {
		title = "Goodput per limiter" // nothing is swept: one bar per limiter
	}
	g.Charts = append(g.Charts, v.sweepCharts("chart-goodput", title, func(v *ResultView, id, title string) *charts.Line {
		c := v.newSweepChart(id, title, "one line per limiter; dotted: offered load", "dotted: offered load", "goodput (req/s)")
		v.sweepLines(c, "", always(func(m *experiments.Metrics) float64 { return m.GoodputRPS }), solid)
		v.flat(c, "offered", v.Res.Points[0].Metrics.OfferedRPS)
		return c
	})...)
	g.Charts = append(g.Charts, v.sweepCharts("chart-reject-late", "Rejected and served late", func(v *ResultView, id, title string) *charts.Line {
		c := v.newSweepChart(id, title, "solid: rejected; dashed: served after the deadline (both % of arrivals)", "late: served after the deadline (both % of arrivals)", "share of arrivals (%)")
		v.sweepLines(c, " rejected", always(func(m *experiments.Metrics) float64 { return m.RejectPct }), solid)
		v.sweepLines(c, " late", always(func(m *experiments.Metrics) float64 { return m.ServedLatePct }), dashed)
		return c
	})...)
	return g
}

func delaySection(v *ResultView) *ChartGroup {
	g := &ChartGroup{ID: "delay", Title: "Where the wait lands",
		Intro: "A shaper holds requests at the gate; a policer passes bursts on and the queue forms at the server."}
	g.Charts = append(g.Charts, v.sweepCharts("chart-waits", "p99 gate delay against p99 server wait", func(v *ResultView, id, title string) *charts.Line {
		c := v.newSweepChart(id, title, "solid: at the gate; dashed: at the server (admitted requests)", "admitted requests", "p99 wait (ms)")
		v.sweepLines(c, " gate p99", always(func(m *experiments.Metrics) float64 { return float64(m.GateDelay.P99) }), solid)
		v.sweepLines(c, " server p99", always(func(m *experiments.Metrics) float64 { return float64(m.ServerWait.P99) }), dashed)
		return c
	})...)

	dl := fmt.Sprintf("arrival to finish; dotted: the deadline (%s ms)", formatNum(v.Res.Config.Server.DeadlineMS))
	g.Charts = append(g.Charts, v.sweepCharts("chart-sojourn", "p99 time in system", func(v *ResultView, id, title string) *charts.Line {
		c := v.newSweepChart(id, title, dl, dl, "p99 sojourn (ms)")
		v.sweepLines(c, "", always(func(m *experiments.Metrics) float64 { return float64(m.Sojourn.P99) }), solid)
		v.flat(c, "deadline", v.Res.Config.Server.DeadlineMS)
		return c
	})...)
	return g
}

// nominal is what a limiter's settings promise about any window of length
// L ms: rate × L for rate limiters, limit × L / window for window limiters;
// ok=false for limiters that promise no rate (admission, none).
func nominal(p *experiments.Point, windowMS float64) (float64, bool) {
	switch p.Type {
	case limiter.TypeTokenBucket, limiter.TypeLeakyBucket, limiter.TypePerClient, limiter.TypeHierarchical:
		return p.Params.RateRPS * windowMS / 1000, true
	case limiter.TypeFixedWindow, limiter.TypeSlidingCounter, limiter.TypeSlidingLog:
		return p.Params.Limit * windowMS / p.Params.WindowMS, true
	}
	return 0, false
}

func downstreamSection(v *ResultView) *ChartGroup {
	cfg := v.Res.Config
	g := &ChartGroup{ID: "downstream", Title: "What the service sees",
		Intro: "The peak is the most releases in an aligned 100 ms window, ×10; the rolling maximum is checked over every window position."}
	pk := fmt.Sprintf("busiest aligned 100 ms window; dotted: server capacity (%s req/s)", formatNum(cfg.Server.RateRPS()))
	g.Charts = append(g.Charts, v.sweepCharts("chart-peak", "Downstream peak rate", func(v *ResultView, id, title string) *charts.Line {
		c := v.newSweepChart(id, title, pk, pk, "peak rate (req/s)")
		v.sweepLines(c, "", always(func(m *experiments.Metrics) float64 { return m.DownstreamPeakRPS }), solid)
		v.flat(c, "server capacity", cfg.Server.RateRPS())
		return c
	})...)

	L := cfg.Metrics.RollingWindowMS
	g.Charts = append(g.Charts, v.sweepCharts("chart-rolling", fmt.Sprintf("Most releases in any %s ms", formatNum(L)), func(v *ResultView, id, title string) *charts.Line {
		c := v.newSweepChart(id, title,
			"solid: measured; dashed: the nominal limit (rate × window, or limit per window)", "measured, and the nominal limit (rate × window, or limit per window)", fmt.Sprintf("releases (per %s ms)", formatNum(L)))
		v.sweepLines(c, " measured", always(func(m *experiments.Metrics) float64 { return float64(m.RollingMax) }), solid)
		v.sweepLines(c, " nominal", func(p *experiments.Point) (float64, bool) { return nominal(p, L) }, dashed)
		return c
	})...)
	return g
}

// groupShares is the chart of admitted shares per client group, with the
// clients outside any group as one more share.
func (v *ResultView) groupShares(id, title, sub string, ungrouped bool) *charts.Line {
	res := v.Res
	c := v.newSweepChart(id, title, sub, sub, "share of admitted (%)")
	for gi, name := range res.Groups {
		style := solid
		if gi%2 == 1 {
			style = dashed
		}
		if gi >= 2 {
			style = dotted
		}
		v.sweepLines(c, " "+name, func(p *experiments.Point) (float64, bool) {
			if gi < len(p.Metrics.GroupSharePct) {
				return p.Metrics.GroupSharePct[gi], true
			}
			return 0, false
		}, style)
	}
	if ungrouped {
		v.sweepLines(c, " ungrouped", func(p *experiments.Point) (float64, bool) {
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
	return c
}

// maxClientBars bounds the per-client bar chart.
const maxClientBars = 100

func fairnessSection(v *ResultView) *ChartGroup {
	res := v.Res
	if len(res.Clients) < 2 {
		return nil
	}
	g := &ChartGroup{ID: "fairness", Title: "Fairness between clients",
		Intro: "Jain's index over the clients' admitted rates: 1 when every client gets the same, 1/n when one client gets everything."}
	nc := fmt.Sprintf("%d clients", len(res.Clients))
	g.Charts = append(g.Charts, v.sweepCharts("chart-jain", "Jain's fairness index", func(v *ResultView, id, title string) *charts.Line {
		c := v.newSweepChart(id, title, nc, nc, "Jain's index (1 = equal)")
		v.sweepLines(c, "", always(func(m *experiments.Metrics) float64 { return m.Jain }), solid)
		return c
	})...)

	// Clients outside any group count as one more share, so the shares
	// add up to 100% (they were left out without a word).
	ungrouped := slices.ContainsFunc(res.Clients, func(c workload.Client) bool { return c.Group == "" })
	if len(res.Groups) > 1 || len(res.Groups) == 1 && ungrouped {
		sub := "share of all admitted requests"
		if ungrouped {
			sub += "; ungrouped: the clients outside any group"
		}
		g.Charts = append(g.Charts, v.sweepCharts("chart-shares", "Admitted share per client group", func(v *ResultView, id, title string) *charts.Line {
			return v.groupShares(id, title, sub, ungrouped)
		})...)
	}

	// Per-client admitted rates at the chosen step, one bar series per limiter.
	n := min(len(res.Clients), maxClientBars)
	sub := "at the chosen point of each limiter"
	if n < len(res.Clients) {
		sub = fmt.Sprintf("first %d of %d clients, %s", n, len(res.Clients), sub)
	}
	b := charts.NewBar()
	b.SetGlobalOptions(
		charts.WithInitializationOpts(opts.Initialization{ChartID: "chart-clients"}),
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: "Admitted rate per client", Subtitle: sub, Left: "center"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "plain", Bottom: "0"}),
		charts.WithGridOpts(opts.Grid{Left: "70", Right: "30", Top: "70", Bottom: "110"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: "client", NameLocation: "middle", NameGap: 40, AxisLabel: &opts.AxisLabel{Rotate: 30}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "admitted (req/s)", NameLocation: "middle", NameGap: 50}),
	)
	names := make([]string, n)
	for i := range names {
		names[i] = res.Clients[i].Name
	}
	b.SetXAxis(names)
	for _, pi := range v.Step {
		p := &res.Points[pi]
		data := make([]opts.BarData, n)
		for i := range data {
			if i < len(p.Clients) {
				data[i] = opts.BarData{Value: p.Clients[i].AdmittedRPS}
			}
		}
		b.AddSeries(v.pointName(p), data, charts.WithItemStyleOpts(opts.ItemStyle{Color: v.pointColor(p)}))
	}
	g.Charts = append(g.Charts, Chart{ID: "chart-clients", Title: "Admitted rate per client", Option: optionJSON(b)})

	W := res.Config.Metrics.FairnessWindowMS
	c := newLine("chart-jain-time", "Jain's index over time", fmt.Sprintf("per %s ms window, at the chosen point of each limiter", formatNum(W)), "time (ms)", "Jain's index (1 = equal)", "value")
	for _, pi := range v.Step {
		p := &res.Points[pi]
		data := make([]opts.LineData, len(p.JainSeries))
		for k, j := range p.JainSeries {
			data[k] = xy(float64(k)*W, j)
		}
		c.AddSeries(v.pointName(p), data, append([]charts.SeriesOpts{steps}, styled(v.pointColor(p), solid)...)...)
	}
	g.Charts = append(g.Charts, Chart{ID: "chart-jain-time", Title: "Jain's index over time", Option: optionJSON(c)})
	return g
}

// pointName labels a point: its limiter and swept value.
func pointName(p *experiments.Point) string {
	if p.Swept == "" {
		return p.Limiter
	}
	return fmt.Sprintf("%s %s=%s", p.Limiter, p.Swept, formatNum(p.SweptValue()))
}

// maxSeriesPoints bounds a time-series line: longer runs are shown in
// buckets of several 100 ms windows (rates stay rates).
const maxSeriesPoints = 300

func timeSection(v *ResultView) *ChartGroup {
	res := v.Res
	chosen := &res.Points[v.Chosen]
	windows := 0
	for _, pi := range v.Step {
		windows = max(windows, res.Points[pi].Series.Windows())
	}
	bucket := (windows + maxSeriesPoints - 1) / maxSeriesPoints
	bucket = max(bucket, 1)
	width := float64(bucket * experiments.SeriesWindowMS)
	sub := fmt.Sprintf("per %s ms window", formatNum(width))
	g := &ChartGroup{ID: "timeline", Title: "Over time, at " + v.pointName(chosen),
		Intro: "Pick a point in the results table (\"show\") to see its time series; the other limiters are shown at the same swept value."}
	rate := func(xs []int32) []opts.LineData {
		data := make([]opts.LineData, 0, windows/bucket+1)
		for k := 0; k < windows; k += bucket {
			sum := 0
			for j := k; j < k+bucket; j++ {
				sum += int(experiments.At(xs, j))
			}
			data = append(data, xy(float64(k*experiments.SeriesWindowMS), float64(sum)*1000/width))
		}
		return data
	}
	c := newLine("chart-series", "Offered against released", sub+"; releases after the arrival window extend the line", "time (ms)", "rate (req/s)", "value")
	c.AddSeries("offered", rate(chosen.Series.Offered), steps, charts.WithLineStyleOpts(opts.LineStyle{Color: "#9ca3af", Width: 1}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#9ca3af"}), charts.WithAreaStyleOpts(opts.AreaStyle{Opacity: opts.Float(0.15)}))
	for _, pi := range v.Step {
		p := &res.Points[pi]
		c.AddSeries(v.pointName(p)+" released", rate(p.Series.Released), append([]charts.SeriesOpts{steps}, styled(v.pointColor(p), solid)...)...)
	}
	g.Charts = append(g.Charts, Chart{ID: "chart-series", Title: "Offered against released", Option: optionJSON(c)})

	c = newLine("chart-rejected", "Rejected over time", sub, "time (ms)", "rejected (req/s)", "value")
	for _, pi := range v.Step {
		p := &res.Points[pi]
		c.AddSeries(v.pointName(p), rate(p.Series.Rejected), append([]charts.SeriesOpts{steps}, styled(v.pointColor(p), solid)...)...)
	}
	g.Charts = append(g.Charts, Chart{ID: "chart-rejected", Title: "Rejected over time", Option: optionJSON(c)})

	c = newLine("chart-insystem", "Requests at the server", sub+"; the most waiting or in service, seen at releases", "time (ms)", "in system (requests)", "value")
	for _, pi := range v.Step {
		p := &res.Points[pi]
		data := make([]opts.LineData, 0, windows/bucket+1)
		for k := 0; k < windows; k += bucket {
			m := int32(0)
			for j := k; j < k+bucket; j++ {
				m = max(m, experiments.At(p.Series.InSystemMax, j))
			}
			data = append(data, xy(float64(k*experiments.SeriesWindowMS), float64(m)))
		}
		c.AddSeries(v.pointName(p), data, append([]charts.SeriesOpts{steps}, styled(v.pointColor(p), solid)...)...)
	}
	g.Charts = append(g.Charts, Chart{ID: "chart-insystem", Title: "Requests at the server", Option: optionJSON(c)})
	return g
}
