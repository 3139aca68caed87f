package charts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// maxClientLines bounds the points the client section draws (the first
// ones, in point order).
const maxClientLines = 12

// shareBase names what the points' reject_pct, served_late_pct and
// shed_pct are shares of: the arrivals, or under the client model (whose
// requests retry) the attempts at the gate.
func (v *View) shareBase() string {
	clients, plain := false, false
	for i := range v.Res.Points {
		if v.Res.Points[i].Metrics.Client != nil {
			clients = true
		} else {
			plain = true
		}
	}
	switch {
	case clients && plain:
		return "arrivals, or attempts under client behaviour"
	case clients:
		return "attempts"
	}
	return "arrivals"
}

// clientSection shows the client model (experiments.ClientMetrics): the
// goodput of logical requests and the attempts reaching the gate over time,
// with the trigger interval shaded, the recovery after it, and the
// amplification (attempts per request) and retry share of each client
// policy. Nil when no point ran the client model.
func clientSection(v *View) *Group {
	res := v.Res
	// all: every point of the client model, one bar each; pts: the first
	// maxClientLines of them, a line each over time.
	var all []*experiments.Point
	for i := range res.Points {
		if p := &res.Points[i]; p.Metrics.Client != nil {
			all = append(all, p)
		}
	}
	if len(all) == 0 {
		return nil
	}
	pts := all[:min(len(all), maxClientLines)]
	// label names a point by every parameter of its setting (a line per
	// point: "token-bucket burst=1" alone named three rates alike) and its
	// server, policy and load.
	label := func(p *experiments.Point) string {
		s := limiterPointName(p)
		if ps := formatParams(p); ps != "" && !strings.Contains(s, ps) {
			s = p.Limiter + " " + ps
			if p.Swept != "" && !strings.Contains(ps, p.Swept+"=") {
				s += " " + p.Swept + "=" + format.Num(p.SweptValue())
			}
		}
		for _, n := range []string{p.ServerName, p.PolicyName, p.LoadName} {
			if n != "" {
				s += " · " + n
			}
		}
		return s
	}
	// Past maxKeyedLines points a number of their setting colours them
	// and the rest of it dashes them (keyPoints).
	pk := keyPoints(all)
	color := func(k int) string { return pk.colors[k] }
	dash := func(k int) seriesOption {
		return func(s *Series) {
			ls := pk.dashes[k]
			ls.Width = 2
			s.LineStyle = &ls
		}
	}
	cfg := res.Config
	start, end, trigger := cfg.TriggerInterval()
	g := &Group{ID: "clients", Title: "Clients: retries, goodput and recovery",
		Intro: "Goodput counts requests that succeeded within their attempts (by finish window); attempts are every try that reached the gate, retries included. Amplification is attempts per request."}
	// measured: some point has a recovery measurement (none when the
	// trigger leaves no whole second before it or no time after it).
	measured := slices.ContainsFunc(all, func(p *experiments.Point) bool { return p.Metrics.Recovery != nil })
	if trigger {
		g.Intro += fmt.Sprintf(" The shaded interval is the trigger, %s to %s ms; recovery is the time after it until goodput over a trailing second is back within %s%% of its level before it.",
			format.Num(start), format.Num(end), format.Num(100*experiments.GoodputTolerance))
		if !measured {
			g.Intro += " Recovery is not measured in this run: it needs a whole second before the trigger and the trigger's end inside the arrival window."
		}
	}
	if n := len(all); n > len(pts) {
		g.Intro += fmt.Sprintf(" The first %d of %d points are drawn over time; the bars show every point.", len(pts), n)
	}

	sw := cfg.SeriesWindow()
	scale := 1000 / sw
	runs := v.replicas()
	overTime := func(id, title, yName string, get func(s *experiments.Series) []int32, sums func(b *experiments.SeriesBand) *experiments.WindowSums) Chart {
		sub := "per " + format.Num(sw) + " ms window"
		if runs > 0 {
			sub += bandNote(runs, 1)
		} else {
			// A replicated run stored without its bands (before series
			// blob format 4) has its first runs' series only.
			title += v.firstRunOf(pts)
		}
		if runs == 0 && !slices.ContainsFunc(pts, func(p *experiments.Point) bool { return get(&p.Series) != nil }) {
			// Series blobs before format 4 dropped the client series.
			sub = "not kept by this run: it was stored before the lab kept the client model's series"
		}
		if len(pts) > 1 && pk.keys == nil {
			sub = "colour: point; " + sub
		}
		o := newLine(title, sub, "time (ms)", yName, "value")
		for k, p := range pts {
			if runs > 0 && p.Band != nil {
				w := sums(p.Band)
				mean, lo, hi := bandItems(w, runs, w.Windows(), 1, sw, scale, false)
				o.addBand(label(p)+" 95% interval", color(k), lo, hi, plain)
				o.addLine(label(p), mean, styled(color(k), dash(k), plain)...)
				continue
			}
			xs := get(&p.Series)
			data := make([]Item, len(xs))
			for w, x := range xs {
				data[w] = xy(float64(w)*sw, float64(x)*scale)
			}
			o.addLine(label(p), data, styled(color(k), dash(k), plain)...)
		}
		if trigger && len(o.Series) > 0 {
			o.Series[0].MarkArea = &MarkArea{Silent: true, ItemStyle: &ItemStyle{Color: targetColor, Opacity: 0.12},
				Data: [][2]AreaEnd{{{Name: "trigger", XAxis: start}, {XAxis: end}}}}
		}
		o.keyLinesOf(pk)
		return chart(id, title, o)
	}
	g.Charts = append(g.Charts,
		overTime("chart-clients-goodput", "Goodput over time", "goodput (req/s)", func(s *experiments.Series) []int32 { return s.Goodput },
			func(b *experiments.SeriesBand) *experiments.WindowSums { return &b.Goodput }),
		overTime("chart-clients-attempts", "Attempts over time", "attempts (req/s)", func(s *experiments.Series) []int32 { return s.Attempts },
			func(b *experiments.SeriesBand) *experiments.WindowSums { return &b.Attempts }))

	// A bar is named by what varies between the points (the rest in the
	// subtitle): whole settings side by side overprinted.
	names := make([]string, len(all))
	barNote := ""
	if len(all) > 1 && pk.dims != "" {
		barNote = "bars: " + pk.dims
		if pk.common != "" {
			barNote += "; every one " + pk.common
		}
	}
	amp := make([]Item, len(all))
	ampSub := "attempts per request at the gate"
	for k, p := range all {
		names[k] = label(p)
		if barNote != "" {
			names[k] = pk.short[k]
		}
		a := p.Metrics.Client.Amplification
		if st, ok := p.Stat("amplification"); ok && cfg.Replicated() {
			a = st.Mean // the runs' mean, as results.csv
		}
		amp[k] = Item{Value: a, ItemStyle: &ItemStyle{Color: color(k)}}
	}
	if cfg.Replicated() {
		ampSub += fmt.Sprintf("; mean of %d runs", cfg.Replicas())
	}
	o := newChart("Amplification per retry policy", ampSub, "attempts per request", Grid{Left: "70", Top: "70", Right: "30", Bottom: "130"})
	o.Legend = &Legend{Show: boolPtr(false)}
	o.XAxis = []XAxis{{Type: "category", Data: names, AxisLabel: thinned(len(names))}}
	if barNote != "" {
		o.subLine(barNote)
	}
	o.measure("amplification")
	o.add("amplification", "bar", amp)
	g.Charts = append(g.Charts, chart("chart-clients-amplification", "Amplification per retry policy", o))

	if trigger && measured {
		rec := make([]Item, len(all))
		none := 0
		for k, p := range all {
			if r := p.Metrics.Recovery; r != nil && r.RecoveryMS != nil {
				rec[k] = Item{Value: *r.RecoveryMS, ItemStyle: &ItemStyle{Color: color(k)}}
			} else {
				none++
			}
		}
		sub := "after the trigger; no bar: did not recover within the run"
		if none == len(all) {
			sub = "no point recovered within the run (metastable)"
		}
		title := "Recovery after the trigger" + v.firstRunOf(all)
		o := newChart(title, sub, "recovery (ms)", Grid{Left: "80", Top: "70", Right: "30", Bottom: "130"})
		o.Legend = &Legend{Show: boolPtr(false)}
		o.XAxis = []XAxis{{Type: "category", Data: names, AxisLabel: thinned(len(names))}}
		if barNote != "" {
			o.subLine(barNote)
		}
		o.measure("recovery_ms")
		o.add("recovery_ms", "bar", rec)
		g.Charts = append(g.Charts, chart("chart-clients-recovery", title, o))
	}
	return g
}
