package charts

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// Answer is the top of the run page for a config with objectives: per
// limiter, the setting the engine's rule (experiments/decide) recommends,
// or the closest point when none meets every objective.
type Answer struct {
	Objectives []string // "sojourn_p99_ms <= 200"
	Rows       []AnswerRow
}

// AnswerRow is one limiter's answer, every number printed.
type AnswerRow struct {
	Limiter  string
	Point    int
	Link     string // the run page showing the point's time series
	Setting  string // "rate_rps=100 burst=20", empty for a gate without parameters
	Goodput  string // "95.0 req/s"
	Feasible bool
	// Count is "3 of 15 points meet every objective".
	Count string
	// Binding is the binding objective and its margin, for a recommendation.
	Binding string
	// Misses are what the closest point fails, for no recommendation.
	Misses []string
	// Guarantee is the network-calculus bound beside the measurement:
	// "bound 210.0 ms, measured 200.0 ms (arrival to finish)".
	Guarantee string
}

// newAnswer prints the engine's answer; nil without objectives.
func newAnswer(res *experiments.Result, runID string) *Answer {
	a := decide.Decide(res)
	if a == nil {
		return nil
	}
	out := &Answer{}
	for _, o := range a.Objectives {
		out.Objectives = append(out.Objectives, o.String())
	}
	for _, ch := range a.Choices {
		if ch.Setting < 0 {
			continue // no setting of the limiter has a point in every scenario (a cancelled run)
		}
		p := &res.Points[ch.Point]
		row := AnswerRow{
			Limiter:  ch.Limiter,
			Point:    ch.Point,
			Link:     fmt.Sprintf("/runs/%s?point=%d#timeline", runID, ch.Point),
			Goodput:  metricText("goodput_rps", goodputOf(p)) + " req/s",
			Feasible: ch.Feasible > 0,
			Count:    fmt.Sprintf("%d of %d settings meet every objective in every scenario", ch.Feasible, ch.Settings),
		}
		if len(p.Params) > 0 {
			row.Setting = limiter.FormatParams(p.Type, p.Params)
		}
		if b := ch.Binding; b != nil {
			row.Binding = fmt.Sprintf("%s binds: measured %s%s, %s of the target to spare", b.Objective, metricText(b.Objective.Metric, b.Measured), intervalText(b), percent(b.Slack))
		}
		for _, m := range ch.Misses {
			if !m.HasValue {
				row.Misses = append(row.Misses, fmt.Sprintf("%s: no value at this point", m.Objective))
				continue
			}
			row.Misses = append(row.Misses, fmt.Sprintf("%s: measured %s%s, %s past the target", m.Objective, metricText(m.Objective.Metric, m.Measured), intervalText(&m), percent(-m.Slack)))
		}
		g := a.Settings[ch.Setting].Guarantee
		if g.Bounded {
			row.Guarantee = fmt.Sprintf("bound %s ms, %s %s ms (arrival to finish)", metricText("end_to_end_bound_ms", g.BoundMS), g.Label(), metricText("end_to_end_max_ms", g.MeasuredMS))
		} else {
			row.Guarantee = "no network-calculus bound: " + strings.TrimSpace(g.Note)
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// metricText prints a value in its results.csv format.
func metricText(key string, v float64) string {
	f := experiments.Fixed1
	if c := experiments.ColumnByKey(key); c != nil {
		f = c.Format
	}
	return string(experiments.AppendValue(nil, f, v))
}

// percent prints a relative slack as a percentage of the target.
func percent(x float64) string {
	return string(experiments.AppendValue(nil, experiments.Fixed1, x*100)) + "%"
}

// intervalText says, for a replicated run, that a check's measurement is
// the pessimistic end of its 95% interval: " (95% interval end; mean 180.0 ± 15.0)".
func intervalText(c *decide.Check) string {
	if !c.Interval {
		return ""
	}
	return fmt.Sprintf(" (end of the 95%% interval; mean %s ± %s)", metricText(c.Objective.Metric, c.Mean), metricText(c.Objective.Metric, c.HalfWidth))
}

// goodputOf is a point's goodput: its mean over replications.
func goodputOf(p *experiments.Point) float64 {
	if v, ok := keyed("goodput_rps")(p); ok {
		return v
	}
	return p.Metrics.GoodputRPS
}
