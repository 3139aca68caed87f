package charts

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/web/format"
)

// heatMeasure is a measure a heatmap shows: its results column and label.
type heatMeasure struct {
	key, column, label string
	// higher: a higher value is better (goodput), for the scale without
	// an objective.
	higher bool
}

var heatMeasures = []heatMeasure{
	{"goodput", "goodput_rps", "goodput (req/s)", true},
	{"sojourn", "sojourn_p99_ms", "p99 time in system (ms)", false},
}

// Heatmap colours are blue and orange, told apart by readers of every
// kind of colour vision: blue meets, orange misses.
var (
	// heatScale colours a measure without an objective from its worst value
	// (orange) to its best (blue) through a pale middle.
	heatScale = []string{"#e66101", "#fdb863", "#f7f7f7", "#92c5de", "#2166ac"}
	// heatPieces colour a measure with an objective by pass or fail and the
	// relative distance to the target (decide's slack), as a cell's fourth
	// value.
	heatPieces = []Piece{
		{Value: floatPtr(3), Label: "meets, ≥ 50% spare", Color: "#2166ac"},
		{Value: floatPtr(2), Label: "meets, 20–50%", Color: "#67a9cf"},
		{Value: floatPtr(1), Label: "meets, < 20%", Color: "#d1e5f0"},
		{Value: floatPtr(-1), Label: "misses, < 20%", Color: "#fee0b6"},
		{Value: floatPtr(-2), Label: "misses, 20–50%", Color: "#fdb863"},
		{Value: floatPtr(-3), Label: "misses, ≥ 50%", Color: "#e66101"},
		{Value: floatPtr(-4), Label: "no value", Color: "#d1d5db"},
	}
)

// heatClass is a cell's class under an objective: 1 to 3 meeting it
// (more to spare), -1 to -3 missing it (further off), -4 without a value
// (last in the legend, which lists the classes from the highest).
func heatClass(c decide.Check) float64 {
	if !c.HasValue {
		return -4
	}
	d := math.Abs(c.Slack)
	k := 1.0
	switch {
	case d >= 0.5:
		k = 3
	case d >= 0.2:
		k = 2
	}
	if !c.Pass {
		k = -k
	}
	return k
}

// Heatmap label layout: a chart is at least about 520 px wide on a wide
// screen (static/style.css), its grid 410 px wide and 210 px high; a label
// takes about 7 px a character and 14 px of height.
const (
	heatGridWidthPx  = 410
	heatGridHeightPx = 210
	heatCharPx       = 7
	heatLabelPadPx   = 6
	heatLabelHighPx  = 14
	heatLegendPx     = 110
)

// labelStride is how many cells apart labels go so that none overlaps: 1
// when every cell has room for its label.
func labelStride(cells int, gridPx, labelPx int) int {
	if cells <= 0 {
		return 1
	}
	return max(1, (labelPx*cells+gridPx-1)/gridPx)
}

// heatmapGroup draws each limiter that sweeps two parameters as heatmaps
// of goodput and p99 sojourn, the swept parameter across and the outer one
// up, the cells whose end-to-end bound meets the deadline outlined; nil
// when no limiter sweeps two.
func heatmapGroup(v *View) *Group {
	res := v.Res
	deadline := res.Config.Server.DeadlineMS
	g := &Group{ID: "heatmaps", Title: "Two-parameter sweeps",
		Intro: fmt.Sprintf("Outlined: the cells whose network-calculus end-to-end bound meets the deadline (%s ms) — settings that are safe for any traffic, not only this workload. "+
			"A measure with an objective is coloured by it: blue meets it, orange misses it, paler nearer the target; one without, from its worst value (orange) to its best (blue). "+
			"Labels print each value at its results.csv precision, on every k-th column or row when the cells are small (hover for each).", format.Num(deadline))}
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
			g.Charts = append(g.Charts, chart(id, title, heatmap(title, pts, xp, yp, m, deadline, res.Config)))
		}
	}
	if len(g.Charts) == 0 {
		return nil
	}
	return g
}

// heatmap is one measure of pts on a grid of parameters xp and yp. A
// measure with an objective is coloured by pass or fail and distance to
// the target (heatPieces); one without, from its worst value to its best
// (heatScale). Labels print the measure at its results.csv precision, on
// every cell when they fit, else on every k-th column and row so that
// none overlaps (echarts hides any that still would).
func heatmap(title string, pts []*experiments.Point, xp, yp string, m heatMeasure, deadlineMS float64, cfg *experiments.Config) *Option {
	objs := cfg.Objectives
	xs, ys := distinctValues(pts, xp), distinctValues(pts, yp)
	col := experiments.ColumnByKey(m.column)
	var obj *experiments.Objective
	for i := range objs {
		if objs[i].Metric == m.column {
			obj = &objs[i]
		}
	}
	texts := make([]string, len(pts))
	widest := 1
	for i, p := range pts {
		if val, ok := col.Value(p); ok {
			texts[i] = metricText(m.column, val)
			widest = max(widest, len(texts[i]))
		}
	}
	gridW := heatGridWidthPx
	if obj != nil {
		gridW -= heatLegendPx // the piecewise legend's column
	}
	kx := labelStride(len(xs), gridW, widest*heatCharPx+heatLabelPadPx)
	// Small cells get a thin, paler outline: thick black ones turned a
	// 100-column heatmap into a smear.
	outline := &ItemStyle{BorderColor: "#111827", BorderWidth: 3}
	if gridW/max(len(xs), 1) < 16 || heatGridHeightPx/max(len(ys), 1) < 16 {
		outline = &ItemStyle{BorderColor: "rgba(17, 24, 39, 0.6)", BorderWidth: 1}
	}
	ky := labelStride(len(ys), heatGridHeightPx, heatLabelHighPx)
	data := make([]Item, 0, len(pts))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, p := range pts {
		xi, yi := slices.Index(xs, p.Params.Get(xp)), slices.Index(ys, p.Params.Get(yp))
		var val any = "-"
		if texts[i] != "" {
			x, _ := strconv.ParseFloat(texts[i], 64) // printed by AppendValue: a number
			val = x
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		value := []any{xi, yi, val}
		if obj != nil {
			value = append(value, heatClass(decide.EvaluateIn(cfg, []experiments.Objective{*obj}, p).Checks[0]))
		}
		// The tooltip names the cell by both parameters (echarts' default
		// is the x category alone).
		cell := Item{Name: xp + " " + format.Num(xs[xi]) + ", " + yp + " " + format.Num(ys[yi]), Value: value}
		if b := p.Bounds; b != nil && b.Bounded && b.EndToEndBoundMS <= deadlineMS {
			cell.ItemStyle = outline
		}
		if (xi-kx/2)%kx != 0 || (yi-ky/2)%ky != 0 { // labels off the grid's edges
			cell.Label = &Label{Show: false}
		}
		data = append(data, cell)
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if hi <= lo {
		hi = lo + 1
	}
	var sub string
	var vm *VisualMap
	grid := Grid{Left: "80", Top: "70", Right: "30", Bottom: "100"}
	if obj != nil {
		sub = "colour: " + obj.String() + ", blue meets, orange misses"
		vm = &VisualMap{Type: "piecewise", Dimension: 3, Pieces: heatPieces, Orient: "vertical", Align: "left", Right: "0", Top: "middle", ItemWidth: 12, ItemGap: 4}
		grid.Right, grid.Bottom = "140", "60"
	} else {
		colors := slices.Clone(heatScale)
		if !m.higher {
			slices.Reverse(colors) // low values are the good end
		}
		sub = "colour: worst (orange) to best (blue); no objective on it"
		vm = &VisualMap{Min: floatPtr(lo), Max: floatPtr(hi), Calculable: true, Dimension: 2, Orient: "horizontal", Left: "center", Bottom: "0", InRange: &InRange{Color: colors}}
	}
	if kx > 1 || ky > 1 {
		sub += "; labels: every " + strideText(kx, ky)
	}
	o := &Option{
		Grid:      []Grid{grid},
		Title:     Title{Text: title, Subtext: sub, Left: "center"},
		Tooltip:   Tooltip{Position: "top"},
		VisualMap: vm,
		XAxis: []XAxis{{Type: "category", Data: labels(xs), Name: xp + " (" + ParamUnit(xp) + ")", NameLocation: "middle", NameGap: 28,
			SplitArea: &SplitArea{Show: true}}},
		YAxis: []YAxis{{Type: "category", Data: labels(ys), Name: yp + " (" + ParamUnit(yp) + ")", NameLocation: "middle", NameGap: 60,
			SplitArea: &SplitArea{Show: true}}},
	}
	o.add(m.label, "heatmap", data, func(s *Series) {
		s.Label = &Label{Show: true, Formatter: "{@[2]}", FontSize: 11}
		s.LabelLayout = &LabelLayout{HideOverlap: true}
		// The tooltip prints the measure, not the objective's class (the
		// visual map's dimension 3).
		s.Encode = &Encode{X: 0, Y: 1, Value: 2, Tooltip: []int{2}}
	})
	return o
}

// strideText names a label stride: "2nd column", "3rd column and 2nd row".
func strideText(kx, ky int) string {
	var parts []string
	if kx > 1 {
		parts = append(parts, ordinal(kx)+" column")
	}
	if ky > 1 {
		parts = append(parts, ordinal(ky)+" row")
	}
	return strings.Join(parts, " and ")
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
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
