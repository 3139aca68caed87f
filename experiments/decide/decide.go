// Package decide turns a sweep's results and its config's objectives into
// the answer: the settings that meet every objective under every
// scenario, the setting to deploy per limiter and overall, the objective
// and the scenario that bind it and by how much, and, when no setting
// meets every objective, the setting that comes closest, what it misses
// and which objectives conflict. It is pure: a stored Result in, an Answer
// out.
//
// The rule (docs/web.md gives it in the same words):
//
//   - A setting is what the engineer chooses: one limiter entry with one
//     value for each of its swept parameters, together with the server and
//     the client policy it runs with when the sweep lists several (servers,
//     policies: alternatives to pick among). A scenario is what the
//     engineer does not choose: loads, swept workload or server fields,
//     seeds, a limiter's scaling events (scale_at_ms, scale_to: its
//     instances change at a time; its instances, balancer and sharing
//     are the setting's). Replications of one scenario count as one scenario, judged on
//     the pessimistic end of their 95% interval (the upper end for <= and
//     <, the lower end for >= and >). The config's decision.scenarios
//     overrides the default (Config.Scenario): the axes that are scenarios
//     among loads, servers, policies and fields; seeds and replications
//     always are.
//   - A setting meets an objective when it passes in every scenario. Its
//     worst value for a metric is the worst over scenarios in the
//     objective's direction.
//   - Its margin on an objective with target v ≠ 0 is the smallest over
//     scenarios of (v − measured)/|v| for <= and <, (measured − v)/|v| for
//     >= and >. An objective with target 0 has no relative margin: it
//     decides feasibility and breaks the last ties by its absolute slack.
//     The setting's margin is its smallest margin over objectives; the
//     binding objective and scenario are where it is reached (never a
//     zero-target objective). A setting with no value in some scenario (a
//     cancelled run's missing points) is never recommended.
//   - Recommended setting per limiter: among the settings meeting every
//     objective, G* is the highest worst-scenario goodput (a replicated
//     scenario's goodput is its mean); among those whose worst-scenario
//     goodput is at least (1 − tol/100)·G* (tol: the config's
//     decision.goodput_tolerance_pct, default 1), the one with the largest
//     margin; then the largest absolute slack on the zero-target
//     objectives (in the objectives' order); then the less permissive
//     setting, parameter by parameter in the registry row's order, each
//     parameter's row saying which way admits more (limiter.Param.Admits;
//     parameters admitting more neither way are skipped); then the earlier
//     point.
//   - Best overall: the same rule over every limiter's settings at once;
//     permissiveness compares settings of one limiter only, across limiters
//     the config's order decides.
//   - With no setting meeting every objective: the closest setting (the
//     fewest objectives without a value in some scenario — no bound, never
//     recovered: a missing value is a miss worse than any measured one —,
//     then the fewest objectives missed in any one scenario, then the smallest sum
//     of relative violations at its worst values, then the higher
//     worst-scenario goodput, the less permissive setting and the earlier
//     point), how many settings meet each objective alone, and, when each
//     objective alone is met by some setting, the first pair of objectives
//     that no setting meets together.
//   - Guarantee: the network-calculus bound (the largest over the setting's
//     scenarios) beside the worst measured end-to-end time over its
//     scenarios and replications.
package decide

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// Check is one objective at one point (one scenario of a setting).
type Check struct {
	Objective experiments.Objective
	// Measured is the point's value (HasValue false: the point has none):
	// with replications, the pessimistic end of its interval.
	Measured float64
	HasValue bool
	// Mean and HalfWidth are the replications' mean and 95% half-width
	// when Interval (Measured is then Mean ± HalfWidth).
	Mean, HalfWidth float64
	Interval        bool
	Pass            bool
	// Slack is the margin: relative, (target - measured)/|target| for <=
	// and <, (measured - target)/|target| for >= and >, positive inside the
	// target; absolute (target - measured, or measured - target) for a
	// target of 0 (Zero). 0 without a value.
	Slack float64
}

// Zero reports whether the check's objective has target 0: its slack is
// absolute, it never binds and never counts in a margin.
func (c *Check) Zero() bool { return c.Objective.Value == 0 }

// Verdict is every objective at one point.
type Verdict struct {
	Point    int // index into Result.Points
	Checks   []Check
	MeetsAll bool
}

// Evaluate checks every objective at a point, the metrics among
// experiments.Columns (EvaluateIn reads a config's own columns too).
func Evaluate(objs []experiments.Objective, p *experiments.Point) Verdict {
	return EvaluateIn(nil, objs, p)
}

// EvaluateIn checks every objective at a point of a sweep of cfg, whose
// objectives may name its own results.csv columns (Config.ObjectiveColumn:
// a class's success_pct, the queue and client models' outcomes).
func EvaluateIn(cfg *experiments.Config, objs []experiments.Objective, p *experiments.Point) Verdict {
	return evaluate(objs, columnsOf(cfg, objs), p)
}

// columnsOf are the objectives' columns (nil for a metric that is none).
func columnsOf(cfg *experiments.Config, objs []experiments.Objective) []*experiments.Column {
	cols := make([]*experiments.Column, len(objs))
	for j, o := range objs {
		if cfg != nil {
			cols[j] = cfg.ObjectiveColumn(o.Metric)
		} else {
			cols[j] = experiments.ColumnByKey(o.Metric)
		}
	}
	return cols
}

func evaluate(objs []experiments.Objective, cols []*experiments.Column, p *experiments.Point) Verdict {
	v := Verdict{Point: p.Index, MeetsAll: true}
	for j, o := range objs {
		c := Check{Objective: o}
		if col := cols[j]; col != nil && col.Value != nil {
			c.Measured, c.HasValue = col.Value(p)
		}
		if st, ok := p.Stat(o.Metric); ok && st.N > 1 {
			c.Mean, c.HalfWidth, c.Interval = st.Mean, st.HalfWidth, true
			c.Measured = st.Mean - st.HalfWidth
			if o.Upper() {
				c.Measured = st.Mean + st.HalfWidth
			}
		}
		if c.HasValue {
			c.Slack = slack(o, c.Measured)
			c.Pass = c.Slack > 0 || (c.Slack == 0 && !o.Strict())
		}
		v.MeetsAll = v.MeetsAll && c.Pass
		v.Checks = append(v.Checks, c)
	}
	return v
}

func slack(o experiments.Objective, measured float64) float64 {
	d := o.Value - measured
	if !o.Upper() {
		d = -d
	}
	if den := math.Abs(o.Value); den > 0 {
		return d / den
	}
	return d
}

// Misses are the checks a point fails.
func (v *Verdict) Misses() []Check {
	var out []Check
	for _, c := range v.Checks {
		if !c.Pass {
			out = append(out, c)
		}
	}
	return out
}

// ScenarioPart is one axis of a scenario or of a setting beyond the
// limiter's parameters: Axis is "load", "server", "policy", a swept
// field's config path ("workload.parts[0].rate_rps") or "seed"; Value is
// the name or the number.
type ScenarioPart struct {
	Axis  string `json:"axis"`
	Value string `json:"value"`
}

// String prints the part as "load bursty" or "server.workers 4".
func (p ScenarioPart) String() string { return p.Axis + " " + p.Value }

// Scenario is one combination of the scenario axes.
type Scenario struct {
	Index int            `json:"index"`
	Parts []ScenarioPart `json:"parts,omitempty"`
}

// Name is the scenario in words, "load bursty, seed 3"; "" for the only
// scenario of a sweep without scenario axes.
func (s *Scenario) Name() string { return joinParts(s.Parts) }

func joinParts(parts []ScenarioPart) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Outcome is one objective over a setting's scenarios.
type Outcome struct {
	// Check is the objective in the setting's worst scenario for it:
	// Measured is the worst value, Slack the smallest over the scenarios
	// (the margin on it), Pass whether it passes in every scenario.
	Check
	// Scenario is the worst scenario (an index into Answer.Scenarios; -1
	// when the setting has no point at all).
	Scenario int
	// Met counts the scenarios it passes in.
	Met int
}

// Setting is one choice: a limiter entry at one value of each swept
// parameter, with the server, client policy and swept fields that are not
// scenarios. Its numbers are over its scenarios.
type Setting struct {
	Index        int // in Answer.Settings
	LimiterIndex int
	Limiter      string
	Type         limiter.Type
	Params       limiter.Params
	// Parts are the setting's axes beyond the limiter (a server, a policy,
	// a swept field chosen rather than suffered), in sweep order.
	Parts []ScenarioPart
	// Points are the setting's point in each scenario: an index into
	// Result.Points per Answer.Scenarios, -1 where it has none.
	Points []int
	// Complete: a point in every scenario (else it is never recommended).
	Complete bool
	// Outcomes are per objective, in the config's order.
	Outcomes []Outcome
	// MeetsAll: complete and meeting every objective in every scenario.
	MeetsAll bool
	// WorstGoodputRPS is the lowest goodput over its scenarios (a
	// replicated scenario's mean).
	WorstGoodputRPS float64
	// Margin is the smallest margin over the objectives with a target
	// other than 0 (HasMargin false when there is none); Binding (an index
	// into Objectives) and BindingScenario (into Answer.Scenarios) are
	// where it is reached, -1 without a margin.
	Margin          float64
	HasMargin       bool
	Binding         int
	BindingScenario int
	// Unmeasured counts the objectives without a value in some scenario
	// (no bound, never recovered: a miss worse than any measured one);
	// Missed is the most objectives the setting misses in one scenario
	// (those without a value among them); Violation the sum of the
	// relative violations at its measured worst values.
	Unmeasured int
	Missed     int
	Violation  float64
	// Recommended: the limiter's recommended setting; BestOverall: the
	// sweep's. Both only for a setting meeting every objective.
	Recommended bool
	BestOverall bool
	// Closest: the limiter's closest setting when none of its settings
	// meets every objective; ClosestOverall: the sweep's closest when no
	// setting does.
	Closest        bool
	ClosestOverall bool
	Guarantee      Guarantee
}

// Name is the setting in words: "rate_rps=200 burst=10, server fifo".
func (s *Setting) Name() string {
	name := limiter.FormatParams(s.Type, s.Params)
	if len(s.Parts) > 0 {
		if name != "" {
			name += ", "
		}
		name += joinParts(s.Parts)
	}
	return name
}

// Point is the setting's point in scenario i (-1 without one), or for
// i < 0 in the scenario that represents it (ShownScenario).
func (s *Setting) Point(i int) int {
	if i < 0 {
		i = s.ShownScenario()
	}
	if i >= 0 && i < len(s.Points) {
		return s.Points[i]
	}
	return -1
}

// ShownScenario is the scenario that represents the setting (what Deploy
// and "Over time" open on): for a setting missing an objective, the
// scenario of its worst value of the most violated one (WorstMiss); else
// its binding scenario; else its first scenario with a point (-1 with
// none).
func (s *Setting) ShownScenario() int {
	if j := s.WorstMiss(); j >= 0 && s.Outcomes[j].Scenario >= 0 {
		return s.Outcomes[j].Scenario
	}
	if s.BindingScenario >= 0 {
		return s.BindingScenario
	}
	for k, p := range s.Points {
		if p >= 0 {
			return k
		}
	}
	return -1
}

// WorstMiss is the most violated objective the setting misses (an index
// into its Outcomes; -1 when it misses none): one without a value first
// (no bound, never recovered), then the largest relative violation, then
// the largest absolute violation of a target of 0; the first in the
// objectives' order on a tie.
func (s *Setting) WorstMiss() int {
	best, bestClass, bestBy := -1, -1, 0.0
	for j := range s.Outcomes {
		o := &s.Outcomes[j]
		if o.Pass || o.Scenario < 0 {
			continue
		}
		class, by := 0, -o.Slack
		switch {
		case !o.HasValue:
			class, by = 2, 0
		case !o.Zero():
			class = 1
		}
		if class > bestClass || class == bestClass && by > bestBy {
			best, bestClass, bestBy = j, class, by
		}
	}
	return best
}

// Choice is the answer for one limiter.
type Choice struct {
	LimiterIndex int
	Limiter      string
	Type         limiter.Type
	// Settings counts the limiter's settings, Feasible those meeting every
	// objective; Points counts its points.
	Settings int
	Feasible int
	Points   int
	// Setting is the recommended setting (Feasible > 0) or the closest one
	// (an index into Answer.Settings; -1 when no setting of the limiter is
	// complete).
	Setting int
	// Point is the setting's point in the scenario that represents it
	// (Setting.ShownScenario: its binding scenario; for a closest setting,
	// where its most violated objective is worst), Verdict that point's
	// verdict.
	Point   int
	Verdict Verdict
	// Binding is the recommendation's binding objective over its
	// scenarios (Outcome.Check: worst value and margin; nil when nothing is
	// feasible or no objective has a target other than 0).
	Binding *Check
	// Misses are what the closest setting fails, at its worst values, the
	// most violated first (Setting.WorstMiss: the one Point shows), then
	// in the objectives' order (empty for a recommendation).
	Misses []Check
	// MeetAlone counts, per objective, the limiter's settings meeting it.
	MeetAlone []int
	// Conflict is the first pair of objectives none of the limiter's
	// settings meets together though each alone is met (nil otherwise).
	Conflict *Conflict
}

// Conflict is two objectives (indexes into Objectives) that never hold
// together although each alone does.
type Conflict struct{ A, B int }

// Answer is the sweep's answer to its objectives.
type Answer struct {
	Objectives []experiments.Objective
	// TolerancePct is decision.goodput_tolerance_pct; ScenarioAxes the
	// axes read as scenarios (decision.scenarios).
	TolerancePct float64
	ScenarioAxes []string
	Verdicts     []Verdict // per point, in point order
	// SettingOf and ScenarioOf are each point's setting and scenario
	// (indexes into Settings and Scenarios), in point order.
	SettingOf  []int
	ScenarioOf []int
	Scenarios  []Scenario
	Settings   []Setting // in sweep order
	Choices    []Choice  // per limiter, in the config's order
	// Best is the best overall setting (an index into Settings, -1 when no
	// setting is complete); Feasible counts the settings meeting every
	// objective (Best is the closest when 0).
	Best     int
	Feasible int
	// MeetAlone and Conflict are Choice's over every setting.
	MeetAlone []int
	Conflict  *Conflict
}

// Decide answers res's config's objectives; nil when it has none.
func Decide(res *experiments.Result) *Answer {
	if res == nil || res.Config == nil || len(res.Config.Objectives) == 0 {
		return nil
	}
	cfg := res.Config
	objs := cfg.Objectives
	a := &Answer{Objectives: objs, TolerancePct: cfg.GoodputTolerancePct(), Verdicts: make([]Verdict, len(res.Points)), Best: -1}
	for _, axis := range experiments.ScenarioAxes() {
		if cfg.Scenario(axis) {
			a.ScenarioAxes = append(a.ScenarioAxes, axis)
		}
	}
	cols := columnsOf(cfg, objs)
	for i := range res.Points {
		a.Verdicts[i] = evaluate(objs, cols, &res.Points[i])
	}
	a.group(res)
	replicas := map[int][]int{} // a point's runs in Result.Replicas, by its index
	for i := range res.Replicas {
		replicas[res.Replicas[i].Index] = append(replicas[res.Replicas[i].Index], i)
	}
	for i := range a.Settings {
		a.settle(res, &a.Settings[i], replicas)
	}
	for li := range cfg.Limiters {
		var pool []int
		points := 0
		for i := range a.Settings {
			if a.Settings[i].LimiterIndex == li {
				pool = append(pool, i)
			}
		}
		for i := range res.Points {
			if res.Points[i].LimiterIndex == li {
				points++
			}
		}
		if len(pool) == 0 {
			continue
		}
		s0 := &a.Settings[pool[0]]
		ch := Choice{LimiterIndex: li, Limiter: s0.Limiter, Type: s0.Type, Settings: len(pool), Points: points, Point: -1}
		ch.Setting, ch.Feasible = a.choose(cfg, pool)
		ch.MeetAlone, ch.Conflict = a.alone(pool)
		if ch.Setting >= 0 {
			s := &a.Settings[ch.Setting]
			s.Recommended, s.Closest = ch.Feasible > 0, ch.Feasible == 0
			ch.Point = a.pointOf(s)
			ch.Verdict = a.Verdicts[ch.Point]
			if ch.Feasible > 0 {
				if s.Binding >= 0 {
					ch.Binding = &s.Outcomes[s.Binding].Check
				}
			} else {
				w := s.WorstMiss()
				if w >= 0 {
					ch.Misses = append(ch.Misses, s.Outcomes[w].Check)
				}
				for j, o := range s.Outcomes {
					if !o.Pass && j != w {
						ch.Misses = append(ch.Misses, o.Check)
					}
				}
			}
		}
		a.Choices = append(a.Choices, ch)
	}
	all := make([]int, len(a.Settings))
	for i := range all {
		all[i] = i
	}
	a.Best, a.Feasible = a.choose(cfg, all)
	if a.Best >= 0 {
		s := &a.Settings[a.Best]
		s.BestOverall, s.ClosestOverall = a.Feasible > 0, a.Feasible == 0
	}
	a.MeetAlone, a.Conflict = a.alone(all)
	return a
}

// pointOf is the point a choice shows: the setting's in the scenario
// that represents it (Setting.ShownScenario).
func (a *Answer) pointOf(s *Setting) int {
	return s.Point(-1)
}

// group sorts the points into settings and scenarios.
func (a *Answer) group(res *experiments.Result) {
	cfg := res.Config
	axes := cfg.Axes()
	settingOf := map[string]int{}
	scenarioOf := map[string]int{}
	type cell struct{ setting, scenario, point int }
	cells := make([]cell, 0, len(res.Points))
	for i := range res.Points {
		p := &res.Points[i]
		setParts, scenParts := splitParts(cfg, axes, p)
		sk := settingKey(p, setParts)
		si, ok := settingOf[sk]
		if !ok {
			si = len(a.Settings)
			settingOf[sk] = si
			a.Settings = append(a.Settings, Setting{Index: si, LimiterIndex: p.LimiterIndex, Limiter: p.Limiter, Type: p.Type,
				Params: choiceParams(p.Params), Parts: setParts, Binding: -1, BindingScenario: -1})
		}
		ck := partsKey(scenParts)
		ci, ok := scenarioOf[ck]
		if !ok {
			ci = len(a.Scenarios)
			scenarioOf[ck] = ci
			a.Scenarios = append(a.Scenarios, Scenario{Index: ci, Parts: scenParts})
		}
		cells = append(cells, cell{si, ci, i})
	}
	// A cancelled sweep's missing points: its settings and scenarios exist
	// all the same (Config.Points lists them), without points.
	if res.Partial != nil {
		for _, q := range cfg.Points() {
			setParts, scenParts := splitParts(cfg, axes, &q)
			sk := settingKey(&q, setParts)
			if !has(settingOf, sk) {
				si := len(a.Settings)
				settingOf[sk] = si
				a.Settings = append(a.Settings, Setting{Index: si, LimiterIndex: q.LimiterIndex, Limiter: q.Limiter, Type: q.Type,
					Params: choiceParams(q.Params), Parts: setParts, Binding: -1, BindingScenario: -1})
			}
			if ck := partsKey(scenParts); !has(scenarioOf, ck) {
				scenarioOf[ck] = len(a.Scenarios)
				a.Scenarios = append(a.Scenarios, Scenario{Index: len(a.Scenarios), Parts: scenParts})
			}
		}
	}
	for i := range a.Settings {
		s := &a.Settings[i]
		s.Points = make([]int, len(a.Scenarios))
		for k := range s.Points {
			s.Points[k] = -1
		}
	}
	a.SettingOf, a.ScenarioOf = make([]int, len(res.Points)), make([]int, len(res.Points))
	for _, c := range cells {
		if s := &a.Settings[c.setting]; s.Points[c.scenario] < 0 {
			s.Points[c.scenario] = c.point
		}
		a.SettingOf[c.point], a.ScenarioOf[c.point] = c.setting, c.scenario
	}
}

// splitParts sorts a point's axes beyond its limiter into the setting's
// and the scenario's, in sweep order: server, swept server fields, policy,
// load, swept workload fields, seed.
func splitParts(cfg *experiments.Config, axes []experiments.Axis, p *experiments.Point) (setting, scenario []ScenarioPart) {
	add := func(isScenario bool, part ScenarioPart) {
		if isScenario {
			scenario = append(scenario, part)
		} else {
			setting = append(setting, part)
		}
	}
	fields := cfg.Scenario(experiments.ScenarioFields)
	if len(cfg.Servers) > 1 || p.ServerName != "" {
		add(cfg.Scenario(experiments.ScenarioServers), ScenarioPart{"server", nameOr(p.ServerName, p.Server)})
	}
	field := func(server bool) {
		for i, ax := range axes {
			if ax.Part == experiments.AxisSeed || (ax.Part == experiments.AxisServer) != server {
				continue
			}
			if v, ok := p.AxisValue(i); ok {
				add(fields, ScenarioPart{ax.Path, strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	field(true)
	if len(cfg.Policies) > 1 || p.PolicyName != "" {
		add(cfg.Scenario(experiments.ScenarioPolicies), ScenarioPart{"policy", nameOr(p.PolicyName, p.Policy)})
	}
	if len(cfg.Loads) > 1 || p.LoadName != "" {
		add(cfg.Scenario(experiments.ScenarioLoads), ScenarioPart{"load", nameOr(p.LoadName, p.Load)})
	}
	field(false)
	for _, q := range limiter.ReplicaParams() { // a limiter's scaling event
		if v, ok := p.Params[q.Name]; ok && limiter.IsScenario(q.Name) {
			add(true, ScenarioPart{q.Name, strconv.FormatFloat(v, 'g', -1, 64)})
		}
	}
	if p.Seed != "" {
		add(true, ScenarioPart{"seed", p.Seed})
	}
	return setting, scenario
}

// choiceParams are a point's parameters that its setting chooses: all
// but a scaling event's (limiter.IsScenario), which are its scenario's.
func choiceParams(p limiter.Params) limiter.Params {
	for n := range p {
		if limiter.IsScenario(n) {
			out := limiter.Params{}
			for n, v := range p {
				if !limiter.IsScenario(n) {
					out[n] = v
				}
			}
			return out
		}
	}
	return p
}

func has(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

func nameOr(name string, i int) string {
	if name != "" {
		return name
	}
	return strconv.Itoa(i)
}

func partsKey(parts []ScenarioPart) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Axis)
		b.WriteByte(0)
		b.WriteString(p.Value)
		b.WriteByte(0)
	}
	return b.String()
}

func settingKey(p *experiments.Point, parts []ScenarioPart) string {
	names := make([]string, 0, len(p.Params))
	for n := range p.Params {
		if !limiter.IsScenario(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	b := []byte(strconv.Itoa(p.LimiterIndex))
	for _, n := range names {
		b = append(b, 0)
		b = append(b, n...)
		b = append(b, '=')
		b = strconv.AppendFloat(b, p.Params[n], 'g', -1, 64)
	}
	return string(b) + "\x01" + partsKey(parts)
}

// settle computes a setting's outcomes, margin, binding, goodput,
// closeness and guarantee over its scenarios.
func (a *Answer) settle(res *experiments.Result, s *Setting, replicas map[int][]int) {
	s.Complete = !slices.Contains(s.Points, -1)
	s.MeetsAll = s.Complete
	s.WorstGoodputRPS = math.Inf(1)
	s.Outcomes = make([]Outcome, len(a.Objectives))
	for j := range s.Outcomes {
		s.Outcomes[j] = Outcome{Check: Check{Objective: a.Objectives[j]}, Scenario: -1}
	}
	for k, pi := range s.Points {
		if pi < 0 {
			continue
		}
		s.WorstGoodputRPS = min(s.WorstGoodputRPS, goodput(&res.Points[pi]))
		v := &a.Verdicts[pi]
		missed := 0
		for j, c := range v.Checks {
			o := &s.Outcomes[j]
			if c.Pass {
				o.Met++
			} else {
				missed++
			}
			if o.Scenario < 0 || worse(&c, &o.Check) {
				o.Check, o.Scenario = c, k
			}
		}
		s.Missed = max(s.Missed, missed)
	}
	if math.IsInf(s.WorstGoodputRPS, 1) {
		s.WorstGoodputRPS = 0
	}
	for j := range s.Outcomes {
		o := &s.Outcomes[j]
		s.MeetsAll = s.MeetsAll && o.Pass
		if o.Scenario >= 0 && !o.HasValue {
			s.Unmeasured++
		}
		if o.HasValue && !o.Pass {
			s.Violation += max(-o.Slack, 0)
		}
		if o.Scenario >= 0 && !o.Zero() && o.HasValue && (!s.HasMargin || o.Slack < s.Margin) {
			s.Margin, s.HasMargin, s.Binding, s.BindingScenario = o.Slack, true, j, o.Scenario
		}
	}
	s.Guarantee = guaranteeOf(res, s, replicas)
}

// worse reports whether check c is worse than w: no value is the worst,
// then the smaller slack.
func worse(c, w *Check) bool {
	if c.HasValue != w.HasValue {
		return !c.HasValue
	}
	return c.HasValue && c.Slack < w.Slack
}

// choose picks among the settings pool (indexes into Settings) the
// recommended one, or with none feasible the closest; -1 when no setting
// of the pool is complete. feasible counts the pool's feasible settings.
func (a *Answer) choose(cfg *experiments.Config, pool []int) (pick, feasible int) {
	var cands []int
	for _, i := range pool {
		if a.Settings[i].MeetsAll {
			cands = append(cands, i)
		}
	}
	feasible = len(cands)
	if feasible > 0 {
		g := math.Inf(-1)
		for _, i := range cands {
			g = max(g, a.Settings[i].WorstGoodputRPS)
		}
		floor := (1 - a.TolerancePct/100) * g
		pick = -1
		for _, i := range cands {
			s := &a.Settings[i]
			if s.WorstGoodputRPS < floor {
				continue
			}
			if pick < 0 || a.before(cfg, s, &a.Settings[pick]) {
				pick = i
			}
		}
		return pick, feasible
	}
	pick = -1
	for _, i := range pool {
		s := &a.Settings[i]
		if !s.Complete {
			continue
		}
		if pick < 0 || a.closer(cfg, s, &a.Settings[pick]) {
			pick = i
		}
	}
	return pick, 0
}

// before reports whether feasible setting x ranks before y (both within
// the goodput tolerance): the larger margin, the larger zero-target
// slacks, then the config's limiter order, the less permissive setting and
// the earlier point.
func (a *Answer) before(cfg *experiments.Config, x, y *Setting) bool {
	if x.HasMargin && y.HasMargin && x.Margin != y.Margin {
		return x.Margin > y.Margin
	}
	for j := range x.Outcomes {
		ox, oy := &x.Outcomes[j], &y.Outcomes[j]
		if ox.Zero() && ox.Slack != oy.Slack {
			return ox.Slack > oy.Slack
		}
	}
	return tieBreak(cfg, x, y)
}

// closer reports whether setting x, meeting not every objective, is closer
// than y: fewer objectives without a value (a missing value is a miss no
// measured one is worse than), fewer objectives missed in one scenario,
// the smaller violation, the higher worst goodput, then the tie break.
func (a *Answer) closer(cfg *experiments.Config, x, y *Setting) bool {
	if x.Unmeasured != y.Unmeasured {
		return x.Unmeasured < y.Unmeasured
	}
	if x.Missed != y.Missed {
		return x.Missed < y.Missed
	}
	if x.Violation != y.Violation {
		return x.Violation < y.Violation
	}
	if x.WorstGoodputRPS != y.WorstGoodputRPS {
		return x.WorstGoodputRPS > y.WorstGoodputRPS
	}
	return tieBreak(cfg, x, y)
}

// tieBreak: across limiters the config's order; within one, the less
// permissive setting parameter by parameter in the registry row's order;
// then the earlier setting (its first point comes first).
func tieBreak(cfg *experiments.Config, x, y *Setting) bool {
	if x.LimiterIndex != y.LimiterIndex {
		return x.LimiterIndex < y.LimiterIndex
	}
	if x.LimiterIndex < len(cfg.Limiters) {
		if c := Permissive(&cfg.Limiters[x.LimiterIndex], x.Params, y.Params); c != 0 {
			return c < 0
		}
	}
	return x.Index < y.Index
}

// Permissive compares two points' values of a limiter spec's parameters
// in its registry row's order (a chain: its swept stage's): +1 when the
// first parameter that differs, of those with a direction
// (limiter.Param.Admits), admits more at x than at y, -1 when less, 0 when
// none differs.
func Permissive(s *limiter.Spec, x, y limiter.Params) int {
	for _, q := range paramRows(s) {
		if c := q.Permissive(x[q.Name], y[q.Name]); c != 0 {
			return c
		}
	}
	return 0
}

// paramRows are the parameter rows of a spec's points (a chain: its swept
// stage's kind's).
func paramRows(s *limiter.Spec) []limiter.Param {
	k := s.Kind()
	if k == nil {
		return nil
	}
	if k.Compound() {
		if j := s.SweptStage(); j >= 0 {
			return paramRows(&s.Stages[j].Spec)
		}
		return nil
	}
	return k.Params
}

// alone counts per objective the pool's complete settings meeting it and
// finds the first pair none meets together, each alone being met.
func (a *Answer) alone(pool []int) ([]int, *Conflict) {
	n := len(a.Objectives)
	counts := make([]int, n)
	for _, i := range pool {
		s := &a.Settings[i]
		if !s.Complete {
			continue
		}
		for j := range s.Outcomes {
			if s.Outcomes[j].Pass {
				counts[j]++
			}
		}
	}
	if slices.Contains(counts, 0) {
		return counts, nil
	}
	for x := 0; x < n; x++ {
		for y := x + 1; y < n; y++ {
			together := slices.ContainsFunc(pool, func(i int) bool {
				s := &a.Settings[i]
				return s.Complete && s.Outcomes[x].Pass && s.Outcomes[y].Pass
			})
			if !together {
				return counts, &Conflict{A: x, B: y}
			}
		}
	}
	return counts, nil
}

// goodput is a point's goodput: its mean over replications.
func goodput(p *experiments.Point) float64 {
	if st, ok := p.Stat("goodput_rps"); ok && st.N > 0 {
		return st.Mean
	}
	return p.Metrics.GoodputRPS
}

// Guarantee is the network-calculus bound beside the measurement: arrival
// to finish (end to end), or Note when there is none. For a setting, the
// bound is the largest over its scenarios and the measurement the worst
// over its scenarios and replications (Runs of them, the worst in
// Scenario).
type Guarantee struct {
	Bounded    bool
	BoundMS    float64
	MeasuredMS float64
	Note       string
	// Scenarios and Runs count what the measurement is the worst of: the
	// setting's scenarios and their runs (scenarios × replications).
	Scenarios, Runs int
	// Scenario is where the worst measurement is (into Answer.Scenarios;
	// -1 for GuaranteeOf).
	Scenario int
}

// Label says what the measurement is: "measured", or "worst measured over
// 3 scenarios and 15 runs".
func (g *Guarantee) Label() string {
	switch {
	case g.Runs <= 1:
		return "measured"
	case g.Scenarios == g.Runs:
		return "worst measured over " + strconv.Itoa(g.Scenarios) + " scenarios"
	case g.Scenarios <= 1:
		return "worst measured over " + strconv.Itoa(g.Runs) + " replications"
	}
	return "worst measured over " + strconv.Itoa(g.Scenarios) + " scenarios and " + strconv.Itoa(g.Runs) + " runs"
}

// GuaranteeOf reads a point's end-to-end bound and its measured maximum.
func GuaranteeOf(p *experiments.Point) Guarantee {
	b := p.Bounds
	if b == nil {
		return Guarantee{Note: "no bound", Scenarios: 1, Runs: 1, Scenario: -1}
	}
	if !b.Bounded {
		return Guarantee{Note: b.Note, MeasuredMS: b.EndToEndMaxMS, Scenarios: 1, Runs: 1, Scenario: -1}
	}
	return Guarantee{Bounded: true, BoundMS: b.EndToEndBoundMS, MeasuredMS: b.EndToEndMaxMS, Scenarios: 1, Runs: 1, Scenario: -1}
}

// guaranteeOf is a setting's guarantee over its scenarios and, with
// replications, every run of each (Result.Replicas).
func guaranteeOf(res *experiments.Result, s *Setting, replicas map[int][]int) Guarantee {
	g := Guarantee{Bounded: true, Scenario: -1}
	measured := func(p *experiments.Point, k int) {
		if p.Bounds != nil && (g.Runs == 0 || p.Bounds.EndToEndMaxMS > g.MeasuredMS) {
			g.MeasuredMS, g.Scenario = p.Bounds.EndToEndMaxMS, k
		}
		g.Runs++
	}
	for k, pi := range s.Points {
		if pi < 0 {
			continue
		}
		p := &res.Points[pi]
		g.Scenarios++
		switch b := p.Bounds; {
		case b == nil:
			g.Bounded, g.Note = false, "no bound"
		case !b.Bounded:
			if g.Bounded {
				g.Note = b.Note
			}
			g.Bounded = false
		case g.Bounded:
			g.BoundMS = max(g.BoundMS, b.EndToEndBoundMS)
		}
		if reps := replicas[p.Index]; len(reps) > 0 {
			for _, r := range reps {
				measured(&res.Replicas[r], k)
			}
		} else {
			measured(p, k)
		}
	}
	if !g.Bounded {
		g.BoundMS = 0
	}
	return g
}

// Front is the Pareto front of points over two columns: the indexes of
// the points no other point beats on both (at least as good on each,
// better on one), ordered by x. xLower and yLower say whether less is
// better. The columns are the caller's (Config.ObjectiveColumn finds a
// config's own, such as critical_success_pct). Points without a value of
// either column are left out.
func Front(pts []experiments.Point, xc *experiments.Column, xLower bool, yc *experiments.Column, yLower bool) []int {
	if xc == nil || yc == nil || xc.Value == nil || yc.Value == nil {
		return nil
	}
	type xy struct {
		i    int
		x, y float64
	}
	var all []xy
	for i := range pts {
		x, okx := xc.Value(&pts[i])
		y, oky := yc.Value(&pts[i])
		if okx && oky {
			if !xLower {
				x = -x
			}
			if !yLower {
				y = -y
			}
			all = append(all, xy{i, x, y})
		}
	}
	var out []int
	for _, a := range all {
		beaten := false
		for _, b := range all {
			if b.x <= a.x && b.y <= a.y && (b.x < a.x || b.y < a.y) {
				beaten = true
				break
			}
		}
		if !beaten {
			out = append(out, a.i)
		}
	}
	slices.SortStableFunc(out, func(i, j int) int {
		xi, _ := xc.Value(&pts[i])
		xj, _ := xc.Value(&pts[j])
		switch {
		case xi < xj:
			return -1
		case xi > xj:
			return 1
		}
		return 0
	})
	return out
}

// LowerIsBetter says which way a column is better for a Pareto chart: the
// way the objectives on it point (an upper bound: lower is better), else
// lower for every column but goodput, admitted rate and Jain's index.
func LowerIsBetter(objs []experiments.Objective, key string) bool {
	for _, o := range objs {
		if o.Metric == key {
			return o.Upper()
		}
	}
	switch key {
	case "goodput_rps", "admitted_rps", "on_time", "admitted", "jain_index", "utilization_pct":
		return false
	}
	return true
}
