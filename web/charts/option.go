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
	DataZoom  []DataZoom `json:"dataZoom,omitempty"`
	Grid      []Grid     `json:"grid,omitempty"`
	Legend    *Legend    `json:"legend,omitempty"`
	Series    []Series   `json:"series"`
	Title     Title      `json:"title"`
	Toolbox   *Toolbox   `json:"toolbox,omitempty"`
	Tooltip   Tooltip    `json:"tooltip"`
	VisualMap *VisualMap `json:"visualMap,omitempty"`
	XAxis     []XAxis    `json:"xAxis,omitempty"`
	YAxis     []YAxis    `json:"yAxis,omitempty"`
	// ParallelAxis and Parallel are a parallel-coordinates chart's axes
	// (one per dimension of its "parallel" series' items) and its grid.
	ParallelAxis []ParallelAxis `json:"parallelAxis,omitempty"`
	Parallel     *Parallel      `json:"parallel,omitempty"`
	// round says how the series' values round when the chart is built
	// (round.go); nil: defaultRounding.
	round *rounding
	// panels are the titles of a grid of small charts (many.go), written
	// after Title in echarts' title list; heightPx is such a chart's
	// height (0: chartHeightPx and its legend's rows).
	panels   []Title
	heightPx int
	// keys are a colour key's rows (many.go), written as echarts'
	// visualMap list in place of VisualMap.
	keys []VisualMap
}

// Title is a chart's title and subtitle.
type Title struct {
	Text    string `json:"text,omitempty"`
	Subtext string `json:"subtext,omitempty"`
	Left    string `json:"left,omitempty"`
	// Top, TextAlign and TextStyle place and size a small chart's title
	// (many.go).
	Top          string     `json:"top,omitempty"`
	TextAlign    string     `json:"textAlign,omitempty"`
	TextStyle    *TextStyle `json:"textStyle,omitempty"`
	SubtextStyle *TextStyle `json:"subtextStyle,omitempty"`
	// ItemGap is the px between the title and the subtitle (0: echarts'
	// 10).
	ItemGap int `json:"itemGap,omitempty"`
}

// TextStyle sizes a title's text.
type TextStyle struct {
	FontSize   int    `json:"fontSize,omitempty"`
	FontWeight string `json:"fontWeight,omitempty"`
	LineHeight int    `json:"lineHeight,omitempty"`
}

// Legend lists the series; Type "plain" wraps onto more rows, "scroll"
// keeps one row with arrows.
type Legend struct {
	Type   string `json:"type,omitempty"`
	Show   *bool  `json:"show,omitempty"`
	Bottom string `json:"bottom,omitempty"`
	// ItemWidth and ItemHeight size each item's icon in pixels (0: echarts'
	// 25 × 14).
	ItemWidth  int `json:"itemWidth,omitempty"`
	ItemHeight int `json:"itemHeight,omitempty"`
	// Data lists the series the legend names (nil: every series); a key
	// of dash patterns (many.go) names its own key series only.
	Data []string `json:"data,omitempty"`
	// SelectedMode false makes a legend a key: a click hides nothing.
	SelectedMode *bool `json:"selectedMode,omitempty"`
}

// Toolbox is echarts' toolbox: empty (no buttons) but on the time
// series, which save as an image.
type Toolbox struct {
	Right   string          `json:"right,omitempty"`
	Feature *ToolboxFeature `json:"feature,omitempty"`
}

// ToolboxFeature are the toolbox's buttons.
type ToolboxFeature struct {
	SaveAsImage *SaveAsImage `json:"saveAsImage,omitempty"`
}

// SaveAsImage saves the chart as a PNG named Name.
type SaveAsImage struct {
	Name  string `json:"name,omitempty"`
	Title string `json:"title,omitempty"`
}

// DataZoom zooms an axis: Type "inside" (wheel and drag on the plot) or
// "slider" (a bar under the plot, Bottom px from the chart's foot).
type DataZoom struct {
	Type       string `json:"type"`
	XAxisIndex int    `json:"xAxisIndex"`
	FilterMode string `json:"filterMode,omitempty"`
	Bottom     string `json:"bottom,omitempty"`
	Height     int    `json:"height,omitempty"`
}

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
	// Height is a small chart's plot height (many.go).
	Height string `json:"height,omitempty"`
}

// XAxis is the horizontal axis: Type "value", "log" or "category" (Data
// names the categories). Scale lets a value axis start away from 0.
type XAxis struct {
	// GridIndex is the small chart (grid) the axis belongs to.
	GridIndex    int      `json:"gridIndex,omitempty"`
	Type         string   `json:"type,omitempty"`
	Name         string   `json:"name,omitempty"`
	NameLocation string   `json:"nameLocation,omitempty"`
	NameGap      int      `json:"nameGap,omitempty"`
	Scale        bool     `json:"scale,omitempty"`
	Min          *float64 `json:"min,omitempty"`
	Max          *float64 `json:"max,omitempty"`
	Data         []string `json:"data,omitempty"`
	// SplitNumber is about how many intervals the axis has (0: echarts'
	// 5; a small chart's fewer, so its labels don't overprint).
	SplitNumber int        `json:"splitNumber,omitempty"`
	AxisLabel   *AxisLabel `json:"axisLabel,omitempty"`
	SplitArea   *SplitArea `json:"splitArea,omitempty"`
}

// YAxis is the vertical axis, as XAxis.
type YAxis struct {
	GridIndex    int        `json:"gridIndex,omitempty"`
	SplitNumber  int        `json:"splitNumber,omitempty"`
	Name         string     `json:"name,omitempty"`
	NameLocation string     `json:"nameLocation,omitempty"`
	NameGap      int        `json:"nameGap,omitempty"`
	Type         string     `json:"type,omitempty"`
	Min          *float64   `json:"min,omitempty"`
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

// ParallelAxis is one axis of a parallel-coordinates chart: Dim is the
// item value's index it plots; Inverse draws lower values higher; Min
// and Max its extent (echarts sizes a parallel axis by its first series
// alone).
type ParallelAxis struct {
	Dim     int    `json:"dim"`
	Name    string `json:"name"`
	Type    string `json:"type,omitempty"`
	Inverse bool   `json:"inverse,omitempty"`
	Scale   bool   `json:"scale,omitempty"`
	// NameLocation overrides Parallel's axisDefault: "start" on an
	// inverse axis keeps its name at the top with the others.
	NameLocation string   `json:"nameLocation,omitempty"`
	Min          *float64 `json:"min,omitempty"`
	Max          *float64 `json:"max,omitempty"`
}

// Parallel is a parallel-coordinates chart's grid (margins in px, as
// strings) and what every axis shares.
type Parallel struct {
	Left   string `json:"left,omitempty"`
	Right  string `json:"right,omitempty"`
	Top    string `json:"top,omitempty"`
	Bottom string `json:"bottom,omitempty"`
	// AxisDefault styles every parallel axis (echarts' parallelAxisDefault).
	AxisDefault *ParallelAxisDefault `json:"parallelAxisDefault,omitempty"`
}

// ParallelAxisDefault places the parallel axes' names.
type ParallelAxisDefault struct {
	NameLocation string `json:"nameLocation,omitempty"`
	NameGap      int    `json:"nameGap,omitempty"`
}

// SplitArea shades the bands between an axis' ticks.
type SplitArea struct {
	Show bool `json:"show"`
}

// VisualMap colours heatmap cells by their Dimension-th value: Type
// "continuous" (the default) from Min to Max onto the InRange colours, low
// to high; "piecewise" by Pieces.
type VisualMap struct {
	Type       string   `json:"type,omitempty"`
	Min        *float64 `json:"min,omitempty"`
	Max        *float64 `json:"max,omitempty"`
	Calculable bool     `json:"calculable,omitempty"`
	Dimension  int      `json:"dimension,omitempty"`
	Pieces     []Piece  `json:"pieces,omitempty"`
	Orient     string   `json:"orient,omitempty"`
	// Text names a colour key's ends ([high, low]); ShowLabel keeps each
	// piece's label beside it.
	Text      []string `json:"text,omitempty"`
	ShowLabel *bool    `json:"showLabel,omitempty"`
	// keyOnly makes the map a colour key alone: it colours no series
	// (echarts' seriesIndex: []), the lines keep their own colours.
	keyOnly      bool
	SelectedMode *bool    `json:"selectedMode,omitempty"`
	ItemHeight   int      `json:"itemHeight,omitempty"`
	Align        string   `json:"align,omitempty"`
	Left         string   `json:"left,omitempty"`
	Right        string   `json:"right,omitempty"`
	Top          string   `json:"top,omitempty"`
	Bottom       string   `json:"bottom,omitempty"`
	ItemWidth    int      `json:"itemWidth,omitempty"`
	ItemGap      int      `json:"itemGap,omitempty"`
	InRange      *InRange `json:"inRange,omitempty"`
}

// Piece is one class of a piecewise visual map: the cells whose value is
// Value, named Label, coloured Color.
type Piece struct {
	Value *float64 `json:"value,omitempty"`
	Label string   `json:"label,omitempty"`
	Color string   `json:"color,omitempty"`
}

// InRange is a visual map's color scale.
type InRange struct {
	Color []string `json:"color"`
}

// Series is one line, bar series or heatmap: Type "line", "bar" or
// "heatmap". Step "start" draws a line as steps; ShowSymbol marks its
// points with Symbol of SymbolSize pixels.
type Series struct {
	Name       string `json:"name,omitempty"`
	Type       string `json:"type,omitempty"`
	Step       string `json:"step,omitempty"`
	ShowSymbol *bool  `json:"showSymbol,omitempty"`
	Symbol     string `json:"symbol,omitempty"`
	SymbolSize int    `json:"symbolSize,omitempty"`
	// SymbolOffset moves the symbol off its point ([0, "-50%"]: a pin's
	// tip on the point).
	SymbolOffset []any      `json:"symbolOffset,omitempty"`
	Data         []Item     `json:"data"`
	Animation    *bool      `json:"animation,omitempty"`
	ItemStyle    *ItemStyle `json:"itemStyle,omitempty"`
	LineStyle    *LineStyle `json:"lineStyle,omitempty"`
	AreaStyle    *AreaStyle `json:"areaStyle,omitempty"`
	// Stack stacks series of one name on each other (an interval band).
	Stack   string         `json:"stack,omitempty"`
	Tooltip *SeriesTooltip `json:"tooltip,omitempty"`
	Label   *Label         `json:"label,omitempty"`
	// LabelLayout hides labels that would overlap.
	LabelLayout *LabelLayout `json:"labelLayout,omitempty"`
	// Encode names the dimensions of a heatmap's [x, y, value, ...] items.
	Encode *Encode `json:"encode,omitempty"`
	// MarkArea shades a region of the chart (the values meeting an
	// objective).
	MarkArea *MarkArea `json:"markArea,omitempty"`
	// XAxisIndex and YAxisIndex put the series in a small chart (many.go).
	XAxisIndex int `json:"xAxisIndex,omitempty"`
	YAxisIndex int `json:"yAxisIndex,omitempty"`
	// Emphasis highlights the series under the pointer (Focus "series"
	// fades the others); TriggerLineEvent lets its line, not only its
	// marks, take the pointer.
	Emphasis         *Emphasis `json:"emphasis,omitempty"`
	TriggerLineEvent bool      `json:"triggerLineEvent,omitempty"`
	// line is the sweep line the series draws, plus one (0: none: a
	// reference line or another chart's series); measure what of the
	// line it draws ("rejected", "late"; "" the chart's one measure).
	line    int
	measure string
	// exact keeps the series' values as given (a config's value: an
	// objective's target, the deadline), unrounded.
	exact bool
}

// Emphasis is how a series shows under the pointer.
type Emphasis struct {
	Focus string `json:"focus,omitempty"`
}

// LabelLayout is echarts' label layout.
type LabelLayout struct {
	HideOverlap bool `json:"hideOverlap"`
}

// Encode maps item dimensions to a series' x, y and value; Tooltip lists
// the dimensions an item's tooltip prints (empty: echarts' choice).
type Encode struct {
	X       int   `json:"x"`
	Y       int   `json:"y"`
	Value   int   `json:"value"`
	Tooltip []int `json:"tooltip,omitempty"`
}

// MarkArea is a series' shaded regions: each a pair of corners.
type MarkArea struct {
	Silent    bool         `json:"silent"`
	ItemStyle *ItemStyle   `json:"itemStyle,omitempty"`
	Label     *Label       `json:"label,omitempty"`
	Data      [][2]AreaEnd `json:"data"`
}

// AreaEnd is one corner of a shaded region: a y value (and, optionally,
// an x value); "Infinity" reaches the grid's edge.
type AreaEnd struct {
	Name  string `json:"name,omitempty"`
	XAxis any    `json:"xAxis,omitempty"`
	YAxis any    `json:"yAxis,omitempty"`
}

// Item is one value of a series: a number (a bar), an [x, y] pair (a
// line), [x, y, value] (a heatmap cell), "-" for no value, or nil for an
// empty bar; ItemStyle styles this item alone.
type Item struct {
	// Name is the item's name in its tooltip (empty: echarts' default).
	Name      string     `json:"name,omitempty"`
	Value     any        `json:"value,omitempty"`
	ItemStyle *ItemStyle `json:"itemStyle,omitempty"`
	Label     *Label     `json:"label,omitempty"`
	// Point is the sweep point the item is (echarts ignores it): a click
	// on it selects the point (static/app.js: ?point=N); nil for none.
	Point *int `json:"point,omitempty"`
	// Tip are the item's tooltip lines before its values (static/app.js
	// writes them as text, then each axis' name and value); nil: echarts'
	// default tooltip.
	Tip []string `json:"tip,omitempty"`
}

// ItemStyle colors a series' symbols and bars, or outlines an item.
type ItemStyle struct {
	Color       string  `json:"color,omitempty"`
	Opacity     float64 `json:"opacity,omitempty"`
	BorderColor string  `json:"borderColor,omitempty"`
	BorderWidth int     `json:"borderWidth,omitempty"`
	// BorderType is "dashed" or "dotted" ("": solid).
	BorderType string `json:"borderType,omitempty"`
}

// LineStyle is a line's color, width in pixels and type ("solid",
// "dashed" or "dotted"; Dash, when set, is the dash pattern instead: the
// lengths in px of dash, gap, dash, ..., echarts' `type` as a list).
type LineStyle struct {
	Color string  `json:"color,omitempty"`
	Width float32 `json:"width,omitempty"`
	Type  string  `json:"type,omitempty"`
	Dash  []int   `json:"-"`
	// Opacity hides a line at 0 (an interval band's edges).
	Opacity *float64 `json:"opacity,omitempty"`
}

// AreaStyle fills the area under a line.
type AreaStyle struct {
	Color   string  `json:"color,omitempty"`
	Opacity float64 `json:"opacity,omitempty"`
}

// SeriesTooltip turns a series' tooltip off (a band's stacked width is no
// value to read).
type SeriesTooltip struct {
	Show bool `json:"show"`
}

// Label prints each item's value on it: Formatter is echarts' template
// ("{@[2]}": the item's third value).
type Label struct {
	Show      bool    `json:"show"`
	Formatter string  `json:"formatter,omitempty"`
	FontSize  int     `json:"fontSize,omitempty"`
	Color     string  `json:"color,omitempty"`
	Position  string  `json:"position,omitempty"`
	Opacity   float64 `json:"opacity,omitempty"`
}

// MarshalJSON writes a dash pattern as echarts' `type` list.
func (l LineStyle) MarshalJSON() ([]byte, error) {
	type plain LineStyle
	if len(l.Dash) == 0 {
		return json.Marshal(plain(l))
	}
	return json.Marshal(struct {
		plain
		Type []int `json:"type"`
	}{plain(l), l.Dash})
}

// MarshalJSON writes a key-only colour map's empty series list.
func (m VisualMap) MarshalJSON() ([]byte, error) {
	type plain VisualMap
	if !m.keyOnly {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		plain
		SeriesIndex []int `json:"seriesIndex"`
	}{plain(m), []int{}})
}

// JSON is the option as JSON, with <, > and & escaped; a grid of small
// charts writes its panels' titles after the chart's, a colour key its
// rows as the visual map list.
func (o *Option) JSON() string {
	var v any = o
	if len(o.panels) > 0 || len(o.keys) > 0 {
		type plain Option
		var title any = o.Title
		if len(o.panels) > 0 {
			title = append([]Title{o.Title}, o.panels...)
		}
		var keys any = o.VisualMap
		if len(o.keys) > 0 {
			keys = o.keys
		}
		v = struct {
			*plain
			Title     any `json:"title"`
			VisualMap any `json:"visualMap,omitempty"`
		}{(*plain)(o), title, keys}
	}
	b, err := json.Marshal(v)
	if err != nil {
		// The option holds only numbers and strings: this cannot fail.
		panic(fmt.Sprintf("chart option: %v", err))
	}
	return string(b)
}

func boolPtr(b bool) *bool { return &b }

func floatPtr(v float64) *float64 { return &v }
