package charts

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/web/format"
)

// Chart is one echarts chart on a page: the element id (unique on the
// page), a title for readers without JavaScript, and the echarts option as
// JSON. The page puts Option in a data-option attribute, HTML-escaped by
// templ, and static/app.js draws it: no user text ever lands inside a
// script.
type Chart struct {
	ID     string
	Title  string
	Option string
	// Height is the chart's height in px when its legend needs more than
	// the default 380 (0: the default): a legend never pages.
	Height int
}

// Group is one section of charts on the run page.
type Group struct {
	ID     string // anchor of the section
	Title  string
	Intro  string
	Charts []Chart
	// Axes, when set, lets the reader choose the charts' columns.
	Axes *AxisChoice
}

// echartsPalette is echarts' default palette, for series without a color
// of their own.
var echartsPalette = []string{"#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"}

// palette colors the limiters, in order.
var palette = []string{"#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777", "#4b5563", "#65a30d"}

// referenceColor draws reference lines (offered load, deadline, capacity).
const referenceColor = "#6b7280"

// limiterColor is limiter li's color.
func limiterColor(li int) string { return palette[li%len(palette)] }

// newChart starts a chart in the house style: title and subtitle centered,
// axis tooltips, a legend at the bottom, the grid's margins, a y axis of
// values named with its unit, no animation.
func newChart(title, subtitle, yName string, grid Grid) *Option {
	return &Option{
		Color:   echartsPalette,
		Grid:    []Grid{grid},
		Legend:  &Legend{Type: "plain", Show: boolPtr(true), Bottom: "0"},
		Title:   Title{Text: title, Subtext: subtitle, Left: "center"},
		Toolbox: &Toolbox{},
		Tooltip: Tooltip{Show: boolPtr(true), Trigger: "axis"},
		YAxis:   []YAxis{{Type: "value", Name: yName, NameLocation: "middle", NameGap: 50}},
	}
}

// newLine starts a line chart in the house style with an x axis of type
// xType ("value" axes need not start at 0) named with its unit.
func newLine(title, subtitle, xName, yName, xType string) *Option {
	o := newChart(title, subtitle, yName, Grid{Left: "70", Top: "70", Right: "30", Bottom: "95"})
	o.XAxis = []XAxis{{Type: xType, Name: xName, NameLocation: "middle", NameGap: 28, Scale: xType == "value"}}
	return o
}

// chart is the finished Chart of an option, its values rounded (round.go),
// its legend fitted and, on a chart of lines only, each legend icon drawn
// in its line's type.
// Every series of several highlights under the pointer (emphasize).
func chart(id, title string, o *Option) Chart {
	roundData(o)
	lineIcons(o)
	emphasize(o)
	titleLines(o)
	extra := 0
	if o.heightPx == 0 {
		extra = fitLegend(o)
	}
	c := Chart{ID: id, Title: title, Option: o.JSON()}
	switch {
	case o.heightPx > 0:
		c.Height = o.heightPx
	case extra > 0:
		c.Height = chartHeightPx + extra
	}
	return c
}

// A seriesOption styles a series; later ones override earlier ones.
type seriesOption func(s *Series)

// add appends a series of data styled by opts to a chart. A line series
// of a chart with lines (not only bars) keeps the chart's animation.
func (o *Option) add(name, typ string, data []Item, opts ...seriesOption) {
	s := Series{Name: name, Type: typ, Data: data}
	if typ == "line" {
		s.Animation = boolPtr(o.Animation)
	}
	for _, opt := range opts {
		opt(&s)
	}
	o.Series = append(o.Series, s)
}

// addLine appends a line series.
func (o *Option) addLine(name string, data []Item, opts ...seriesOption) {
	o.add(name, "line", data, opts...)
}

func xy(x, y float64) Item { return Item{Value: []float64{x, y}} }

// Line types: a limiter keeps its color on every chart (colored); the line
// type tells the measures of one chart apart.
func lineType(t string) seriesOption {
	return func(s *Series) { s.LineStyle = &LineStyle{Type: t, Width: 2} }
}

var (
	solid  = lineType("solid")
	dashed = lineType("dashed")
	dotted = lineType("dotted")
)

// colored sets a series' line and symbol color, keeping its line type. Give
// it after the line type.
func colored(color string) seriesOption {
	return func(s *Series) {
		ls := LineStyle{Width: 2}
		if s.LineStyle != nil {
			ls = *s.LineStyle
		}
		ls.Color = color
		s.LineStyle = &ls
		s.ItemStyle = &ItemStyle{Color: color}
	}
}

// styled is a line type in a color, after the point marks.
func styled(color string, lineType seriesOption, marks ...seriesOption) []seriesOption {
	return append(marks, lineType, colored(color))
}

// Point marks: dots marks every point, plain none, steps none with the line
// drawn as steps.
func dots(s *Series) {
	s.ShowSymbol, s.Symbol, s.SymbolSize = boolPtr(true), "circle", 6
}

func plain(s *Series) { s.ShowSymbol = boolPtr(false) }

func steps(s *Series) { s.ShowSymbol, s.Step = boolPtr(false), "start" }

// marked sizes a sweep line's marks and width by its rank: earlier
// limiters draw wider and larger, so where two limiters measure the same
// the earlier one still shows around the later one.
func marked(rank int) seriesOption {
	size := max(4, 10-3*rank)
	width := float32(max(1.5, 4-1.5*float64(rank)))
	return func(s *Series) {
		s.Symbol, s.SymbolSize = "circle", size
		if s.LineStyle != nil {
			ls := *s.LineStyle
			ls.Width = width
			s.LineStyle = &ls
		}
	}
}

// asBar draws a series as bars.
func asBar(s *Series) { s.Type = "bar" }

// Legend layout: a chart is at least 520 px wide (static/style.css:
// minmax(520px, 1fr)), about 650 px on a 1440 px screen; the grid's bottom
// margin holds two legend rows.
const (
	legendWidth   = 560
	legendRowPx   = 22
	legendMaxRows = 4
)

// legendRows estimates how many rows echarts needs for a plain legend of
// these names (a 30 px icon, 5 px padding and 10 px gap per item, about
// 6 px per character of 12 px text).
func legendRows(names []string) int {
	rows, x := 1, 0
	for _, n := range names {
		w := 45 + 6*len([]rune(n)) // a 30 px icon
		if x > 0 && x+w > legendWidth {
			rows, x = rows+1, 0
		}
		x += w
	}
	return rows
}

// chartHeightPx is a chart's height (static/style.css div.chart).
const chartHeightPx = 380

// fitLegend keeps a long legend off the x axis name and never pages it
// (a scrolling legend hides series behind "1/8"): every row past two
// raises the grid's bottom by a row, and the chart grows by as much so
// the plot keeps its size; it returns the px the chart grows. A time
// series' legend sits above its zoom slider.
func fitLegend(o *Option) int {
	l := o.Legend
	if l == nil || l.Show != nil && !*l.Show || len(o.Grid) == 0 {
		return 0
	}
	l.Type = "plain"
	names := l.Data
	if names == nil {
		for _, s := range o.Series {
			if !slices.Contains(names, s.Name) && !strings.HasSuffix(s.Name, " 95% CI") {
				names = append(names, s.Name)
			}
		}
	}
	rows, room := legendRows(names), 2
	if len(o.DataZoom) > 0 {
		room = 1 // the slider sits above the legend's first row
	}
	if rows <= room {
		return 0
	}
	extra := legendRowPx * (rows - room)
	if b, err := strconv.Atoi(o.Grid[0].Bottom); err == nil {
		o.Grid[0].Bottom = strconv.Itoa(b + extra)
	}
	for i := range o.DataZoom {
		if b, err := strconv.Atoi(o.DataZoom[i].Bottom); err == nil && o.DataZoom[i].Type == "slider" {
			o.DataZoom[i].Bottom = strconv.Itoa(b + extra)
		}
	}
	return extra
}

// lineIcons shows each line's type in the legend of a chart of lines only.
// echarts draws a line series' legend icon as a short line in the
// series' own line style (solid, dashed, dotted) with the series' symbol
// in its middle, 0.8 × the item height: at the default 25 × 14 px the
// symbol hides most of the line, so the legend showed the colour and not
// the dashes. Items of 30 × 4 px leave the line visible and the symbol a
// dot. A chart with bars, scatters or heatmaps keeps echarts' sizes.
func lineIcons(o *Option) {
	if o.Legend == nil || len(o.Series) == 0 {
		return
	}
	for _, s := range o.Series {
		if s.Type != "line" {
			return
		}
	}
	o.Legend.ItemWidth, o.Legend.ItemHeight = legendLineWidth, legendLineHeight
}

// The legend item of a chart of lines, in px.
const (
	legendLineWidth  = 30
	legendLineHeight = 4
)

// itemY is an item's y: a bar's value or a point's second coordinate.
func itemY(it Item) (float64, bool) {
	switch v := it.Value.(type) {
	case float64:
		return v, true
	case []float64:
		if len(v) == 2 {
			return v[1], true
		}
	}
	return 0, false
}

// fitY fits a chart's value axis to its data when they sit in a band
// narrow beside their distance from 0 (Jain's index from 0.9845 to 0.9955
// on a 0-1 axis shows no difference): the axis runs from a round value
// below the lowest to one above the highest, at most top, and the
// subtitle states where it starts. Data reaching 0 keep the axis at 0.
func fitY(o *Option, top float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range o.Series {
		if s.Type != "line" && s.Type != "bar" {
			continue
		}
		for _, it := range s.Data {
			if y, ok := itemY(it); ok && !math.IsNaN(y) {
				lo, hi = math.Min(lo, y), math.Max(hi, y)
			}
		}
	}
	if !(lo > 0) || math.IsInf(hi, 0) || hi-lo >= lo/2 {
		return
	}
	pad := math.Max((hi-lo)*0.15, hi*1e-4)
	places := -int(math.Floor(math.Log10(pad)))
	step := math.Pow(10, -float64(places))
	minY := format.RoundTo(math.Floor((lo-pad)/step)*step, max(places, 0))
	maxY := math.Min(top, format.RoundTo(math.Ceil((hi+pad)/step)*step, max(places, 0)))
	o.YAxis[0].Min, o.YAxis[0].Max = &minY, &maxY
	note := "y axis from " + format.Num(minY) + ", not 0"
	if o.Title.Subtext == "" {
		o.Title.Subtext = note
	} else {
		o.Title.Subtext += "; " + note
	}
}

// maxCategoryLabels is the most category labels a chart prints side by
// side; past it echarts thins them (the tooltip still names every bar).
const maxCategoryLabels = 12

// thinned labels a category axis of n categories: every one, turned 20°,
// up to maxCategoryLabels; else echarts' own interval, which leaves out
// labels that would overprint.
func thinned(n int) *AxisLabel {
	if n <= maxCategoryLabels {
		return &AxisLabel{Rotate: 20, Interval: "0"}
	}
	return &AxisLabel{Rotate: 30, Interval: "auto"}
}

// titleLines sets the title's and subtitle's line heights: without them
// echarts 5.4 lays a subtitle of several lines ("\n") over its title
// (the Pareto chart's two-line subtitle hid the title's foot).
func titleLines(o *Option) {
	if o.Title.TextStyle == nil {
		o.Title.TextStyle = &TextStyle{}
	}
	if o.Title.TextStyle.LineHeight == 0 {
		o.Title.TextStyle.LineHeight = titleLinePx
	}
	if o.Title.Subtext != "" && o.Title.SubtextStyle == nil {
		o.Title.SubtextStyle = &TextStyle{LineHeight: subLinePx}
	}
	for i := range o.panels {
		if t := o.panels[i].TextStyle; t != nil && t.LineHeight == 0 {
			t.LineHeight = subLinePx
		}
	}
}

// titleLinePx is a title's line height (echarts' 18 px bold title).
const titleLinePx = 24
