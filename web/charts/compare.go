package charts

import (
	"fmt"
	"slices"

	"github.com/ratelab/ratelab/experiments"
)

// The compare page's charts: several runs' measures overlaid against
// each swept parameter, one chart per measure, one line per run · limiter
// (· the other parameters' values when they vary): a run's lines share
// its color, a limiter's share a line type.

// CompareRun is one run of a comparison: a short label (its id) and its
// stored result.
type CompareRun struct {
	Label string
	Res   *experiments.Result
}

// CompareMetrics are the results columns the compare page overlays, each
// a chart (the column key names the unit).
var CompareMetrics = []string{"goodput_rps", "reject_pct", "sojourn_p99_ms", "gate_delay_p99_ms", "downstream_peak_rps", "rolling_max"}

// compareDashes tell the limiters apart: a limiter (by name and type)
// keeps its dash in every run, whatever its position in the run's config.
var compareDashes = []seriesOpt{solid, dashed, dotted, dash(12, 4, 3, 4), dash(16, 6), dash(3, 8)}

// dash draws a line in the dash pattern of its lengths in px.
func dash(lengths ...int) seriesOpt {
	return func(s *Series) { s.LineStyle = &LineStyle{Dash: lengths, Width: 2} }
}

// limiterKey is a point's limiter by name and type: how the compare page
// matches the limiters of two runs.
func limiterKey(p *experiments.Point) string { return p.Limiter + "\x00" + string(p.Type) }

// Compare groups the runs' charts by swept parameter ("" for points that
// sweep nothing: drawn at x = 0), in the order the runs first sweep them.
func Compare(runs []CompareRun) []*Group {
	var params []string
	for _, r := range runs {
		for i := range r.Res.Points {
			if s := r.Res.Points[i].Swept; !slices.Contains(params, s) {
				params = append(params, s)
			}
		}
	}
	// Each limiter's dash, in the order the runs first name them.
	dashOf := map[string]seriesOpt{}
	for _, r := range runs {
		for i := range r.Res.Points {
			if k := limiterKey(&r.Res.Points[i]); dashOf[k] == nil {
				dashOf[k] = compareDashes[len(dashOf)%len(compareDashes)]
			}
		}
	}
	var groups []*Group
	for gi, param := range params {
		title, xName := "Swept "+param, param
		if param == "" {
			title, xName = "Points that sweep nothing", "(one setting: x = 0)"
		}
		g := &Group{ID: fmt.Sprintf("compare-%d", gi+1), Title: title,
			Intro: "Each run in its own color; each limiter (by name and type) in its own line type, the same in every run."}
		for mi, key := range CompareMetrics {
			col := experiments.ColumnByKey(key)
			if col == nil {
				continue
			}
			o := newLine(key, "", xName, key, "value")
			o.keepX() // the swept values, as the configs give them
			o.measure(key)
			for ri, r := range runs {
				color := palette[ri%len(palette)]
				byLimiter := map[int][]*experiments.Point{}
				var order []int
				for i := range r.Res.Points {
					p := &r.Res.Points[i]
					if p.Swept != param {
						continue
					}
					if _, ok := byLimiter[p.LimiterIndex]; !ok {
						order = append(order, p.LimiterIndex)
					}
					byLimiter[p.LimiterIndex] = append(byLimiter[p.LimiterIndex], p)
				}
				for _, li := range order {
					lineType := dashOf[limiterKey(byLimiter[li][0])]
					for _, l := range linesOf(byLimiter[li], r.Res.Config.Axes()) {
						var data []Item
						for _, p := range l.Points {
							if y, ok := col.Value(p); ok {
								data = append(data, xy(p.SweptValue(), y))
							}
						}
						if len(data) > 0 {
							o.addLine(r.Label+" · "+l.Name, data, dots, lineType, colored(color))
						}
					}
				}
			}
			if len(o.Series) > 0 {
				g.Charts = append(g.Charts, chart(fmt.Sprintf("%s-%d", g.ID, mi+1), key+" against "+xName, o))
			}
		}
		if len(g.Charts) > 0 {
			groups = append(groups, g)
		}
	}
	return groups
}

// DiffTimeline is the decision diff's timeline: how many requests two
// points decide differently per window of arrival time, as bars.
func DiffTimeline(sum *experiments.DiffSummary) Chart {
	o := newLine("Disagreements over time", fmt.Sprintf("per %g ms of arrival time", sum.WindowMS), "arrival time (ms)", "requests decided differently", "value")
	data := make([]Item, len(sum.PerWindow))
	for i, k := range sum.PerWindow {
		data[i] = xy(float64(i)*sum.WindowMS, float64(k))
	}
	o.addLine("disagreements", data, colored(palette[2]), asBar)
	return chart("diff-timeline", "Disagreements per window of arrival time", o)
}
