package charts

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/web/format"
)

// Answer is the top of the run page for a config with objectives: the
// best overall setting, then one row per limiter, each the setting the
// engine's rule (experiments/decide) recommends, or the closest one when
// none meets every objective in every scenario. Every number is printed
// here; the rule is the engine's.
type Answer struct {
	Objectives []string // "sojourn_p99_ms <= 200"
	// Tolerance is "within 1% of the best goodput"; Scenarios says what
	// the rule reads as scenarios ("loads and swept fields, seeds and
	// replications: 4 scenarios").
	Tolerance string
	Scenarios string
	// Best is the best overall setting (nil when no setting has a point in
	// every scenario); Rows are per limiter.
	Best *AnswerRow
	Rows []AnswerRow
	// Feasible is "3 of 12 settings meet every objective in every scenario".
	Feasible string
	// Alone and Conflict say, when no setting meets every objective, how
	// many settings meet each objective alone ("reject_pct <= 25: 4 of 12
	// settings") and the pair that never holds together.
	Alone    []string
	Conflict string
}

// AnswerRow is one setting of the answer, every number printed.
type AnswerRow struct {
	Limiter string
	// Setting is the setting in words ("rate_rps=200 burst=10", with its
	// server or client policy when those are chosen); empty for a gate
	// without parameters.
	Setting string
	// Point is the setting's point in its binding scenario (the one Deploy
	// and "Over time" show), Selected whether the page shows it.
	Point    int
	Selected bool
	// Goodput is the worst-scenario goodput ("178.8 req/s").
	Goodput  string
	Feasible bool
	// Count is "3 of 15 settings meet every objective in every scenario".
	Count string
	// Binding is the binding objective and scenario with the margin, for
	// a recommendation: "sojourn_p99_ms <= 150 binds under load bursty,
	// 12.0% to spare (worst 132.0)".
	Binding string
	// Misses are what a closest setting fails, at its worst values;
	// Missed the objectives it fails ("reject_pct <= 25, p99 <= 50").
	Misses []string
	Missed string
	// Alone and Conflict: the limiter's own counts and conflicting pair
	// when none of its settings meets every objective.
	Alone    []string
	Conflict string
	// Guarantee is the network-calculus bound beside the worst measured
	// value over the setting's scenarios and replications, labelled so:
	// "bound 210.0 ms; worst measured over 3 scenarios: 200.0 ms (arrival
	// to finish)".
	Guarantee string
}

// newAnswer prints the view's answer; nil without objectives.
func newAnswer(v *View) *Answer {
	a := v.Answer
	if a == nil {
		return nil
	}
	out := &Answer{
		Tolerance: "within " + format.Num(a.TolerancePct) + "% of the best goodput",
		Scenarios: scenarioText(a, v.Res.Config.Replications),
		Feasible:  fmt.Sprintf("%d of %d settings meet every objective in every scenario", a.Feasible, len(a.Settings)),
	}
	for _, o := range a.Objectives {
		out.Objectives = append(out.Objectives, o.String())
	}
	if a.Best >= 0 {
		row := answerRow(v, a, &a.Settings[a.Best], RecommendedPoint(a), a.Feasible > 0)
		out.Best = &row
	}
	if a.Feasible == 0 {
		out.Alone, out.Conflict = aloneText(a, a.MeetAlone, a.Conflict, len(a.Settings))
	}
	for _, ch := range a.Choices {
		if ch.Setting < 0 {
			continue // no setting of the limiter has a point in every scenario (a cancelled run)
		}
		row := answerRow(v, a, &a.Settings[ch.Setting], ch.Point, ch.Feasible > 0)
		row.Count = fmt.Sprintf("%d of %d settings meet every objective in every scenario", ch.Feasible, ch.Settings)
		if ch.Feasible == 0 {
			row.Alone, row.Conflict = aloneText(a, ch.MeetAlone, ch.Conflict, ch.Settings)
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// answerRow prints one setting: recommended (feasible) or closest.
func answerRow(v *View, a *decide.Answer, s *decide.Setting, point int, feasible bool) AnswerRow {
	row := AnswerRow{
		Limiter:  s.Limiter,
		Setting:  s.Name(),
		Point:    point,
		Selected: point == v.Chosen,
		Goodput:  metricText("goodput_rps", s.WorstGoodputRPS) + " req/s",
		Feasible: feasible,
	}
	if feasible {
		if s.Binding >= 0 {
			o := &s.Outcomes[s.Binding]
			row.Binding = fmt.Sprintf("%s binds%s, %s to spare (worst %s%s)", o.Objective, underText(a, o.Scenario), percent(o.Slack),
				metricText(o.Objective.Metric, o.Measured), intervalText(&o.Check))
		} else {
			row.Binding = "every objective has target 0: none binds by a relative margin"
		}
	} else {
		row.Missed = strings.Join(missedObjectives(s), ", ")
		for _, o := range s.Outcomes {
			switch {
			case o.Pass:
			case !o.HasValue:
				row.Misses = append(row.Misses, fmt.Sprintf("%s: no value%s", o.Objective, underText(a, o.Scenario)))
			case o.Zero():
				row.Misses = append(row.Misses, fmt.Sprintf("%s: worst %s%s%s", o.Objective, metricText(o.Objective.Metric, o.Measured), intervalText(&o.Check), underText(a, o.Scenario)))
			default:
				row.Misses = append(row.Misses, fmt.Sprintf("%s: worst %s%s%s, %s past the target", o.Objective, metricText(o.Objective.Metric, o.Measured), intervalText(&o.Check), underText(a, o.Scenario), percent(-o.Slack)))
			}
		}
	}
	g := &s.Guarantee
	if g.Bounded {
		row.Guarantee = fmt.Sprintf("bound %s ms; %s: %s ms (arrival to finish)", metricText("end_to_end_bound_ms", g.BoundMS), g.Label(), metricText("end_to_end_max_ms", g.MeasuredMS))
	} else {
		row.Guarantee = "no network-calculus bound: " + strings.TrimSpace(g.Note)
		if g.Runs > 0 {
			row.Guarantee += fmt.Sprintf("; %s: %s ms (arrival to finish)", g.Label(), metricText("end_to_end_max_ms", g.MeasuredMS))
		}
	}
	return row
}

// underText names a scenario: " under load bursty, seed 3"; "" for a
// sweep with one scenario.
func underText(a *decide.Answer, scenario int) string {
	if scenario < 0 || scenario >= len(a.Scenarios) || len(a.Scenarios) < 2 {
		return ""
	}
	if name := a.Scenarios[scenario].Name(); name != "" {
		return " under " + name
	}
	return ""
}

// scenarioText says what the rule reads as scenarios, by the axes the
// sweep varies among them, and how many there are: "4 scenarios (what you
// don't choose: 2 loads × 2 seeds, each 5 replications)". Replications
// count as one scenario.
func scenarioText(a *decide.Answer, replications int) string {
	reps := ""
	if replications > 1 {
		reps = fmt.Sprintf(", each %d replications judged as one", replications)
	}
	n := len(a.Scenarios)
	if n <= 1 {
		return "one scenario (the sweep varies nothing you don't choose" + reps + ")"
	}
	var axes []string
	values := map[string]map[string]bool{}
	for _, sc := range a.Scenarios {
		for _, p := range sc.Parts {
			if values[p.Axis] == nil {
				values[p.Axis] = map[string]bool{}
				axes = append(axes, p.Axis)
			}
			values[p.Axis][p.Value] = true
		}
	}
	var varied []string
	for _, axis := range axes {
		if k := len(values[axis]); k > 1 {
			varied = append(varied, fmt.Sprintf("%d %s", k, axisPlural(axis)))
		}
	}
	return fmt.Sprintf("%d scenarios (what you don't choose: %s%s)", n, strings.Join(varied, " × "), reps)
}

// axisPlural names a scenario axis (decide.ScenarioPart.Axis) in the
// plural: "loads", "seeds", "values of server.workers".
func axisPlural(axis string) string {
	switch axis {
	case "load":
		return "loads"
	case "server":
		return "servers"
	case "policy":
		return "client policies"
	case "seed":
		return "seeds"
	}
	return "values of " + axis
}

// aloneText prints how many of n settings meet each objective alone and
// the conflicting pair.
func aloneText(a *decide.Answer, alone []int, c *decide.Conflict, n int) ([]string, string) {
	var out []string
	for j, k := range alone {
		if j < len(a.Objectives) {
			out = append(out, fmt.Sprintf("%s: met alone by %d of %d settings", a.Objectives[j], k, n))
		}
	}
	conflict := ""
	if c != nil {
		conflict = fmt.Sprintf("%s and %s never hold together; each alone does", a.Objectives[c.A], a.Objectives[c.B])
	}
	return out, conflict
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
// the pessimistic end of its 95% interval: " (end of the 95% interval;
// mean 180.0 ± 15.0)".
func intervalText(c *decide.Check) string {
	if !c.Interval {
		return ""
	}
	return fmt.Sprintf(" (end of the 95%% interval; mean %s ± %s)", metricText(c.Objective.Metric, c.Mean), metricText(c.Objective.Metric, c.HalfWidth))
}

// SettingMark is what the answer makes of a setting, as the settings
// table and the Deploy menu mark it: "best overall", "recommended" (its
// limiter's), for the closest setting of a limiter (or of the sweep) with
// nothing feasible "closest (misses reject_pct <= 25)", "missing points"
// for one the run cut short, else "". A setting missing an objective is
// never "recommended".
func SettingMark(s *decide.Setting) string {
	limiterClosest, overallClosest := closestOf(s)
	switch {
	case s.MeetsAll && s.BestOverall:
		return "best overall"
	case s.MeetsAll && s.Recommended:
		return "recommended"
	case limiterClosest || overallClosest:
		mark := "closest"
		if overallClosest {
			mark = "closest overall"
		}
		return mark + " (misses " + strings.Join(missedObjectives(s), ", ") + ")"
	case !s.Complete:
		return "missing points"
	}
	return ""
}

// missedObjectives are the objectives s fails in some scenario.
func missedObjectives(s *decide.Setting) []string {
	var out []string
	for _, o := range s.Outcomes {
		if !o.Pass {
			out = append(out, o.Objective.String())
		}
	}
	return out
}

// closestOf reports whether s is its limiter's closest setting and the
// sweep's, with nothing feasible there.
func closestOf(s *decide.Setting) (limiterClosest, overallClosest bool) {
	return s.Closest, s.ClosestOverall
}

// PointMarks are SettingMark of each point's setting, by point; nil
// without objectives.
func PointMarks(a *decide.Answer) []string {
	if a == nil {
		return nil
	}
	out := make([]string, len(a.SettingOf))
	for i, si := range a.SettingOf {
		out[i] = SettingMark(&a.Settings[si])
	}
	return out
}

// DeployNote says what the answer makes of point i, for Deploy: the best
// overall or a limiter's recommended setting, one that meets every
// objective, or (warn) what its setting misses and which point is
// recommended instead; "" without objectives.
func DeployNote(v *View, i int) (note string, warn bool) {
	a := v.Answer
	if a == nil || i < 0 || i >= len(a.SettingOf) {
		return "", false
	}
	s := &a.Settings[a.SettingOf[i]]
	where := ""
	if name := a.Scenarios[a.ScenarioOf[i]].Name(); name != "" && len(a.Scenarios) > 1 {
		where = " (shown under " + name + ")"
	}
	switch {
	case s.MeetsAll && s.BestOverall:
		return "This is the best overall setting: it meets every objective in every scenario" + where + ".", false
	case s.MeetsAll && s.Recommended:
		return "This is " + s.Limiter + "'s recommended setting: it meets every objective in every scenario" + where + ".", false
	case s.MeetsAll:
		return "This setting meets every objective in every scenario" + where + "; the answer above recommends another.", false
	}
	var misses []string
	for _, o := range s.Outcomes {
		if o.Pass {
			continue
		}
		if !o.HasValue {
			misses = append(misses, o.Objective.String()+" (no value"+underText(a, o.Scenario)+")")
			continue
		}
		misses = append(misses, fmt.Sprintf("%s (worst %s%s)", o.Objective, metricText(o.Objective.Metric, o.Measured), underText(a, o.Scenario)))
	}
	note = "This setting misses " + strings.Join(misses, ", ")
	if !s.Complete {
		note = "This setting has no point in some scenario (the run was cut short)"
	}
	if p := RecommendedPoint(a); p >= 0 && a.Feasible > 0 {
		note += fmt.Sprintf("; the recommended setting is point %d", p)
	}
	return note + ".", true
}
