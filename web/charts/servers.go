package charts

import (
	"fmt"
	"slices"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// The sections of the seed lab's models (the queue model's servers, loads,
// classes and the SLO): what the posts are about. Each compares the
// config's servers (server disciplines, doors) at the chosen point's
// limiter and setting; the time charts show the config's first load (the
// one its series reports draw).

// serverPeers are the points that differ from p only by their server, in
// server order, on load lo.
func serverPeers(res *experiments.Result, p *experiments.Point, lo int) []*experiments.Point {
	var out []*experiments.Point
	for i := range res.Points {
		q := &res.Points[i]
		if q.LimiterIndex == p.LimiterIndex && q.Load == lo && sameParams(q, p) {
			out = append(out, q)
		}
	}
	return out
}

func sameParams(a, b *experiments.Point) bool {
	if len(a.Params) != len(b.Params) {
		return false
	}
	for k, v := range a.Params {
		if b.Params[k] != v {
			return false
		}
	}
	return true
}

// serverName names a peer by its server (or its limiter without servers).
func serverName(p *experiments.Point) string {
	if p.ServerName != "" {
		return p.ServerName
	}
	return limiterPointName(p)
}

// loadName names the chosen load for subtitles.
func loadName(res *experiments.Result, lo int) string {
	if len(res.Config.Loads) == 0 {
		return "the workload"
	}
	return "load " + res.Config.Loads[lo].Name
}

// hangoverSection: the p99 sojourn of the requests finishing in each 100 ms
// window, per server, on a log axis: how long a burst's backlog keeps
// hurting after the burst (Post 4). Nil without the queue model's series.
func hangoverSection(v *View) *Group {
	res := v.Res
	peers := serverPeers(res, &res.Points[v.Chosen], 0)
	if !slices.ContainsFunc(peers, func(p *experiments.Point) bool { return len(p.Series.SojournP99) > 0 }) {
		return nil
	}
	g := &Group{ID: "hangover", Title: "Hangover: the p99 of served work" + v.firstRun(&res.Points[v.Chosen]),
		Intro: "The p99 sojourn of the requests that finished in each " + format.Num(res.Config.SeriesWindow()) + " ms window (by finish time), per server: after a burst, a server that serves its backlog in order keeps serving stale work long after the burst ends. Windows where nothing finished have no point."}
	sw := int(res.Config.SeriesWindow())
	o := newLine("p99 of served work per window", loadName(res, 0)+"; log axis", "time (ms)", "p99 sojourn (ms)", "value")
	o.YAxis[0].Type = "log"
	for si, p := range peers {
		var data []Item
		for k, x := range p.Series.SojournP99 {
			if x > 0 {
				data = append(data, xy(float64(k*sw), float64(x)))
			}
		}
		o.addLine(serverName(p), data, styled(palette[si%len(palette)], solid, plain)...)
	}
	g.Charts = append(g.Charts, chart("chart-hangover", "p99 of served work per window", o))
	return g
}

// shedSection: how long a shed request waited before it learned (the shed
// wait, p50 and p99), and the shed share, per server against the offered
// load of each load, the levels a points report selects (Post 4). Nil
// without the queue model's outcomes.
func shedSection(v *View) *Group {
	res := v.Res
	chosen := &res.Points[v.Chosen]
	type line struct {
		name string
		pts  []*experiments.Point
	}
	// The loads of the config's first points report that selects loads
	// (the offered-load levels of a preset of the seed lab's posts), else all of them.
	keep := func(lo int) bool { return true }
	for _, r := range res.Config.Reports {
		if r.Type == experiments.ReportPoints && r.Select != nil && len(r.Select.Loads) > 0 {
			loads := r.Select.Loads
			keep = func(lo int) bool { return slices.Contains(loads, lo) }
			break
		}
	}
	var lines []line
	for si := range res.Config.ServerCount() {
		var pts []*experiments.Point
		for i := range res.Points {
			q := &res.Points[i]
			if q.LimiterIndex == chosen.LimiterIndex && q.Server == si && sameParams(q, chosen) && keep(q.Load) && q.Metrics.ShedWait != nil {
				pts = append(pts, q)
			}
		}
		if len(pts) == 0 {
			continue
		}
		slices.SortStableFunc(pts, func(a, b *experiments.Point) int {
			switch {
			case a.Metrics.OfferedRPS < b.Metrics.OfferedRPS:
				return -1
			case a.Metrics.OfferedRPS > b.Metrics.OfferedRPS:
				return 1
			}
			return 0
		})
		lines = append(lines, line{serverName(pts[0]), pts})
	}
	if len(lines) == 0 {
		return nil
	}
	of := v.shareBase()
	g := &Group{ID: "shedding", Title: "Who is shed, and how long the doomed wait" + v.firstRun(nil),
		Intro: "Per server, against the offered load of each load: the share of " + of + " the server shed (at its door, by eviction, by expiry at dequeue, or still waiting when the window ended), and how long a shed request waited before it learned, from its arrival to its shedding (0 at the door)."}
	wait := newLine("Shed wait", "p50 solid, p99 dashed", "offered (req/s)", "shed wait (ms)", "value")
	share := newLine("Shed share", "of all "+of, "offered (req/s)", "shed (%)", "value")
	for i, l := range lines {
		var p50, p99, pct []Item
		for _, p := range l.pts {
			m := p.Metrics
			p50 = append(p50, xy(m.OfferedRPS, float64(m.ShedWait.P50)))
			p99 = append(p99, xy(m.OfferedRPS, float64(m.ShedWait.P99)))
			pct = append(pct, xy(m.OfferedRPS, m.ShedPct))
		}
		color := palette[i%len(palette)]
		wait.addLine(l.name+" p50", p50, styled(color, solid, dots)...)
		wait.addLine(l.name+" p99", p99, styled(color, dashed, dots)...)
		share.addLine(l.name, pct, styled(color, solid, dots)...)
	}
	g.Charts = append(g.Charts, chart("chart-shed-wait", "Shed wait per server", wait), chart("chart-shed-share", "Shed share per server", share))
	return g
}

// classSection: each class's success within the deadline per arrival
// window, per server, with the SLO's target as a line (Post 5). Nil
// without classes.
func classSection(v *View) *Group {
	res := v.Res
	cfg := res.Config
	if len(cfg.Classes) == 0 {
		return nil
	}
	peers := serverPeers(res, &res.Points[v.Chosen], 0)
	if !slices.ContainsFunc(peers, func(p *experiments.Point) bool { return len(p.Series.Classes) > 0 }) {
		return nil
	}
	end := cfg.ScoreEndMS(cfg.ServerAt(0).DeadlineMS)
	sw := int(cfg.SeriesWindow())
	windows := int(end / float64(sw))
	g := &Group{ID: "classes", Title: "Success per class" + v.firstRun(&res.Points[v.Chosen]),
		Intro: "The share of each class's arrivals in each " + format.Num(cfg.SeriesWindow()) + " ms window (by arrival) that were served within the deadline, per server; 100 where the class had no arrivals. Scored arrivals only."}
	sub := fmt.Sprintf("%s; first class solid, the others dashed", loadName(res, 0))
	o := newLine("Success per class over time", sub, "time (ms)", "success (%)", "value")
	o.YAxis[0].Max = floatPtr(100)
	if cfg.SLO != nil {
		target := cfg.SLO.SuccessPct
		o.addLine(fmt.Sprintf("SLO: %s ≥ %s%%", cfg.SLO.Class, format.Num(target)),
			[]Item{xy(0, target), xy(float64(windows*sw), target)},
			styled(referenceColor, dotted, plain)...)
	}
	for si, p := range peers {
		for k, cl := range cfg.Classes {
			if k >= len(p.Series.Classes) {
				continue
			}
			cs := &p.Series.Classes[k]
			data := make([]Item, 0, windows)
			for w := range windows {
				data = append(data, xy(float64(w*sw), cs.SuccessPct(w)))
			}
			lt := solid
			if k > 0 {
				lt = dashed
			}
			o.addLine(serverName(p)+" "+cl.Name, data, styled(palette[si%len(palette)], lt, steps)...)
		}
	}
	g.Charts = append(g.Charts, chart("chart-class-success", "Success per class over time", o))
	return g
}
