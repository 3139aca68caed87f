package charts

import (
	"fmt"
	"slices"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/experiments/simulate"
)

// The compare page's charts: several runs' measures overlaid against
// each swept parameter, one chart per measure, one line per run · limiter
// (· the other parameters' values when they vary): a run's lines share
// its color family, a limiter's share a line type; when a limiter of a
// run draws several lines (it sweeps two parameters), each line has its
// own shade of the run's color and its own point symbol.

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
var compareDashes = []seriesOption{solid, dashed, dotted, dash(12, 4, 3, 4), dash(16, 6), dash(3, 8)}

// dash draws a line in the dash pattern of its lengths in px.
func dash(lengths ...int) seriesOption {
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
	dashOf := map[string]seriesOption{}
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
			Intro: "Each run in its own color; each limiter (by name and type) in its own line type, the same in every run; a limiter drawing several lines (it sweeps two parameters) gives each its own shade of the run's color and its own point symbol."}
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
					lines := linesOf(byLimiter[li], r.Res.Config.Axes())
					for k, l := range lines {
						var data []Item
						for _, p := range l.Points {
							if y, ok := col.Value(p); ok {
								data = append(data, xy(p.SweptValue(), y))
							}
						}
						if len(data) > 0 {
							o.addLine(r.Label+" · "+l.Name, data, dots, symbolOf(k), lineType, colored(shade(color, k, len(lines))))
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

// compareSymbols tell a limiter's lines of one run apart, with shade.
var compareSymbols = []string{"circle", "rect", "triangle", "diamond", "roundRect", "pin", "arrow", "emptyCircle"}

// symbolOf marks line k of a limiter's lines with its own symbol.
func symbolOf(k int) seriesOption {
	return func(s *Series) { s.Symbol, s.SymbolSize = compareSymbols[k%len(compareSymbols)], 8 }
}

// shade is the k-th of n shades of color (#rrggbb): from darker (toward
// black) to lighter (toward white), the color itself when n is 1.
func shade(color string, k, n int) string {
	var r, g, b int
	if n <= 1 || len(color) != 7 {
		return color
	}
	if _, err := fmt.Sscanf(color, "#%02x%02x%02x", &r, &g, &b); err != nil {
		return color
	}
	// t runs from -0.45 (45% toward black) to +0.55 (55% toward white).
	t := -0.45 + float64(k%n)/float64(n-1)
	mix := func(c int) int {
		if t < 0 {
			return int(float64(c) * (1 + t))
		}
		return c + int(float64(255-c)*t)
	}
	return fmt.Sprintf("#%02x%02x%02x", mix(r), mix(g), mix(b))
}

// DiffTimeline is the decision diff's timeline: how many requests two
// points decide differently per window of arrival time, as bars.
func DiffTimeline(sum *simulate.DiffSummary) Chart {
	o := newLine("Disagreements over time", fmt.Sprintf("per %g ms of arrival time", sum.WindowMS), "arrival time (ms)", "requests decided differently", "value")
	data := make([]Item, len(sum.PerWindow))
	for i, k := range sum.PerWindow {
		data[i] = xy(float64(i)*sum.WindowMS, float64(k))
	}
	o.addLine("disagreements", data, colored(palette[2]), asBar)
	return chart("diff-timeline", "Disagreements per window of arrival time", o)
}

// AnswerCompare is the compare page's answers side by side: each run's
// best overall setting, and a row per setting (matched by limiter name
// and type and the setting's values, as the config diff matches
// limiters) with each run's numbers for it. Nil when no run has
// objectives.
type AnswerCompare struct {
	Runs []string
	// Best is each run's best overall setting ("" without objectives),
	// BestFeasible whether it meets every objective.
	Best         []string
	BestFeasible []bool
	Rows         []AnswerCompareRow
}

// AnswerCompareRow is one setting and each run's cell.
type AnswerCompareRow struct {
	Limiter, Setting string
	Cells            []AnswerCompareCell
}

// AnswerCompareCell is a setting in one run: absent, or its verdict
// ("best overall", "recommended", "meets every objective", "misses"),
// its worst goodput and margin, and each objective's worst value.
type AnswerCompareCell struct {
	Present  bool
	Verdict  string
	MeetsAll bool
	Lines    []string
}

// CompareAnswers puts the runs' answers side by side.
func CompareAnswers(runs []CompareRun) *AnswerCompare {
	out := &AnswerCompare{}
	index := map[string]int{}
	found := false
	for ri, r := range runs {
		out.Runs = append(out.Runs, r.Label)
		out.Best = append(out.Best, "")
		out.BestFeasible = append(out.BestFeasible, false)
		a := decide.Decide(r.Res)
		if a == nil {
			continue
		}
		found = true
		for si := range a.Settings {
			s := &a.Settings[si]
			key := s.Limiter + "\x00" + string(s.Type) + "\x00" + s.Name()
			row, ok := index[key]
			if !ok {
				row = len(out.Rows)
				index[key] = row
				out.Rows = append(out.Rows, AnswerCompareRow{Limiter: s.Limiter, Setting: s.Name()})
			}
			cells := out.Rows[row].Cells
			for len(cells) < len(runs) {
				cells = append(cells, AnswerCompareCell{})
			}
			out.Rows[row].Cells = cells
			cells[ri] = compareCell(a, s)
			if s.BestOverall || s.ClosestOverall {
				name := s.Limiter
				if n := s.Name(); n != "" {
					name += " " + n
				}
				out.Best[ri], out.BestFeasible[ri] = name, s.MeetsAll
			}
		}
	}
	if !found {
		return nil
	}
	for i := range out.Rows {
		for len(out.Rows[i].Cells) < len(runs) {
			out.Rows[i].Cells = append(out.Rows[i].Cells, AnswerCompareCell{})
		}
	}
	return out
}

// compareCell prints one setting of one run's answer.
func compareCell(a *decide.Answer, s *decide.Setting) AnswerCompareCell {
	c := AnswerCompareCell{Present: true, MeetsAll: s.MeetsAll}
	switch {
	case s.BestOverall && s.MeetsAll:
		c.Verdict = "best overall"
	case s.Recommended && s.MeetsAll:
		c.Verdict = "recommended"
	case s.MeetsAll:
		c.Verdict = "meets every objective"
	case !s.Complete:
		c.Verdict = "missing points"
	default:
		c.Verdict = "misses"
	}
	c.Lines = append(c.Lines, "worst goodput "+metricText("goodput_rps", s.WorstGoodputRPS)+" req/s")
	if s.HasMargin {
		c.Lines = append(c.Lines, "margin "+percent(s.Margin)+underText(a, s.BindingScenario))
	}
	for _, o := range s.Outcomes {
		if !o.HasValue {
			continue
		}
		mark := ""
		if !o.Pass {
			mark = " (misses)"
		}
		c.Lines = append(c.Lines, fmt.Sprintf("%s: worst %s%s", o.Objective, metricText(o.Objective.Metric, o.Measured), mark))
	}
	return c
}
