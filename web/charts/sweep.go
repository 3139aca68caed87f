package charts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// The sweep sections: each measure against the swept parameter, one line
// per sweep line (or, for a categorical run, one bar per limiter).

// newSweepChart starts a chart of measures against the swept parameter
// (lineSub is its subtitle), or, for a categorical run, against the
// limiters as bars (barSub).
func (v *View) newSweepChart(title, lineSub, barSub, yName string) *Option {
	if !v.Categorical() {
		o := newLine(title, lineSub, v.sweptAxisName(), yName, "value")
		o.keepX() // the swept values, as the config gives them
		return o
	}
	o := newLine(title, barSub, "limiter", yName, "category")
	names := make([]string, len(v.Lines))
	for i, l := range v.Lines {
		names[i] = l.Name
	}
	// Past maxCategoryLabels bars of one limiter, a bar is named by what
	// else tells it apart ("tail-drop, 50"), the limiter in the axis'
	// name, and echarts leaves out labels that would overprint.
	axis := "limiter"
	label := &AxisLabel{Interval: "0", Rotate: 12}
	if len(names) > maxCategoryLabels {
		label = thinned(len(names))
		if l0 := v.Lines[0].Points[0].Limiter; !slices.ContainsFunc(v.Lines, func(l SweepLine) bool { return l.Points[0].Limiter != l0 }) {
			axis = "limiter " + l0 + ": " + strings.Join(v.scenarioNames(), ", ")
			for i, l := range v.Lines {
				var vals []string
				for _, p := range l.params {
					_, val, _ := strings.Cut(p, "=")
					vals = append(vals, val)
				}
				for _, s := range l.scenario {
					_, val, _ := strings.Cut(s, " ")
					vals = append(vals, val)
				}
				names[i] = strings.Join(vals, ", ")
			}
		}
	}
	o.XAxis[0] = XAxis{Type: "category", Name: axis, NameLocation: "middle", NameGap: 58, Data: names, AxisLabel: label}
	return o
}

// categorical reports whether o puts the limiters on its x axis.
func categorical(o *Option) bool { return o.XAxis[0].Type == "category" }

// metric is a measure of a point; ok=false where the point has none.
type metric func(p *experiments.Point) (y float64, ok bool)

// sweepLines adds one series per sweep line of m, in the line's color and
// the given line type. On a categorical chart it adds one bar series
// instead, a bar per limiter, named by suffix (or the y axis). A line at
// one setting with nothing swept is drawn flat across the x range.
func (v *View) sweepLines(o *Option, suffix string, m metric, lineType seriesOption) {
	if categorical(o) {
		name := strings.TrimSpace(suffix)
		if name == "" {
			name = o.YAxis[0].Name
		}
		data := make([]Item, len(v.Lines))
		for i, l := range v.Lines {
			data[i] = Item{Value: "-"} // echarts: no value
			if y, ok := m(l.Points[0]); ok {
				data[i] = Item{Value: y}
			}
		}
		o.addLine(name, data, lineType, colored(palette[len(o.Series)%len(palette)]), asBar)
		return
	}
	lo, hi := v.xRange()
	// of marks a series as line i's measure (keyLines colours it).
	of := func(i int) seriesOption {
		return func(s *Series) { s.line, s.measure = i+1, strings.TrimSpace(suffix) }
	}
	// Past maxKeyedLines the lines are coloured by a parameter, all of
	// one width; up to it the earlier lines draw wider (marked).
	keyed := v.keyed()
	widest, ranks := -1, map[int]bool{}
	for i, l := range v.Lines {
		if p := l.Points[0]; len(l.Points) == 1 && p.Swept == "" && lo < hi {
			if y, ok := m(p); ok {
				o.addLine(l.Name+suffix, []Item{xy(lo, y), xy(hi, y)}, plain, lineType, colored(v.lineColor(i)), of(i))
			}
			continue
		}
		var data []Item
		for _, p := range l.Points {
			if y, ok := m(p); ok {
				data = append(data, xy(p.SweptValue(), y))
			}
		}
		if len(data) == 0 {
			continue
		}
		if keyed {
			o.addLine(l.Name+suffix, data, dots, lineType, colored(v.lineColor(i)), of(i), func(s *Series) { s.SymbolSize = 5 })
			continue
		}
		o.addLine(l.Name+suffix, data, dots, lineType, colored(v.lineColor(i)), marked(v.lineRank(i)), of(i))
		if r := v.lineRank(i); !ranks[r] {
			ranks[r] = true
			if widest < 0 || r < v.lineRank(widest) {
				widest = i
			}
		}
	}
	if len(ranks) > 1 {
		note := fmt.Sprintf("wider lines: earlier limiters (%s widest), so lines that coincide stay visible", v.Lines[widest].Name)
		if !strings.Contains(o.Title.Subtext, note) {
			o.subLine(note)
		}
	}
}

// flat adds a dotted reference line at y across the chart.
func (v *View) flat(o *Option, name string, y float64) {
	var data []Item
	if categorical(o) {
		data = make([]Item, len(v.Lines))
		for i := range data {
			data[i] = Item{Value: y}
		}
	} else {
		lo, hi := v.xRange()
		data = []Item{xy(lo, y), xy(hi, y)}
	}
	o.addLine(name, data, styled(referenceColor, dotted, plain)...)
}

// offered adds the offered load as a dotted reference: one flat line when
// every point offers the same; else one line through each swept value's
// offered load when the lines agree there (a swept workload rate); else
// one dotted line per sweep line in its color (a closed loop's offered
// load answers its limiter). On a categorical chart each limiter's bar has
// its own offered load.
func (v *View) offered(o *Option) {
	m := keyed("offered_rps")
	pts := v.points()
	if len(pts) == 0 {
		return
	}
	y0, _ := m(pts[0])
	same := true
	for _, p := range pts[1:] {
		if y, _ := m(p); y != y0 {
			same = false
		}
	}
	if same {
		v.flat(o, "offered", y0)
		return
	}
	if categorical(o) {
		data := make([]Item, len(v.Lines))
		for i, l := range v.Lines {
			data[i] = Item{Value: "-"}
			if y, ok := m(l.Points[0]); ok {
				data[i] = Item{Value: y}
			}
		}
		o.addLine("offered", data, styled(referenceColor, dotted, plain)...)
		return
	}
	flatLine := func(l *SweepLine) bool { return len(l.Points) == 1 && l.Points[0].Swept == "" }
	byX := map[float64]float64{}
	var xs []float64
	agree := true
	for i := range v.Lines {
		if flatLine(&v.Lines[i]) {
			agree = false
			break
		}
		for _, p := range v.Lines[i].Points {
			y, ok := m(p)
			if !ok {
				continue
			}
			x := p.SweptValue()
			if old, seen := byX[x]; !seen {
				byX[x] = y
				xs = append(xs, x)
			} else if old != y {
				agree = false
			}
		}
	}
	if agree {
		slices.Sort(xs)
		data := make([]Item, len(xs))
		for i, x := range xs {
			data[i] = xy(x, byX[x])
		}
		o.addLine("offered", data, styled(referenceColor, dotted, plain)...)
		return
	}
	lo, hi := v.xRange()
	for i := range v.Lines {
		l := &v.Lines[i]
		var data []Item
		if flatLine(l) {
			if y, ok := m(l.Points[0]); ok && lo < hi {
				data = []Item{xy(lo, y), xy(hi, y)}
			}
		} else {
			for _, p := range l.Points {
				if y, ok := m(p); ok {
					data = append(data, xy(p.SweptValue(), y))
				}
			}
		}
		if len(data) > 0 {
			o.addLine(l.Name+" offered", data, dotted, plain, colored(v.lineColor(i)), func(s *Series) { s.line, s.measure = i+1, "offered" })
		}
	}
}

// targetColor draws objectives' targets and the region meeting them.
const targetColor = "#2166ac"

// objectives adds, for each of the config's objectives on one of the
// chart's results columns (keys), its target as a dashed line and the
// values meeting it shaded (a mark area from the target to the axis' end
// on the objective's side; echarts reads a missing corner as the grid's
// edge). The line keeps the target on the y axis.
func (v *View) objectives(o *Option, keys ...string) {
	for _, obj := range v.Res.Config.Objectives {
		if !slices.Contains(keys, obj.Metric) {
			continue
		}
		v.flat(o, "meets "+obj.String(), obj.Value)
		s := &o.Series[len(o.Series)-1]
		s.exact = true // the config's target
		s.LineStyle = &LineStyle{Color: targetColor, Width: 1.5, Type: "dashed"}
		s.ItemStyle = &ItemStyle{Color: targetColor}
		target := AreaEnd{YAxis: obj.Value}
		area := [2]AreaEnd{target, {}} // from the target up
		if obj.Upper() {
			area = [2]AreaEnd{{}, target} // from the bottom to the target
		}
		s.MarkArea = &MarkArea{Silent: true, ItemStyle: &ItemStyle{Color: targetColor, Opacity: 0.08}, Data: [][2]AreaEnd{area}}
	}
}

// sweepCharts draws one sweep chart per unit of the swept parameters
// (see byUnit): the first keeps id, the others get id-2, id-3, ... and
// every title names its parameters when there are several.
func (v *View) sweepCharts(id, title string, build func(sv *View, title string) *Option) []Chart {
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
		o := build(sv, t)
		sv.colourNote(o)
		sv.keyLines(o)
		out = append(out, chart(cid, t, o))
	}
	return out
}

// throughputSection is goodput against the offered load, and the shares
// rejected and served late.
func throughputSection(v *View) *Group {
	g := &Group{ID: "throughput", Title: "Goodput and rejections",
		Intro: "Goodput counts requests served within the deadline, per second of the arrival window."}

	title := "Goodput against the swept parameter"
	if v.Categorical() {
		title = "Goodput per limiter"
	}
	g.Charts = append(g.Charts, v.sweepCharts("chart-goodput", title, func(v *View, title string) *Option {
		lineSub := "one line per limiter; dotted: offered load"
		if v.keyed() || v.splitsLimiters() {
			lineSub = "dotted: offered load" // colourNote or keyLines says what a colour is
		}
		o := v.newSweepChart(title, lineSub, "dotted: offered load", "goodput (req/s)")
		o.measure("goodput_rps")
		v.sweepLines(o, "", keyed("goodput_rps"), solid)
		v.intervals(o, "", "goodput_rps")
		v.offered(o)
		v.objectives(o, "goodput_rps")
		return o
	})...)
	// A server that sheds (a door, expiry, eviction) refuses what the gate
	// passed: its share is a third line, else a run whose gate is none
	// drew an empty axis.
	sheds := slices.ContainsFunc(v.Res.Points, func(p experiments.Point) bool { return p.Metrics.ShedPct > 0 })
	rejectTitle := "Rejected and served late"
	if sheds {
		rejectTitle = "Rejected, shed and served late"
	}
	g.Charts = append(g.Charts, v.sweepCharts("chart-reject-late", rejectTitle, func(v *View, title string) *Option {
		of := v.shareBase()
		lineSub, barSub := "solid: rejected; dashed: served after the deadline", "late: served after the deadline"
		if sheds {
			lineSub, barSub = "solid: rejected by the gate; dotted: shed by the server; dashed: served after the deadline", "shed: by the server; late: served after the deadline"
		}
		o := v.newSweepChart(title, lineSub+" (% of "+of+")", barSub+" (% of "+of+")", "share of "+of+" (%)")
		o.measure("reject_pct")
		v.sweepLines(o, " rejected", keyed("reject_pct"), solid)
		if sheds {
			v.sweepLines(o, " shed", func(p *experiments.Point) (float64, bool) { return p.Metrics.ShedPct, true }, dotted)
		}
		v.sweepLines(o, " late", keyed("served_late_pct"), dashed)
		v.intervals(o, " rejected", "reject_pct")
		v.intervals(o, " late", "served_late_pct")
		v.objectives(o, "reject_pct", "served_late_pct")
		if allZero(o) {
			o.Title.Subtext = "no request rejected" + map[bool]string{true: ", shed", false: ""}[sheds] + " or served late at any point"
		}
		return o
	})...)
	return g
}

// delaySection is where requests wait: at the gate or at the server, and
// their whole time in the system against the deadline.
func delaySection(v *View) *Group {
	g := &Group{ID: "delay", Title: "Where the wait lands",
		Intro: "A shaper holds requests at the gate; a policer passes bursts on and the queue forms at the server."}
	g.Charts = append(g.Charts, v.sweepCharts("chart-waits", "p99 gate delay against p99 server wait", func(v *View, title string) *Option {
		o := v.newSweepChart(title, "solid: at the gate; dashed: at the server (admitted requests)", "admitted requests", "p99 wait (ms)")
		o.measure("gate_delay_p99_ms")
		v.sweepLines(o, " gate p99", keyed("gate_delay_p99_ms"), solid)
		v.sweepLines(o, " server p99", keyed("server_wait_p99_ms"), dashed)
		v.intervals(o, " gate p99", "gate_delay_p99_ms")
		v.intervals(o, " server p99", "server_wait_p99_ms")
		v.objectives(o, "gate_delay_p99_ms", "server_wait_p99_ms")
		return o
	})...)

	dl := fmt.Sprintf("arrival to finish; dotted: the deadline (%s ms)", format.Num(v.Res.Config.Server.DeadlineMS))
	g.Charts = append(g.Charts, v.sweepCharts("chart-sojourn", "p99 time in system", func(v *View, title string) *Option {
		o := v.newSweepChart(title, dl, dl, "p99 time in system (ms)")
		o.measure("sojourn_p99_ms")
		v.sweepLines(o, "", keyed("sojourn_p99_ms"), solid)
		v.intervals(o, "", "sojourn_p99_ms")
		v.flat(o, "deadline", v.Res.Config.Server.DeadlineMS)
		o.Series[len(o.Series)-1].exact = true // the config's deadline
		v.objectives(o, "sojourn_p99_ms")
		return o
	})...)
	return g
}

// downstreamSection is what the service sees: the peak release rate
// against its capacity, and the most releases in any rolling window
// against the gate's own bound there, its arrival curve at the window.
func downstreamSection(v *View) *Group {
	cfg := v.Res.Config
	g := &Group{ID: "downstream", Title: "What the service sees",
		Intro: "The peak is the most releases in an aligned 100 ms window, ×10; the rolling maximum is checked over every window position."}
	pk := fmt.Sprintf("busiest aligned 100 ms window; dotted: server capacity (%s req/s)", format.Round(cfg.Server.RateRPS(), 1))
	g.Charts = append(g.Charts, v.sweepCharts("chart-peak", "Downstream peak rate", func(v *View, title string) *Option {
		o := v.newSweepChart(title, pk, pk, "peak rate (req/s)")
		o.measure("downstream_peak_rps")
		v.sweepLines(o, "", keyed("downstream_peak_rps"), solid)
		v.intervals(o, "", "downstream_peak_rps")
		v.flat(o, "server capacity", cfg.Server.RateRPS())
		v.objectives(o, "downstream_peak_rps")
		return o
	})...)

	L := cfg.Metrics.RollingWindowMS
	g.Charts = append(g.Charts, v.sweepCharts("chart-rolling", fmt.Sprintf("Most releases in any %s ms", format.Num(L)), func(v *View, title string) *Option {
		o := v.newSweepChart(title,
			fmt.Sprintf("solid: measured; dashed: the gate's bound, its arrival curve at %s ms", format.Num(L)), fmt.Sprintf("measured, and the gate's bound (its arrival curve at %s ms)", format.Num(L)), fmt.Sprintf("releases (per %s ms)", format.Num(L)))
		o.measure("rolling_max")
		v.sweepLines(o, " measured", keyed("rolling_max"), solid)
		v.intervals(o, " measured", "rolling_max")
		v.sweepLines(o, " bound α(L)", func(p *experiments.Point) (float64, bool) { return gateBound(v.Res, p, L) }, dashed)
		v.objectives(o, "rolling_max")
		return o
	})...)
	return g
}

// allZero reports whether every value of a chart's lines and bars is 0.
func allZero(o *Option) bool {
	for _, s := range o.Series {
		for _, it := range s.Data {
			if y, ok := itemY(it); ok && y != 0 {
				return false
			}
		}
	}
	return true
}

// scenarioNames are the names of what splits the lines beside their
// limiter: the parameters and the scenario's axes ("server", "load").
func (v *View) scenarioNames() []string {
	var names []string
	for _, l := range v.Lines {
		for _, p := range l.params {
			n, _, _ := strings.Cut(p, "=")
			names = appendNew(names, n)
		}
		for _, s := range l.scenario {
			n, _, _ := strings.Cut(s, " ")
			names = appendNew(names, n)
		}
	}
	return names
}

// colourNote starts the subtitle of a sweep chart of several lines
// coloured one by one with what a colour is: a limiter, or a line of a
// limiter sweeping two parameters (keyLines says it for its colours).
func (v *View) colourNote(o *Option) {
	if categorical(o) || len(v.Lines) < 2 || v.keyed() || strings.Contains(o.Title.Subtext, "one line per") {
		return
	}
	note := "colour: limiter"
	if v.splitsLimiters() {
		note = "colour: limiter and its parameters"
	}
	o.Title.Subtext = note + "; " + o.Title.Subtext
}
