package web

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// BoundsView is the run page's network-calculus section: a table of every
// point's bounds beside its measurements, the empirical arrival curves
// against alpha and beta, tandems' end-to-end bounds, and heatmaps of
// two-parameter sweeps.
type BoundsView struct {
	RunID string
	Rows  []BoundsRow
	// Chosen is the chosen point's row when it is a chain (its hops).
	Chosen   *BoundsRow
	Chains   bool
	Groups   []*ChartGroup
	Deadline string
}

// BoundsRow is one point of the bounds table; cells are formatted, "" when
// the point has no such bound.
type BoundsRow struct {
	Limiter, Swept, Link string
	Chosen               bool
	Alpha, Beta, Note    string

	Backlog, BacklogBound, BacklogRatio string
	Sojourn, SojournBound, SojournRatio string
	Gate, GateBound                     string
	E2E, E2EBound, E2ERatio             string
	Concat, PerHop                      string
	Hops                                []experiments.HopBound
}

func fmt1(v float64) string { return string(experiments.AppendValue(nil, experiments.Fixed1, v)) }
func ratio(m, b float64) string {
	return string(experiments.AppendValue(nil, experiments.Fixed4, experiments.Tightness(m, b)))
}

// curveText writes a curve in req/s, the unit of the lab's parameters.
func curveText(c *calculus.Curve) string {
	switch c.Kind {
	case calculus.KindAffine:
		return fmt.Sprintf("%s + %s req/s × d", formatNum(c.BurstReq), formatNum(calculus.RPS(c.RatePerMS)))
	case calculus.KindDual:
		return fmt.Sprintf("min(%s + %s req/s × d, %s req/s × d)", formatNum(c.BurstReq), formatNum(calculus.RPS(c.RatePerMS)), formatNum(calculus.RPS(c.PeakPerMS)))
	case calculus.KindStaircase:
		return fmt.Sprintf("%s × (⌊d / %s ms⌋ + %d)", formatNum(c.StepReq), formatNum(c.PeriodMS), c.Steps0)
	}
	return c.String()
}

func betaText(b calculus.RateLatency) string {
	return fmt.Sprintf("%s req/s × [d − %s ms]⁺", formatNum(calculus.RPS(b.RatePerMS)), formatNum(b.LatencyMS))
}

// newBoundsView builds the section, or nil for a run stored without bounds.
func newBoundsView(v *ResultView, runID string) *BoundsView {
	if !hasBounds(v) {
		return nil
	}
	bv := &BoundsView{RunID: runID, Deadline: formatNum(v.Res.Config.Server.DeadlineMS)}
	for i := range v.Res.Points {
		p := &v.Res.Points[i]
		b := p.Bounds
		if b == nil {
			continue
		}
		row := BoundsRow{Limiter: p.Limiter, Swept: "—", Link: fmt.Sprintf("/runs/%s?point=%d#bounds", runID, i), Chosen: i == v.Chosen,
			Beta: betaText(b.Beta), Note: b.Note,
			Backlog: itoa(b.BacklogMax), Sojourn: fmt1(b.SojournMaxMS), Gate: fmt1(b.GateDelayMaxMS), E2E: fmt1(b.EndToEndMaxMS)}
		if p.Swept != "" {
			row.Swept = limiter.FormatParams(p.Type, p.Params)
		}
		if b.Alpha != nil {
			row.Alpha = curveText(b.Alpha)
		}
		if b.Bounded {
			row.BacklogBound, row.BacklogRatio = fmt1(b.BacklogBound), ratio(float64(b.BacklogMax), b.BacklogBound)
			row.SojournBound, row.SojournRatio = fmt1(b.SojournBoundMS), ratio(b.SojournMaxMS, b.SojournBoundMS)
			row.GateBound = fmt1(b.GateDelayBoundMS)
			row.E2EBound, row.E2ERatio = fmt1(b.EndToEndBoundMS), ratio(b.EndToEndMaxMS, b.EndToEndBoundMS)
			if p.Type == limiter.TypeChain {
				bv.Chains = true
				row.PerHop, row.Hops = fmt1(b.PerHopSumMS), b.Hops
				if b.ConcatenatedMS > 0 {
					row.Concat = fmt1(b.ConcatenatedMS)
				} else {
					row.Concat = "n/a (a gate follows a server)"
				}
			}
		}
		bv.Rows = append(bv.Rows, row)
	}
	for i := range bv.Rows {
		if bv.Rows[i].Chosen && len(bv.Rows[i].Hops) > 0 {
			bv.Chosen = &bv.Rows[i]
		}
	}
	if g := arrivalCurveGroup(v); g != nil {
		bv.Groups = append(bv.Groups, g)
	}
	if g := tandemGroup(v); g != nil {
		bv.Groups = append(bv.Groups, g)
	}
	if g := heatmapGroup(v); g != nil {
		bv.Groups = append(bv.Groups, g)
	}
	return bv
}

// option marshals a hand-built echarts option (numbers and strings only;
// json.Marshal escapes <, > and &, and templ escapes the attribute).
func option(o map[string]any) string {
	b, err := json.Marshal(o)
	if err != nil {
		panic(fmt.Sprintf("chart option: %v", err)) // plain data: cannot fail
	}
	return string(b)
}

type xyPoint = [2]float64

var dottedLine = charts.WithLineStyleOpts(opts.LineStyle{Type: "dotted", Width: 2})

func series(name string, data []xyPoint, extra map[string]any) map[string]any {
	s := map[string]any{"type": "line", "name": name, "data": data, "showSymbol": false}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// maxCurveCharts bounds the arrival-curve charts (one per limiter at the
// chosen step).
const maxCurveCharts = 6

// arrivalCurveGroup draws, for each limiter at the chosen step, the
// empirical arrival curves of the offered traffic and of the releases into
// the server against alpha and beta, with the two deviations marked.
func arrivalCurveGroup(v *ResultView) *ChartGroup {
	ac := v.Res.ArrivalCurves
	if ac == nil || len(ac.GridMS) == 0 {
		if v.Res.Arrivals > experiments.MaxCurveArrivals {
			return &ChartGroup{ID: "arrival-curves", Title: "Arrival curves against the bound",
				Intro: fmt.Sprintf("Not computed for this run: its %d arrivals are more than the %d for which the engine measures empirical arrival curves (a pass over every release per window length). The bounds table below still holds every bound and measured maximum.",
					v.Res.Arrivals, experiments.MaxCurveArrivals)}
		}
		return nil
	}
	g := &ChartGroup{ID: "arrival-curves", Title: "Arrival curves against the bound",
		Intro: "For each window length d (log scale), the most requests seen in any window that long: offered, and released into the server. " +
			"alpha is the gate's promise, beta the server's; the horizontal gap between them is the delay bound, the vertical gap the backlog bound."}
	for n, pi := range v.Step {
		if n == maxCurveCharts {
			break
		}
		p := &v.Res.Points[pi]
		b := p.Bounds
		if b == nil || len(p.OutputCurve) != len(ac.GridMS) {
			continue
		}
		// Show window lengths up to a few times the delay bound: where the
		// curves part; longer windows only repeat the long-run rate.
		lo, hi := ac.GridMS[0], ac.GridMS[len(ac.GridMS)-1]
		if b.Alpha != nil && b.Bounded {
			_, h := calculus.DelayAt(*b.Alpha, b.Beta)
			hi = math.Min(hi, math.Max(4*h, 10*b.Beta.LatencyMS))
		}
		top := 1.0
		empirical := func(counts []int) []xyPoint {
			var out []xyPoint
			for i, c := range counts {
				if ac.GridMS[i] > hi {
					// one point past the edge so the line reaches it
					out = append(out, xyPoint{ac.GridMS[i], float64(c)})
					break
				}
				out = append(out, xyPoint{ac.GridMS[i], float64(c)})
				top = math.Max(top, float64(c))
			}
			return out
		}
		ss := []any{
			series("offered", empirical(ac.Offered), map[string]any{"showSymbol": true, "symbolSize": 4, "lineStyle": map[string]any{"color": "#9ca3af", "width": 1}, "itemStyle": map[string]any{"color": "#9ca3af"}}),
			series("released into the server", empirical(p.OutputCurve), map[string]any{"showSymbol": true, "symbolSize": 5, "lineStyle": map[string]any{"width": 2}}),
		}
		ds := logGrid(lo, hi, 90)
		ds = append(ds, b.Beta.LatencyMS)
		sub := "no arrival curve: " + b.Note
		if b.Alpha != nil {
			a := *b.Alpha
			dv, vv := calculus.BacklogAt(a, b.Beta)
			dh, hh := calculus.DelayAt(a, b.Beta)
			ds = append(ds, dv, dh, dh+hh)
			if a.Kind == calculus.KindStaircase {
				for k := 1.0; k*a.PeriodMS <= hi && k < 400; k++ {
					ds = append(ds, k*a.PeriodMS, math.Nextafter(k*a.PeriodMS, 0))
				}
			}
			ds = clampSort(ds, lo, hi)
			alpha, beta := make([]xyPoint, len(ds)), make([]xyPoint, len(ds))
			for i, d := range ds {
				alpha[i], beta[i] = xyPoint{d, a.At(d)}, xyPoint{d, b.Beta.At(d)}
			}
			ss = append(ss,
				series("alpha: "+curveText(&a), alpha, map[string]any{"lineStyle": map[string]any{"type": "dashed", "width": 2, "color": "#b45309"}, "itemStyle": map[string]any{"color": "#b45309"}}),
				series("beta: "+betaText(b.Beta), beta, map[string]any{"lineStyle": map[string]any{"type": "dashed", "width": 2, "color": "#1d4ed8"}, "itemStyle": map[string]any{"color": "#1d4ed8"}}))
			if b.Bounded {
				y := a.At(dh)
				ss = append(ss,
					series(fmt.Sprintf("delay bound %s ms (horizontal)", formatNum(hh)), []xyPoint{{math.Max(dh, lo), y}, {math.Max(dh+hh, lo), y}},
						map[string]any{"showSymbol": true, "symbol": "arrow", "symbolSize": 8, "lineStyle": map[string]any{"width": 3, "color": "#dc2626"}, "itemStyle": map[string]any{"color": "#dc2626"}}),
					series(fmt.Sprintf("backlog bound %s requests (vertical)", formatNum(vv)), []xyPoint{{math.Max(dv, lo), b.Beta.At(dv)}, {math.Max(dv, lo), a.At(dv)}},
						map[string]any{"showSymbol": true, "symbol": "arrow", "symbolSize": 8, "lineStyle": map[string]any{"width": 3, "color": "#7c3aed"}, "itemStyle": map[string]any{"color": "#7c3aed"}}))
				sub = fmt.Sprintf("delay bound %s ms (measured %s) · backlog bound %s (measured %d)", formatNum(hh), fmt1(b.SojournMaxMS), formatNum(vv), b.BacklogMax)
			} else {
				sub = b.Note
			}
			top = math.Max(top, a.At(hi))
		}
		id := fmt.Sprintf("chart-arrival-%d", pi)
		o := map[string]any{
			"animation": false,
			"title":     map[string]any{"text": p.Limiter + " " + limiter.FormatParams(p.Type, p.Params), "subtext": sub, "left": "center"},
			"tooltip":   map[string]any{"trigger": "axis"},
			"legend":    map[string]any{"type": "scroll", "bottom": 0},
			"grid":      map[string]any{"left": 70, "right": 30, "top": 70, "bottom": 80},
			"xAxis":     map[string]any{"type": "log", "name": "window length d (ms, log scale)", "nameLocation": "middle", "nameGap": 28, "min": lo, "max": hi},
			"yAxis":     map[string]any{"type": "value", "name": "requests in the window", "nameLocation": "middle", "nameGap": 50, "max": niceCeil(top * 1.05)},
			"series":    ss,
		}
		g.Charts = append(g.Charts, Chart{ID: id, Title: "Arrival curves of " + pointName(p), Option: option(o)})
	}
	if len(g.Charts) == 0 {
		return nil
	}
	return g
}

// logGrid is n log-spaced window lengths from lo to hi.
func logGrid(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo * math.Pow(hi/lo, float64(i)/float64(n-1))
	}
	return out
}

func clampSort(ds []float64, lo, hi float64) []float64 {
	var out []float64
	for _, d := range ds {
		if d >= lo && d <= hi {
			out = append(out, d)
		}
	}
	sort.Float64s(out)
	return slices.Compact(out)
}

// tandemGroup compares a chain's measured end-to-end maximum with its two
// bounds along the sweep.
func tandemGroup(v *ResultView) *ChartGroup {
	c := newLine("chart-tandem", "Tandem: end-to-end against the bounds", "solid: measured maximum; dashed: concatenated (pay bursts once); dotted: sum of per-hop bounds", v.sweptAxisName(), "arrival to finish (ms)", "value")
	found := false
	for _, l := range v.Lines {
		if l.Points[0].Type != limiter.TypeChain {
			continue
		}
		found = true
		pick := func(f func(b *experiments.Bounds) (float64, bool)) func(p *experiments.Point) (float64, bool) {
			return func(p *experiments.Point) (float64, bool) {
				if p.Bounds == nil {
					return 0, false
				}
				return f(p.Bounds)
			}
		}
		one := &ResultView{Res: v.Res, Lines: []SweepLine{l}, parent: v}
		one.sweepLines(c, " measured", pick(func(b *experiments.Bounds) (float64, bool) { return b.EndToEndMaxMS, true }), solid)
		one.sweepLines(c, " concatenated", pick(func(b *experiments.Bounds) (float64, bool) {
			return b.ConcatenatedMS, b.Bounded && b.ConcatenatedMS > 0
		}), dashed)
		one.sweepLines(c, " per-hop sum", pick(func(b *experiments.Bounds) (float64, bool) { return b.PerHopSumMS, b.Bounded }), dottedLine)
	}
	if !found {
		return nil
	}
	return &ChartGroup{ID: "tandem", Title: "Tandem: pay bursts only once",
		Intro:  "Servers in series act as one server with the smallest rate and the summed latencies, so the burst is paid once; adding per-hop bounds pays it at every hop, grown by each hop's latency.",
		Charts: []Chart{{ID: "chart-tandem", Title: "Tandem: end-to-end against the bounds", Option: optionJSON(c)}}}
}

// Heatmap scales, low to high: red marks the bad end of each measure (the
// default scale painted the best goodput the same red as the worst sojourn).
var (
	heatBadHigh  = []string{"#86efac", "#fde68a", "#f87171"}
	heatGoodHigh = []string{"#f87171", "#fde68a", "#86efac"}
)

// heatmapGroup draws each limiter that sweeps two parameters as heatmaps
// of goodput and p99 sojourn, the cells whose end-to-end bound meets the
// deadline outlined.
func heatmapGroup(v *ResultView) *ChartGroup {
	res := v.Res
	deadline := res.Config.Server.DeadlineMS
	g := &ChartGroup{ID: "heatmaps", Title: "Two-parameter sweeps",
		Intro: fmt.Sprintf("Outlined: the cells whose network-calculus end-to-end bound meets the deadline (%s ms) — settings that are safe for any traffic, not only this workload.", formatNum(deadline))}
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
		params := limiter.ParamsOf(pts[0].Type)
		if pts[0].Type == limiter.TypeChain {
			params = limiter.AllParams
		}
		for _, name := range params {
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
		xs, ys := values(pts, xp), values(pts, yp)
		for _, m := range []struct {
			key, label string
			get        func(p *experiments.Point) float64
			colors     []string // low to high: red is the bad end
		}{
			{"goodput", "goodput (req/s)", func(p *experiments.Point) float64 { return p.Metrics.GoodputRPS }, heatGoodHigh},
			{"sojourn", "p99 sojourn (ms)", func(p *experiments.Point) float64 { return float64(p.Metrics.Sojourn.P99) }, heatBadHigh},
		} {
			var data []any
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, p := range pts {
				val := m.get(p)
				lo, hi = math.Min(lo, val), math.Max(hi, val)
				cell := map[string]any{"value": []float64{float64(slices.Index(xs, p.Params.Get(xp))), float64(slices.Index(ys, p.Params.Get(yp))), val}}
				if b := p.Bounds; b != nil && b.Bounded && b.EndToEndBoundMS <= deadline {
					cell["itemStyle"] = map[string]any{"borderColor": "#111827", "borderWidth": 3}
				}
				data = append(data, cell)
			}
			if hi <= lo {
				hi = lo + 1
			}
			id := fmt.Sprintf("chart-heat-%d-%s", li, m.key)
			title := fmt.Sprintf("%s: %s", res.Config.Limiters[li].Label(), m.label)
			o := map[string]any{
				"animation": false,
				"title":     map[string]any{"text": title, "subtext": "outlined: end-to-end bound ≤ deadline", "left": "center"},
				"tooltip":   map[string]any{"position": "top"},
				"grid":      map[string]any{"left": 80, "right": 30, "top": 70, "bottom": 100},
				"xAxis":     map[string]any{"type": "category", "data": labels(xs), "name": xp + " (" + paramUnit(xp) + ")", "nameLocation": "middle", "nameGap": 28, "splitArea": map[string]any{"show": true}},
				"yAxis":     map[string]any{"type": "category", "data": labels(ys), "name": yp + " (" + paramUnit(yp) + ")", "nameLocation": "middle", "nameGap": 60, "splitArea": map[string]any{"show": true}},
				"visualMap": map[string]any{"min": lo, "max": hi, "calculable": true, "orient": "horizontal", "left": "center", "bottom": 0, "inRange": map[string]any{"color": m.colors}},
				"series":    []any{map[string]any{"type": "heatmap", "name": m.label, "data": data, "label": map[string]any{"show": true}}},
			}
			g.Charts = append(g.Charts, Chart{ID: id, Title: title, Option: option(o)})
		}
	}
	if len(g.Charts) == 0 {
		return nil
	}
	return g
}

// values lists a parameter's distinct values in sweep order.
func values(pts []*experiments.Point, name string) []float64 {
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
		out[i] = formatNum(x)
	}
	return out
}

// niceCeil rounds an axis maximum up to 1, 2 or 5 times a power of ten
// over 10 (so 212 becomes 250).
func niceCeil(v float64) float64 {
	if v <= 10 {
		return math.Ceil(v)
	}
	p := math.Pow(10, math.Floor(math.Log10(v))-1)
	for _, m := range []float64{10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100} {
		if m*p >= v {
			return m * p
		}
	}
	return math.Ceil(v)
}

// hasBounds reports whether the run page has a bounds section.
func hasBounds(v *ResultView) bool {
	return v != nil && len(v.Res.Points) > 0 && v.Res.Points[0].Bounds != nil
}
