package experiments

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
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

// Ops are the comparisons an objective takes, each with its name in a
// results.csv column (pass_<metric>_<name>_<value>).
var Ops = []struct{ Op, Name string }{{"<=", "le"}, {">=", "ge"}, {"<", "lt"}, {">", "gt"}}

// OpName is the column name of op ("le" for "<="), or "".
func OpName(op string) string {
	for _, o := range Ops {
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
// column of Columns but the point index.
func ObjectiveMetrics() []string {
	var keys []string
	for _, c := range Columns() {
		if c.Format != Text && c.Key != "point" {
			keys = append(keys, c.Key)
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
	metrics := ObjectiveMetrics()
	seen := map[string]int{}
	for i, o := range c.Objectives {
		path := field.Index("objectives", i)
		bad := false
		if !slices.Contains(metrics, o.Metric) {
			errs.Add(field.Join(path, "metric"), "unknown metric %q (one of %s)", o.Metric, strings.Join(metrics, ", "))
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
			errs.Add(path, "objectives[%d] is the same objective (%s)", j, o)
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
