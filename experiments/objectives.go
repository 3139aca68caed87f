package experiments

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// Objective is one target a point must meet: Metric (a numeric column key of
// Columns, such as sojourn_p99_ms) Op Value, for example
// "sojourn_p99_ms <= 200". Values are compared unrounded.
type Objective struct {
	Metric string  `json:"metric"`
	Op     string  `json:"op"`
	Value  float64 `json:"value"`
}

// MaxObjectives bounds a config's objectives.
const MaxObjectives = 20

// Decision says how experiments/decide reads the sweep when it answers the
// objectives: which of the sweep's axes are scenarios (what the engineer
// does not choose, so a setting must meet every objective under each) and
// how close to the best goodput a setting must come to be weighed on its
// margin. Normalize fills it when the config has objectives.
type Decision struct {
	// Scenarios are the axes that are scenarios, among ScenarioAxes:
	// DefaultScenarios when left out, none when given as []. Seeds and
	// replications are always scenarios; the axes not listed (of servers,
	// policies, fields) are part of the setting.
	Scenarios []string `json:"scenarios"`
	// GoodputTolerancePct: settings whose worst-scenario goodput is at
	// least (1 - tol/100)·G*, G* the best, are weighed on their margin
	// (DefaultGoodputTolerancePct when left out; 0 to 100).
	GoodputTolerancePct *float64 `json:"goodput_tolerance_pct"`
}

// The axes decision.scenarios names.
const (
	ScenarioLoads    = "loads"    // the config's loads
	ScenarioServers  = "servers"  // the config's servers
	ScenarioPolicies = "policies" // the config's client policies
	ScenarioFields   = "fields"   // every swept workload and server field
)

// ScenarioAxes are the axes decision.scenarios may list, in this order (a
// fresh slice each call).
func ScenarioAxes() []string {
	return []string{ScenarioLoads, ScenarioServers, ScenarioPolicies, ScenarioFields}
}

// DefaultScenarios are the scenario axes when decision.scenarios is left
// out: loads and swept fields are what the engineer does not choose;
// servers and client policies are alternatives to pick among (a fresh
// slice each call).
func DefaultScenarios() []string { return []string{ScenarioLoads, ScenarioFields} }

// DefaultGoodputTolerancePct is decision.goodput_tolerance_pct left out.
const DefaultGoodputTolerancePct = 1

// Scenario reports whether axis (one of ScenarioAxes) is a scenario under
// the config: decision.scenarios, else DefaultScenarios.
func (c *Config) Scenario(axis string) bool {
	if c.Decision == nil || c.Decision.Scenarios == nil {
		return slices.Contains(DefaultScenarios(), axis)
	}
	return slices.Contains(c.Decision.Scenarios, axis)
}

// GoodputTolerancePct is decision.goodput_tolerance_pct, else its default.
func (c *Config) GoodputTolerancePct() float64 {
	if c.Decision == nil || c.Decision.GoodputTolerancePct == nil {
		return DefaultGoodputTolerancePct
	}
	return *c.Decision.GoodputTolerancePct
}

// normalizeObjectives writes -0 targets as 0 (one target, one results.csv
// column) and, for a config with objectives or a decision section, fills
// the decision's defaults, in ScenarioAxes order.
func (c *Config) normalizeObjectives() {
	for i := range c.Objectives {
		if c.Objectives[i].Value == 0 {
			c.Objectives[i].Value = 0 // -0 is 0
		}
	}
	if c.Decision == nil && len(c.Objectives) == 0 {
		return
	}
	if c.Decision == nil {
		c.Decision = &Decision{}
	}
	d := c.Decision
	if d.Scenarios == nil {
		d.Scenarios = DefaultScenarios()
	}
	if d.GoodputTolerancePct == nil {
		tol := float64(DefaultGoodputTolerancePct)
		d.GoodputTolerancePct = &tol
	}
	// Known axes, each once, in ScenarioAxes order; a list with an
	// unknown or repeated axis stays as given for Validate to name.
	axes := []string{}
	for _, a := range ScenarioAxes() {
		if slices.Contains(d.Scenarios, a) {
			axes = append(axes, a)
		}
	}
	if len(axes) == len(d.Scenarios) {
		d.Scenarios = axes
	}
}

// validateDecision checks decision.scenarios and goodput_tolerance_pct.
func (c *Config) validateDecision() field.List {
	var errs field.List
	d := c.Decision
	if d == nil {
		return nil
	}
	seen := map[string]bool{}
	for i, a := range d.Scenarios {
		path := field.Index("decision.scenarios", i)
		switch {
		case !slices.Contains(ScenarioAxes(), a):
			errs.Add(path, "unknown axis %q (one of %s; seeds and replications are always scenarios)", a, strings.Join(ScenarioAxes(), ", "))
		case seen[a]:
			errs.Add(path, "%q is listed twice", a)
		}
		seen[a] = true
	}
	if t := d.GoodputTolerancePct; t != nil && !(*t >= 0 && *t <= 100) {
		errs.Add("decision.goodput_tolerance_pct", "must be from 0 to 100 (%% of the best worst-scenario goodput)")
	}
	return errs
}

// ops are the comparisons an objective takes, each with its name in a
// results.csv column (pass_<metric>_<name>_<value>); OpName reads them.
var ops = [...]struct{ Op, Name string }{{"<=", "le"}, {">=", "ge"}, {"<", "lt"}, {">", "gt"}}

// OpName is the column name of op ("le" for "<="), or "".
func OpName(op string) string {
	for _, o := range ops {
		if o.Op == op {
			return o.Name
		}
	}
	return ""
}

// String prints the objective as "metric op value".
func (o Objective) String() string {
	return o.Metric + " " + o.Op + " " + strconv.FormatFloat(o.Value, 'f', -1, 64)
}

// Column is the objective's results.csv column: pass_<metric>_<op name>_<value>,
// for example pass_sojourn_p99_ms_le_200 or pass_jain_index_ge_0.95.
func (o Objective) Column() string {
	return "pass_" + o.Metric + "_" + OpName(o.Op) + "_" + strconv.FormatFloat(o.Value, 'f', -1, 64)
}

// Upper reports whether the objective caps its metric (<= or <).
func (o Objective) Upper() bool { return o.Op == "<=" || o.Op == "<" }

// Strict reports whether the objective excludes its target (< or >).
func (o Objective) Strict() bool { return o.Op == "<" || o.Op == ">" }

// ObjectiveMetrics are the column keys an objective may name: every numeric
// column of Columns but the point index and the limiters' parameters (a
// parameter is a setting, chosen, not an objective, measured).
func ObjectiveMetrics() []string { return slices.Clip(objectiveMetrics()) }

// objectiveMetrics are ObjectiveMetrics, listed once: a config's
// validation asks for them.
var objectiveMetrics = sync.OnceValue(func() []string {
	var keys []string
	for _, c := range Columns() {
		if objectiveMetric(&c) {
			keys = append(keys, c.Key)
		}
	}
	return keys
})

// objectiveMetric reports whether an objective may name column c: a
// numeric measure, not the point index nor a limiter's parameter.
func objectiveMetric(c *Column) bool {
	if c.Format == Text || c.Key == "point" {
		return false
	}
	_, param := limiter.ParamByName(c.Key)
	return !param
}

// NearestMetric is the objective metric (ObjectiveMetrics) nearest to name
// (NearestMetrics' first): what "did you mean" offers for a name that is
// not a metric.
func NearestMetric(name string) string { return NearestMetrics(name, ObjectiveMetrics())[0] }

// NearestMetrics are the 1 to 3 names among names nearest to name: by the
// edit distance from name to the closest part of each (so "p99_ms" is
// nearest to every *_p99_ms and "goodput" to goodput_rps), the shorter
// name first on a tie, then names' order; those as near as the nearest,
// at most 3. Nil for no names.
func NearestMetrics(name string, names []string) []string {
	type ranked struct {
		name     string
		distance int
	}
	all := make([]ranked, len(names))
	for i, m := range names {
		all[i] = ranked{m, substringDistance(name, m)}
	}
	slices.SortStableFunc(all, func(x, y ranked) int {
		if x.distance != y.distance {
			return x.distance - y.distance
		}
		return len(x.name) - len(y.name)
	})
	var out []string
	for _, r := range all {
		if len(out) == 3 || len(out) > 0 && r.distance > all[0].distance {
			break
		}
		out = append(out, r.name)
	}
	return out
}

// substringDistance is the edit distance from a to the closest substring
// of b (Sellers: a may start and end anywhere in b), by bytes.
func substringDistance(a, b string) int {
	prev := make([]int, len(b)+1) // a's empty prefix matches anywhere: 0
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return slices.Min(prev)
}

// orList prints names as "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ObjectiveColumn is the column an objective of the config names: a
// numeric column of Columns (ObjectiveMetrics), else a numeric column of
// the config's results.csv (ResultColumns: the per-class values such as
// critical_success_pct, the queue and client models' outcomes); nil when
// none is.
func (c *Config) ObjectiveColumn(metric string) *Column {
	if col := ColumnByKey(metric); col != nil && col.Format != Text && col.Key != "point" {
		return col
	}
	for _, col := range ResultColumns(c) {
		if col.Key == metric && col.Format != Text && col.Value != nil && col.Key != "point" {
			return &col
		}
	}
	return nil
}

// ObjectiveMetricsOf are the metrics an objective of the config may name:
// ObjectiveMetrics, then the config's own results.csv measures beyond them
// (never a limiter's parameter).
func (c *Config) ObjectiveMetricsOf() []string {
	keys := ObjectiveMetrics()
	for _, col := range ResultColumns(c) {
		if objectiveMetric(&col) && col.Value != nil && !slices.Contains(keys, col.Key) {
			keys = append(keys, col.Key)
		}
	}
	return keys
}

// validateObjectives checks each objective's metric, op and value, and
// refuses two objectives of one column.
func (c *Config) validateObjectives() field.List {
	var errs field.List
	if len(c.Objectives) > MaxObjectives {
		errs.Add("objectives", "at most %d objectives", MaxObjectives)
		return errs
	}
	if len(c.Objectives) == 0 {
		return errs
	}
	metrics := ObjectiveMetrics()
	for _, o := range c.Objectives {
		if !slices.Contains(metrics, o.Metric) {
			metrics = c.ObjectiveMetricsOf() // the config's own columns (classes, queue, clients)
			break
		}
	}
	seen := map[string]int{}
	for i, o := range c.Objectives {
		path := field.Index("objectives", i)
		bad := false
		if !slices.Contains(metrics, o.Metric) {
			if _, param := limiter.ParamByName(o.Metric); param {
				errs.Add(field.Join(path, "metric"), "%q is a limiter parameter, a setting you choose, not a measure: name a measure such as goodput_rps or sojourn_p99_ms", o.Metric)
			} else {
				errs.Add(field.Join(path, "metric"), "unknown metric %q: did you mean %s?", o.Metric, orList(NearestMetrics(o.Metric, metrics)))
			}
			bad = true
		}
		if OpName(o.Op) == "" {
			errs.Add(field.Join(path, "op"), "unknown op %q (one of <=, >=, <, >)", o.Op)
			bad = true
		}
		if math.IsNaN(o.Value) || math.IsInf(o.Value, 0) || math.Abs(o.Value) > 1e12 {
			errs.Add(field.Join(path, "value"), "must be a finite number of at most 1e12")
			bad = true
		}
		if bad {
			continue
		}
		if j, dup := seen[o.Column()]; dup {
			errs.Add(path, "the same objective as objectives[%d] (%s)", j, o)
		}
		seen[o.Column()] = i
	}
	return errs
}

// ParseObjectives reads objectives one per line, "metric op value"
// ("sojourn_p99_ms <= 200"); blank lines and lines starting with # are
// skipped. Errors name objectives[i] by the objective's place among the
// lines read; the objectives themselves are checked by Validate.
func ParseObjectives(text string) ([]Objective, field.List) {
	var out []Objective
	var errs field.List
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path := field.Index("objectives", len(out))
		o, ok := splitObjective(line)
		if !ok {
			errs.Add(path, "line %d %q: write metric op value, such as sojourn_p99_ms <= 200", n+1, line)
			out = append(out, Objective{})
			continue
		}
		v, err := strconv.ParseFloat(o[2], 64)
		if err != nil {
			errs.Add(field.Join(path, "value"), "line %d: %q is not a number", n+1, o[2])
		}
		out = append(out, Objective{Metric: o[0], Op: o[1], Value: v})
	}
	return out, errs
}

// splitObjective splits "metric op value", with or without spaces around op.
func splitObjective(line string) ([3]string, bool) {
	for _, op := range []string{"<=", ">=", "<", ">"} { // two-character ops first
		if i := strings.Index(line, op); i > 0 {
			m, v := strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+len(op):])
			if m == "" || v == "" || strings.ContainsAny(m, " \t") {
				return [3]string{}, false
			}
			return [3]string{m, op, v}, true
		}
	}
	return [3]string{}, false
}

// FormatObjectives prints objectives one per line, as ParseObjectives reads them.
func FormatObjectives(objs []Objective) string {
	var b strings.Builder
	for _, o := range objs {
		b.WriteString(o.String())
		b.WriteByte('\n')
	}
	return b.String()
}
