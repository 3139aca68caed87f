package charts

import (
	"encoding/json"
	"fmt"
)

// Option is an echarts option: what static/app.js hands to
// echarts.setOption. Field names and JSON keys are echarts' own; an empty
// field is left out, so echarts applies its default.
type Option struct {
	Animation bool `json:"animation"`
	// Color is the palette for series without a color of their own.
	Color     []string   `json:"color,omitempty"`
	Grid      []Grid     `json:"grid,omitempty"`
	Legend    *Legend    `json:"legend,omitempty"`
	Series    []Series   `json:"series"`
	Title     Title      `json:"title"`
	Toolbox   *Toolbox   `json:"toolbox,omitempty"`
	Tooltip   Tooltip    `json:"tooltip"`
	VisualMap *VisualMap `json:"visualMap,omitempty"`
	XAxis     []XAxis    `json:"xAxis"`
	YAxis     []YAxis    `json:"yAxis"`
}

// Title is a chart's title and subtitle.
type Title struct {
	Text    string `json:"text,omitempty"`
	Subtext string `json:"subtext,omitempty"`
	Left    string `json:"left,omitempty"`
}

// Legend lists the series; Type "plain" wraps onto more rows, "scroll"
// keeps one row with arrows.
type Legend struct {
	Type   string `json:"type,omitempty"`
	Show   *bool  `json:"show,omitempty"`
	Bottom string `json:"bottom,omitempty"`
}

// Toolbox is echarts' toolbox; the lab's is empty (no buttons).
type Toolbox struct{}

// Tooltip is shown on hover: Trigger "axis" lists every series at an x,
// Position places an item's tooltip.
type Tooltip struct {
	Show     *bool  `json:"show,omitempty"`
	Trigger  string `json:"trigger,omitempty"`
	Position string `json:"position,omitempty"`
}

// Grid is the plot area's margins in pixels (numbers as strings).
type Grid struct {
	Left   string `json:"left,omitempty"`
	Top    string `json:"top,omitempty"`
	Right  string `json:"right,omitempty"`
	Bottom string `json:"bottom,omitempty"`
}

// XAxis is the horizontal axis: Type "value", "log" or "category" (Data
// names the categories). Scale lets a value axis start away from 0.
type XAxis struct {
	Type         string     `json:"type,omitempty"`
	Name         string     `json:"name,omitempty"`
	NameLocation string     `json:"nameLocation,omitempty"`
	NameGap      int        `json:"nameGap,omitempty"`
	Scale        bool       `json:"scale,omitempty"`
	Min          *float64   `json:"min,omitempty"`
	Max          *float64   `json:"max,omitempty"`
	Data         []string   `json:"data,omitempty"`
	AxisLabel    *AxisLabel `json:"axisLabel,omitempty"`
	SplitArea    *SplitArea `json:"splitArea,omitempty"`
}

// YAxis is the vertical axis, as XAxis.
type YAxis struct {
	Name         string     `json:"name,omitempty"`
	NameLocation string     `json:"nameLocation,omitempty"`
	NameGap      int        `json:"nameGap,omitempty"`
	Type         string     `json:"type,omitempty"`
	Max          *float64   `json:"max,omitempty"`
	Data         []string   `json:"data,omitempty"`
	SplitArea    *SplitArea `json:"splitArea,omitempty"`
}

// AxisLabel places an axis' labels: Interval "0" labels every category,
// Rotate turns them (degrees). The first and last labels follow echarts'
// default (null).
type AxisLabel struct {
	Interval     string  `json:"interval,omitempty"`
	Rotate       float64 `json:"rotate,omitempty"`
	ShowMinLabel *bool   `json:"showMinLabel"`
	ShowMaxLabel *bool   `json:"showMaxLabel"`
}

// SplitArea shades the bands between an axis' ticks.
type SplitArea struct {
	Show bool `json:"show"`
}

// VisualMap maps a heatmap cell's value from Min to Max onto the InRange
// colors, low to high.
type VisualMap struct {
	Min        float64 `json:"min"`
	Max        float64 `json:"max"`
	Calculable bool    `json:"calculable"`
	Orient     string  `json:"orient,omitempty"`
	Left       string  `json:"left,omitempty"`
	Bottom     string  `json:"bottom,omitempty"`
	InRange    InRange `json:"inRange"`
}

// InRange is a visual map's color scale.
type InRange struct {
	Color []string `json:"color"`
}

// Series is one line, bar series or heatmap: Type "line", "bar" or
// "heatmap". Step "start" draws a line as steps; ShowSymbol marks its
// points with Symbol of SymbolSize pixels.
type Series struct {
	Name       string     `json:"name,omitempty"`
	Type       string     `json:"type,omitempty"`
	Step       string     `json:"step,omitempty"`
	ShowSymbol *bool      `json:"showSymbol,omitempty"`
	Symbol     string     `json:"symbol,omitempty"`
	SymbolSize int        `json:"symbolSize,omitempty"`
	Data       []Item     `json:"data"`
	Animation  *bool      `json:"animation,omitempty"`
	ItemStyle  *ItemStyle `json:"itemStyle,omitempty"`
	LineStyle  *LineStyle `json:"lineStyle,omitempty"`
	AreaStyle  *AreaStyle `json:"areaStyle,omitempty"`
	Label      *Label     `json:"label,omitempty"`
}

// Item is one value of a series: a number (a bar), an [x, y] pair (a
// line), [x, y, value] (a heatmap cell), "-" for no value, or nil for an
// empty bar; ItemStyle styles this item alone.
type Item struct {
	Value     any        `json:"value,omitempty"`
	ItemStyle *ItemStyle `json:"itemStyle,omitempty"`
}

// ItemStyle colors a series' symbols and bars, or outlines an item.
type ItemStyle struct {
	Color       string `json:"color,omitempty"`
	BorderColor string `json:"borderColor,omitempty"`
	BorderWidth int    `json:"borderWidth,omitempty"`
}

// LineStyle is a line's color, width in pixels and type ("solid",
// "dashed" or "dotted").
type LineStyle struct {
	Color string  `json:"color,omitempty"`
	Width float32 `json:"width,omitempty"`
	Type  string  `json:"type,omitempty"`
}

// AreaStyle fills the area under a line.
type AreaStyle struct {
	Opacity float64 `json:"opacity,omitempty"`
}

// Label prints each item's value on it.
type Label struct {
	Show bool `json:"show"`
}

// JSON is the option as JSON, with <, > and & escaped.
func (o *Option) JSON() string {
	b, err := json.Marshal(o)
	if err != nil {
		// The option holds only numbers and strings: this cannot fail.
		panic(fmt.Sprintf("chart option: %v", err))
	}
	return string(b)
}

func boolPtr(b bool) *bool { return &b }

func floatPtr(v float64) *float64 { return &v }
