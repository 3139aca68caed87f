package charts

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/web/format"
)

// maxCurveCharts bounds the arrival-curve charts (one per limiter at the
// chosen step).
const maxCurveCharts = 6

// Colors of the arrival-curve charts.
const (
	alphaColor   = "#b45309"
	betaColor    = "#1d4ed8"
	delayColor   = "#dc2626"
	backlogColor = "#7c3aed"
)

// arrivalCurveGroup draws, for each limiter at the chosen step, the
// empirical arrival curves of the offered traffic and of the releases into
// the server against alpha and beta, with the two deviations marked. A run
// with more arrivals than the engine measures curves for gets the section
// with a note and no charts; nil when there is nothing to say.
func arrivalCurveGroup(v *View) *Group {
	ac := v.Res.ArrivalCurves
	if ac == nil || len(ac.GridMS) == 0 {
		if v.Res.Arrivals > experiments.MaxCurveArrivals {
			return &Group{ID: "arrival-curves", Title: "Arrival curves against the bound",
				Intro: fmt.Sprintf("Not computed for this run: its %d arrivals are more than the %d for which the engine measures empirical arrival curves (a pass over every release per window length). The bounds table below still holds every bound and measured maximum.",
					v.Res.Arrivals, experiments.MaxCurveArrivals)}
		}
		return nil
	}
	g := &Group{ID: "arrival-curves", Title: "Arrival curves against the bound" + v.firstRun(&v.Res.Points[v.Chosen]),
		Intro: "For each window length d (log scale), the most requests seen in any window that long: offered, and released into the server. " +
			"alpha is the gate's promise, beta the server's; the horizontal gap between them is the delay bound, the vertical gap the backlog bound."}
	for n, pi := range v.Step {
		if n == maxCurveCharts {
			break
		}
		p := &v.Res.Points[pi]
		if p.Bounds == nil || len(p.OutputCurve) != len(ac.GridMS) {
			continue
		}
		g.Charts = append(g.Charts, arrivalCurveChart(fmt.Sprintf("chart-arrival-%d", pi), v.Res, p))
	}
	if len(g.Charts) == 0 {
		return nil
	}
	return g
}

// arrivalCurveChart is one point's arrival curves on a log axis of window
// lengths, up to a few times the delay bound: where the curves part;
// longer windows only repeat the long-run rate. The offered curve is the
// point's own load's (ArrivalCurves.OfferedOf); alpha is the gate's arrival
// curve even when the path has no bound (a rate above the server's), and
// neither alpha nor beta is drawn for a gate or a server that has none.
func arrivalCurveChart(id string, res *experiments.Result, p *experiments.Point) Chart {
	ac := res.ArrivalCurves
	b := p.Bounds
	lo, hi := ac.GridMS[0], ac.GridMS[len(ac.GridMS)-1]
	if b.Alpha != nil && b.Bounded {
		_, h := calculus.DelayAt(*b.Alpha, b.Beta)
		hi = math.Min(hi, math.Max(4*h, 10*b.Beta.LatencyMS))
	}
	top := 1.0
	// empirical is a measured curve up to hi, and one point past it so the
	// line reaches the edge.
	empirical := func(counts []int) []Item {
		var out []Item
		for i, c := range counts {
			out = append(out, xy(ac.GridMS[i], float64(c)))
			if ac.GridMS[i] > hi {
				break
			}
			top = math.Max(top, float64(c))
		}
		return out
	}
	o := &Option{
		Grid:    []Grid{{Left: "70", Top: "70", Right: "30", Bottom: "80"}},
		Legend:  &Legend{Bottom: "0"},
		Tooltip: Tooltip{Trigger: "axis"},
		XAxis:   []XAxis{{Type: "log", Name: "window length d (ms, log scale)", NameLocation: "middle", NameGap: 28, Min: floatPtr(lo), Max: floatPtr(hi)}},
	}
	symbols := func(size int) seriesOption {
		return func(s *Series) { s.ShowSymbol, s.SymbolSize = boolPtr(true), size }
	}
	var notes []string
	if offered := ac.OfferedOf(res.Config, p); len(offered) == len(ac.GridMS) {
		o.addLine("offered", empirical(offered), plain, symbols(4), func(s *Series) {
			s.LineStyle, s.ItemStyle = &LineStyle{Color: offeredColor, Width: 1}, &ItemStyle{Color: offeredColor}
		})
	} else {
		notes = append(notes, "offered curve not kept for this point's load")
	}
	o.addLine("released into the server", empirical(p.OutputCurve), plain, symbols(5), func(s *Series) { s.LineStyle = &LineStyle{Width: 2} })
	alpha := b.Alpha
	if alpha == nil {
		if c, ok := limiter.ArrivalCurve(&res.Config.Limiters[p.LimiterIndex], p.Params, len(res.Clients)); ok {
			alpha = &c
		}
	}
	if alpha == nil {
		notes = append(notes, b.Note)
	} else {
		a := *alpha
		ds := logGrid(lo, hi, 90)
		bounded := b.Bounded && b.Alpha != nil && hasBeta(b.Beta)
		var dv, vv, dh, hh float64
		if bounded {
			dv, vv = calculus.BacklogAt(a, b.Beta)
			dh, hh = calculus.DelayAt(a, b.Beta)
			ds = append(ds, b.Beta.LatencyMS, dv, dh, dh+hh)
		}
		if a.Kind == calculus.KindStaircase {
			for k := 1.0; k*a.PeriodMS <= hi && k < 400; k++ {
				ds = append(ds, k*a.PeriodMS, math.Nextafter(k*a.PeriodMS, 0))
			}
		}
		ds = clampSort(ds, lo, hi)
		alphaData, betaData := make([]Item, len(ds)), make([]Item, len(ds))
		for i, d := range ds {
			alphaData[i], betaData[i] = xy(d, a.At(d)), xy(d, b.Beta.At(d))
		}
		o.addLine("alpha: "+curveText(&a), alphaData, styled(alphaColor, dashed, plain)...)
		if hasBeta(b.Beta) {
			o.addLine("beta: "+betaText(b.Beta), betaData, styled(betaColor, dashed, plain)...)
		}
		if bounded {
			y := a.At(dh)
			arrow := func(color string) []seriesOption {
				return []seriesOption{func(s *Series) {
					s.ShowSymbol, s.Symbol, s.SymbolSize = boolPtr(true), "arrow", 8
					s.LineStyle, s.ItemStyle = &LineStyle{Color: color, Width: 3}, &ItemStyle{Color: color}
				}}
			}
			o.addLine(fmt.Sprintf("delay bound %s ms (horizontal)", format.Num(hh)), []Item{xy(math.Max(dh, lo), y), xy(math.Max(dh+hh, lo), y)}, arrow(delayColor)...)
			o.addLine(fmt.Sprintf("backlog bound %s requests (vertical)", format.Num(vv)), []Item{xy(math.Max(dv, lo), b.Beta.At(dv)), xy(math.Max(dv, lo), a.At(dv))}, arrow(backlogColor)...)
			notes = append([]string{fmt.Sprintf("delay bound %s ms (measured %s) · backlog bound %s (measured %d)", format.Num(hh), fmt1(b.SojournMaxMS), format.Num(vv), b.BacklogMax)}, notes...)
		} else {
			notes = append([]string{"alpha drawn; " + b.Note}, notes...)
		}
		top = math.Max(top, a.At(hi))
	}
	o.Title = Title{Text: p.Limiter + " " + formatParams(p), Subtext: strings.Join(notes, " · "), Left: "center"}
	o.YAxis = []YAxis{{Type: "value", Name: "requests in the window", NameLocation: "middle", NameGap: 50, Max: floatPtr(niceCeil(top * 1.05))}}
	return chart(id, "Arrival curves of "+limiterPointName(p), o)
}

// logGrid is n log-spaced window lengths from lo to hi.
func logGrid(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo * math.Pow(hi/lo, float64(i)/float64(n-1))
	}
	return out
}

// clampSort keeps the lengths within [lo, hi], sorted, without repeats.
func clampSort(ds []float64, lo, hi float64) []float64 {
	var out []float64
	for _, d := range ds {
		if d >= lo && d <= hi {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
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
