package charts

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// Charts of many series (issue 26). Up to maxKeyedLines lines a chart
// gives each its own colour and names it in its legend. Past that, one
// parameter colours the lines on a sequential palette, named with its
// values in a colour key (a piecewise visualMap that colours no series,
// keyOnly), and the other parameter is told by one of two means, chosen
// per chart type:
//
//   - the sweep charts (keyLines) draw a small chart per limiter, side
//     by side in one echarts instance: their dashes already tell the
//     measures apart (solid rejected, dashed late), so a limiter cannot
//     take a dash of its own;
//   - the client charts over time (keyPoints) draw one measure, so the
//     other parameter (the retry policy) takes the dash, named in a
//     small dash key.
//
// Every series of several highlights under the pointer and fades the
// others (emphasize).

// maxKeyedLines is the most lines a chart colours one by one.
const maxKeyedLines = 6

// viridis is the sequential palette's stops, dark to light; the last,
// yellow stop is left out (too light on white).
var viridis = []string{"#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30"}

// sequential is n colours evenly spaced along viridis, dark first.
func sequential(n int) []string {
	out := make([]string, n)
	for i := range n {
		f := 0.0
		if n > 1 {
			f = float64(i) / float64(n-1) * float64(len(viridis)-1)
		}
		k := min(int(f), len(viridis)-2)
		out[i] = mixColor(viridis[k], viridis[k+1], f-float64(k))
	}
	return out
}

// mixColor is the colour t of the way from a to b (#rrggbb).
func mixColor(a, b string, t float64) string {
	ch := func(s string, i int) float64 {
		v, _ := strconv.ParseUint(s[1+2*i:3+2*i], 16, 8)
		return float64(v)
	}
	out := "#"
	for i := range 3 {
		out += fmt.Sprintf("%02x", int(ch(a, i)+(ch(b, i)-ch(a, i))*t+0.5))
	}
	return out
}

// dashStyles are the line types a dash key hands out, in order.
var dashStyles = []LineStyle{{Type: "solid"}, {Type: "dashed"}, {Type: "dotted"}, {Dash: []int{12, 4, 2, 4}}}

// keyColor draws a dash key's lines.
const keyColor = "#374151"

// colourKey is a key of the colours of a parameter's values: piecewise
// visual maps colouring no series, the parameter's name before the
// first value, in rows of at most keyRowPx (a row of echarts' key never
// wraps, and a chart may be 340 px wide at 420).
func colourKey(param string, labels, colors []string) []VisualMap {
	var rows []VisualMap
	row, x := VisualMap{}, 10+6*len([]rune(param))
	flush := func() {
		rows = append(rows, row)
		row, x = VisualMap{}, 0
	}
	for i, l := range labels {
		w := 14 + 5 + 6*len([]rune(l)) + 8
		if x > 0 && x+w > keyRowPx && len(row.Pieces) > 0 {
			flush()
		}
		v := float64(i)
		row.Pieces = append(row.Pieces, Piece{Value: &v, Label: l, Color: colors[i]})
		x += w
	}
	flush()
	for r := range rows {
		k := &rows[r]
		k.Type, k.keyOnly, k.ShowLabel, k.SelectedMode = "piecewise", true, boolPtr(true), boolPtr(false)
		k.ItemWidth, k.ItemHeight, k.ItemGap = 14, 10, 8
		k.Orient, k.Left = "horizontal", "center"
		if r == 0 {
			k.Text = []string{"", param}
		}
	}
	return rows
}

// keyRowPx is the widest row of a colour key.
const keyRowPx = 300

// keyRowHeightPx is a colour key row's height.
const keyRowHeightPx = 20

// placeKeys puts colour key rows at the chart's foot, above its legend
// when it shows one; it returns the px they and the legend take.
func (o *Option) placeKeys(keys []VisualMap) int {
	base := 4
	if o.Legend != nil && (o.Legend.Show == nil || *o.Legend.Show) {
		base = 26
	}
	n := len(keys)
	for r := range keys {
		keys[r].Bottom = strconv.Itoa(base + (n-1-r)*keyRowHeightPx)
	}
	o.keys = keys
	return base + n*keyRowHeightPx
}

// footKeys places colour keys under a chart of one plot, lowering its
// plot's foot and growing the chart by as much as they need beyond the
// two legend rows a chart has room for.
func (o *Option) footKeys(keys []VisualMap) {
	used := o.placeKeys(keys)
	const roomPx = 45 // newLine's room under the x axis' labels and name
	if used <= roomPx {
		return
	}
	if b, err := strconv.Atoi(o.Grid[0].Bottom); err == nil {
		o.Grid[0].Bottom = strconv.Itoa(b + used - roomPx)
		o.heightPx = chartHeightPx + used - roomPx
	}
}

// dashKey names what each dash means: a series without data per dash (a
// legend names series only), in keyColor, listed alone in a legend that
// hides nothing when clicked, beside the reference lines (names in
// refs, which keep their own style).
func (o *Option) dashKey(names []string, styles []LineStyle, refs []string) {
	var data []string
	for i, n := range names {
		ls := styles[i]
		ls.Color, ls.Width = keyColor, 2
		o.Series = append(o.Series, Series{Name: n, Type: "line", Data: []Item{}, ShowSymbol: boolPtr(false), Symbol: "none",
			LineStyle: &ls, ItemStyle: &ItemStyle{Color: keyColor}})
		data = append(data, n)
	}
	for _, r := range refs {
		if !slices.Contains(data, r) {
			data = append(data, r)
		}
	}
	if len(data) == 0 {
		o.Legend = &Legend{Show: boolPtr(false)}
		return
	}
	o.Legend.Data, o.Legend.SelectedMode = data, boolPtr(false)
}

// subLine adds a line to the subtitle, and its height to the top margin
// of a chart of one grid.
func (o *Option) subLine(s string) {
	if o.Title.Subtext == "" {
		o.Title.Subtext = s
		return
	}
	o.Title.Subtext += "\n" + s
	if len(o.Grid) == 1 {
		if t, err := strconv.Atoi(o.Grid[0].Top); err == nil {
			o.Grid[0].Top = strconv.Itoa(t + subLinePx)
		}
	}
}

// subLinePx is a subtitle line's height.
const subLinePx = 16

// lineKeys are the sweep lines' colour values when the view has more than
// maxKeyedLines lines told apart by a parameter or scenario beside their
// limiter: each line's value (its parameters and scenario, "200" or
// "rate_rps=200, load bursty"), the values in order and the parameters'
// names; ok false when the lines are to be coloured one by one.
func (v *View) lineKeys() (keys, values []string, param string, ok bool) {
	if v.Categorical() || len(v.Lines) <= maxKeyedLines {
		return nil, nil, "", false
	}
	var names []string
	vals := make([][]string, len(v.Lines))
	for i, l := range v.Lines {
		for _, p := range l.params {
			n, val, _ := strings.Cut(p, "=")
			names, vals[i] = appendNew(names, n), append(vals[i], val)
		}
		for _, s := range l.scenario {
			n, val, _ := strings.Cut(s, " ")
			names, vals[i] = appendNew(names, n), append(vals[i], val)
		}
	}
	keys = make([]string, len(v.Lines))
	for i, l := range v.Lines {
		switch {
		case len(vals[i]) == 0:
			keys[i] = "one setting"
		case len(names) == 1:
			keys[i] = vals[i][0]
		default:
			keys[i] = strings.Join(append(slices.Clone(l.params), l.scenario...), ", ")
		}
		values = appendNew(values, keys[i])
	}
	sortValues(values)
	if len(values) < 2 {
		return nil, nil, "", false
	}
	return keys, values, strings.Join(names, ", "), true
}

// keyed reports whether the sweep charts colour the lines by a parameter.
func (v *View) keyed() bool {
	_, _, _, ok := v.lineKeys()
	return ok
}

// sortValues puts the values that are numbers first, lowest first; the
// others follow in their order.
func sortValues(vals []string) {
	num := func(s string) (float64, bool) {
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	slices.SortStableFunc(vals, func(a, b string) int {
		x, okx := num(a)
		y, oky := num(b)
		switch {
		case okx && oky:
			return cmp.Compare(x, y)
		case okx:
			return -1
		case oky:
			return 1
		}
		return 0
	})
}

func appendNew(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// keyLines draws a sweep chart of many lines (lineKeys): each line in its
// value's colour on a sequential palette with a colour key, the measures'
// dashes in a dash key, and, when several limiters draw lines, a small
// chart per limiter, every one on the same y scale.
func (v *View) keyLines(o *Option) {
	keys, values, param, ok := v.lineKeys()
	if !ok || categorical(o) {
		return
	}
	colors := sequential(len(values))
	var measures, refs []string
	var styles []LineStyle
	for si := range o.Series {
		s := &o.Series[si]
		if s.line == 0 {
			if !strings.HasSuffix(s.Name, " 95% CI") {
				refs = appendNew(refs, s.Name)
			}
			continue
		}
		c := colors[slices.Index(values, keys[s.line-1])]
		ls := LineStyle{Width: 2}
		if s.LineStyle != nil {
			ls = *s.LineStyle
		}
		ls.Color, s.ItemStyle = c, &ItemStyle{Color: c}
		s.LineStyle = &ls
		if !strings.HasSuffix(s.Name, " 95% CI") && !slices.Contains(measures, s.measure) {
			measures = append(measures, s.measure)
			styles = append(styles, LineStyle{Type: ls.Type, Dash: ls.Dash})
		}
	}
	names := slices.Clone(measures)
	for i, m := range names {
		if m == "" {
			names[i] = o.YAxis[0].Name
		}
	}
	if len(measures) < 2 {
		names, styles = nil, nil
	}
	var limiters []int
	var panelNames []string
	for _, l := range v.Lines {
		if li := l.Points[0].LimiterIndex; !slices.Contains(limiters, li) {
			limiters, panelNames = append(limiters, li), append(panelNames, l.Points[0].Limiter)
		}
	}
	rows := colourKey(param, values, colors)
	note := "colour: " + param
	if len(limiters) > 1 {
		note += "; a small chart per limiter"
	}
	o.subLine(note)
	o.dashKey(names, styles, refs)
	if len(limiters) > 1 {
		o.panelize(panelNames, o.placeKeys(rows), func(s *Series) int {
			if s.line == 0 {
				return -1
			}
			return slices.Index(limiters, v.Lines[s.line-1].Points[0].LimiterIndex)
		})
		return
	}
	o.footKeys(rows)
}

// Small charts' layout, in px.
const (
	panelHeaderPx = 80 // the title and two subtitle lines
	panelTitlePx  = 20
	panelPlotPx   = 150
	panelAxisPx   = 42 // the x axis' labels and name
)

// panelize lays a chart's series out as small charts, two a row, one per
// name: panel says which chart a series goes to (-1: every one, a
// reference line); each keeps the chart's axes, the y axis' name on the
// left ones, the x axis' name on the lowest ones, one y scale for all.
// footPx is the px the legend and colour keys take at the foot.
func (o *Option) panelize(names []string, footPx int, panel func(s *Series) int) {
	n, cols := len(names), 2
	rows := (n + cols - 1) / cols
	bx, by := o.XAxis[0], o.YAxis[0]
	right := "20"
	o.Grid, o.XAxis, o.YAxis = nil, nil, nil
	for k := range n {
		r, c := k/cols, k%cols
		top := panelHeaderPx + r*(panelTitlePx+panelPlotPx+panelAxisPx) + panelTitlePx
		g := Grid{Top: strconv.Itoa(top), Height: strconv.Itoa(panelPlotPx), Left: "70", Right: "52%"}
		left := "26%"
		if c == 1 {
			g.Left, g.Right, left = "57%", right, "76%"
		}
		o.Grid = append(o.Grid, g)
		x, y := bx, by
		x.GridIndex, y.GridIndex = k, k
		x.SplitNumber, y.SplitNumber = 3, 4
		if k+cols < n {
			x.Name = "" // a chart below names it
		}
		if c == 1 {
			y.Name = ""
		} else {
			y.NameGap = 42
		}
		o.XAxis, o.YAxis = append(o.XAxis, x), append(o.YAxis, y)
		o.panels = append(o.panels, Title{Text: names[k], Left: left, Top: strconv.Itoa(top - panelTitlePx), TextAlign: "center",
			TextStyle: &TextStyle{FontSize: 12, FontWeight: "normal"}})
	}
	var series []Series
	for _, s := range o.Series {
		if p := panel(&s); p >= 0 {
			s.XAxisIndex, s.YAxisIndex = p, p
			series = append(series, s)
			continue
		}
		for k := range n {
			s.XAxisIndex, s.YAxisIndex = k, k
			series = append(series, s)
		}
	}
	o.Series = series
	// One y scale: every chart to the highest value any draws.
	top := 0.0
	for _, s := range o.Series {
		for _, it := range s.Data {
			if y, ok := itemY(it); ok {
				top = max(top, y)
			}
		}
	}
	if top > 0 && by.Max == nil {
		m := niceCeil(top * 1.05)
		for k := range o.YAxis {
			o.YAxis[k].Max = &m
		}
	}
	o.heightPx = panelHeaderPx + rows*(panelTitlePx+panelPlotPx+panelAxisPx) + footPx + 4
}

// emphasize makes every line, bar and scatter series of a chart of
// several highlight under the pointer, fading the others; a drawn line
// takes the pointer along its length.
func emphasize(o *Option) {
	if len(o.Series) < 2 {
		return
	}
	for i := range o.Series {
		s := &o.Series[i]
		switch s.Type {
		case "line", "bar", "scatter":
		default:
			continue
		}
		if s.Emphasis == nil {
			s.Emphasis = &Emphasis{Focus: "series"}
		}
		if s.Type == "line" && s.Tooltip == nil && len(s.Data) > 0 {
			s.TriggerLineEvent = true
		}
	}
}

// pointKey is how a chart of many points (the client charts) tells them
// apart: each point's colour and dash, and the parts of its setting that
// vary between the points.
type pointKey struct {
	colors []string
	dashes []LineStyle
	// short names each point by what varies ("25 · retry"), dims names
	// what that is ("workload.parts[0].rate_rps · policy"), common what
	// every point shares ("queue-capacity limit=100000").
	short        []string
	dims, common string
	// keys are the colour key's rows (nil: the colours are one a
	// point), param its name.
	keys  []VisualMap
	param string
	// dashNames are the values the dashes mean ("no-retry", "retry"), in
	// dashStyles' order, dashDim what they are ("policy"); nil when every
	// point is solid.
	dashNames []string
	dashDim   string
}

// pointDim is one thing that can tell points apart.
type pointDim struct {
	name    string
	vals    []string
	numeric bool
}

// keyPoints tells points apart. Up to maxKeyedLines, or when no number
// varies, each point has a colour of its own (the palette, then again
// dashed); else the number with the most values colours them on the
// sequential palette and the rest of what varies (up to as many values
// as dashStyles) takes the dash.
func keyPoints(pts []*experiments.Point) pointKey {
	n := len(pts)
	var dims []pointDim
	add := func(name string, numeric bool, get func(p *experiments.Point) (string, bool)) {
		d := pointDim{name: name, vals: make([]string, n), numeric: numeric}
		for k, p := range pts {
			if v, ok := get(p); ok {
				d.vals[k] = v
			}
		}
		dims = append(dims, d)
	}
	add("limiter", false, func(p *experiments.Point) (string, bool) { return p.Limiter, true })
	var params []string
	for _, p := range pts {
		for _, name := range paramsOf(p) {
			params = appendNew(params, name)
		}
		if p.Swept != "" {
			params = appendNew(params, p.Swept)
		}
	}
	for _, name := range params {
		add(name, true, func(p *experiments.Point) (string, bool) {
			if name == p.Swept {
				return format.Num(p.SweptValue()), true
			}
			if !slices.Contains(paramsOf(p), name) {
				return "", false
			}
			return format.Num(p.Params.Get(name)), true
		})
	}
	add("server", false, func(p *experiments.Point) (string, bool) { return p.ServerName, p.ServerName != "" })
	add("policy", false, func(p *experiments.Point) (string, bool) { return p.PolicyName, p.PolicyName != "" })
	add("load", false, func(p *experiments.Point) (string, bool) { return p.LoadName, p.LoadName != "" })

	var varying []pointDim
	var common []string
	for _, d := range dims {
		if slices.ContainsFunc(d.vals, func(v string) bool { return v != d.vals[0] }) {
			varying = append(varying, d)
		} else if d.vals[0] != "" {
			if d.name == "limiter" || d.name == "server" || d.name == "policy" || d.name == "load" {
				common = append(common, d.vals[0])
			} else {
				common = append(common, d.name+"="+d.vals[0])
			}
		}
	}
	k := pointKey{colors: make([]string, n), dashes: make([]LineStyle, n), short: make([]string, n), common: strings.Join(common, " ")}
	var names []string
	for _, d := range varying {
		names = append(names, d.name)
	}
	k.dims = strings.Join(names, " · ")
	for i := range pts {
		var parts []string
		for _, d := range varying {
			parts = append(parts, d.vals[i])
		}
		k.short[i] = strings.Join(parts, " · ")
	}
	// The colour: the number with the most values.
	ci, most := -1, 1
	for j, d := range varying {
		var vals []string
		for _, v := range d.vals {
			vals = appendNew(vals, v)
		}
		if d.numeric && len(vals) > most {
			ci, most = j, len(vals)
		}
	}
	rest := make([]string, n)
	var restVals, restDims []string
	for j, d := range varying {
		if j != ci {
			restDims = append(restDims, d.name)
		}
	}
	for i := range pts {
		var parts []string
		for j, d := range varying {
			if j != ci {
				parts = append(parts, d.vals[i])
			}
		}
		rest[i] = strings.Join(parts, " · ")
		restVals = appendNew(restVals, rest[i])
	}
	if n <= maxKeyedLines || ci < 0 || len(restVals) > len(dashStyles) {
		for i := range pts {
			k.colors[i] = palette[i%len(palette)]
			k.dashes[i] = dashStyles[(i/len(palette))%len(dashStyles)]
		}
		return k
	}
	var vals []string
	for _, v := range varying[ci].vals {
		vals = appendNew(vals, v)
	}
	sortValues(vals)
	seq := sequential(len(vals))
	for i := range pts {
		k.colors[i] = seq[slices.Index(vals, varying[ci].vals[i])]
		k.dashes[i] = dashStyles[slices.Index(restVals, rest[i])]
	}
	k.param = varying[ci].name
	k.keys = colourKey(k.param, vals, seq)
	if len(restVals) > 1 {
		k.dashNames, k.dashDim = restVals, strings.Join(restDims, " · ")
	}
	return k
}

// keyLinesOf puts a pointKey's keys on a chart of a line per point: the
// colour key, what colour and dash mean in the subtitle, the dash key as
// its legend.
func (o *Option) keyLinesOf(k pointKey) {
	if k.keys == nil {
		return
	}
	note := "colour: " + k.param
	if k.dashNames != nil {
		note += "; dash: " + k.dashDim
	}
	o.subLine(note)
	o.dashKey(k.dashNames, dashStyles[:len(k.dashNames)], nil)
	o.footKeys(slices.Clone(k.keys))
}
