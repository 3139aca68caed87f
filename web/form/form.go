// Package form is the new-sweep form: a config as typed into the browser,
// read from a post, checked by the engine's decoder, and filled back from a
// config. Every value stays the text the user typed, so a form with errors
// comes back exactly as it was sent, each error beside its input.
package form

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/web/charts"
	"github.com/ratelab/ratelab/web/format"
)

// Limits of the new-sweep form.
const (
	MaxTraceBytes = 10 << 20 // one uploaded or pasted trace
	MaxFormBytes  = 24 << 20 // a whole form submission
	maxParts      = 100
	maxLimiters   = experiments.MaxLimiters
)

// Sweep is the new-sweep form as typed. Keys of inputs (and of Errors)
// are "name", "seed", "duration_ms", "server.workers",
// "metrics.rolling_window_ms", "reports", "objectives", "parts.<i>.<field>" and
// "limiters.<i>.<field>".
type Sweep struct {
	Name, Description, Seed, DurationMS string
	Replications                        string
	Workers, ServiceMS, DeadlineMS      string
	RollingWindowMS, FairnessWindowMS   string
	Reports                             string // JSON list of extra CSV reports (a preset's), or empty
	// Settings are the server's word-valued settings, its door's bound and
	// the output and measuring rules, by input key (models.go); Models is
	// the JSON object of servers, loads, classes, class_draw and slo.
	Settings   map[string]string
	Models     string
	Objectives string // objectives, "metric op value" a line (experiments.ParseObjectives)
	// Pick is the objective picker's metric, op and target as posted
	// ("+ Add objective" appends them to Objectives); not in the config.
	Pick     ObjectivePick
	Parts    []Part
	Limiters []Limiter
	// Traces are the names of the lab's trace files (lab serve --traces),
	// offered by a trace part's file input; not posted.
	Traces []string

	// CountText is the live count as the page is served (Count), or ""; not posted.
	CountText string

	// Errors maps an input's key to its messages.
	Errors map[string][]string
	// Problems lists every error with the config path it came from, for the
	// summary above the form.
	Problems []field.Error
}

// Part is one workload part as typed: its type and the text of each
// input, by field name (the engine's workload.Field names). Lines fields
// hold one item a line ("rate_rps,duration_ms"); a CSV field holds a trace.
type Part struct {
	Type   string
	Fields map[string]string
}

// Get is the text of one of the part's inputs.
func (p *Part) Get(name string) string { return p.Fields[name] }

// Set sets the text of one of the part's inputs.
func (p *Part) Set(name, text string) {
	if p.Fields == nil {
		p.Fields = map[string]string{}
	}
	p.Fields[name] = text
}

// Limiter is one limiter as typed: its type, label, the text of each
// parameter input (a list for ParseValues) and of each option, by name.
type Limiter struct {
	Type, Name string
	Params     map[string]string
	Options    map[string]string
}

// Param is the text of one of the limiter's parameter inputs.
func (l *Limiter) Param(name string) string { return l.Params[name] }

// Option is the value of one of the limiter's option inputs.
func (l *Limiter) Option(name string) string { return l.Options[name] }

// FromConfig fills the form from a config (a preset or a stored run).
func FromConfig(cfg *experiments.Config) *Sweep {
	f := &Sweep{
		Name:             cfg.Name,
		Description:      cfg.Description,
		Seed:             seedText(cfg),
		DurationMS:       format.Num(cfg.Workload.DurationMS),
		Workers:          serverText(&cfg.Server, "workers", float64(cfg.Server.Workers)),
		ServiceMS:        serverText(&cfg.Server, "service_ms", cfg.Server.ServiceMS),
		DeadlineMS:       serverText(&cfg.Server, "deadline_ms", cfg.Server.DeadlineMS),
		RollingWindowMS:  format.Num(cfg.Metrics.RollingWindowMS),
		FairnessWindowMS: format.Num(cfg.Metrics.FairnessWindowMS),
	}
	if cfg.Replications > 0 {
		f.Replications = strconv.Itoa(cfg.Replications)
	}
	f.Objectives = experiments.FormatObjectives(cfg.Objectives)
	if len(cfg.Reports) > 0 {
		b, err := json.MarshalIndent(cfg.Reports, "", "  ")
		if err == nil {
			f.Reports = string(b)
		}
	}
	f.fillModels(cfg)
	for i := range cfg.Workload.Parts {
		f.Parts = append(f.Parts, partOf(&cfg.Workload.Parts[i]))
	}
	for _, l := range cfg.Limiters {
		f.Limiters = append(f.Limiters, limiterOf(l))
	}
	return f
}

// seedText is the seed input: the seed, or a swept seed's list.
func seedText(cfg *experiments.Config) string {
	if len(cfg.Seeds) > 1 {
		parts := make([]string, len(cfg.Seeds))
		for i, s := range cfg.Seeds {
			parts[i] = strconv.FormatUint(s, 10)
		}
		return strings.Join(parts, ", ")
	}
	return strconv.FormatUint(cfg.Seed, 10)
}

// serverText is a server field's input: its value, or its swept list.
func serverText(s *server.Spec, name string, v float64) string {
	if xs := s.Lists[name]; len(xs) > 1 {
		return FormatValues(xs)
	}
	return format.Num(v)
}

// CheckTraceSize refuses a trace of n bytes past MaxTraceBytes at path:
// the one size check of a trace, for the form and the API alike (every
// run's config can then be edited in the form as a new sweep).
func CheckTraceSize(path string, n int) (field.Error, bool) {
	if n <= MaxTraceBytes {
		return field.Error{}, true
	}
	return field.Error{Path: path, Msg: fmt.Sprintf("the trace is %s; the limit is %s", format.Bytes(n), format.Bytes(MaxTraceBytes))}, false
}

// OversizeTraces checks every trace of a config's parts (the fields the
// part types' tables mark as CSV) with CheckTraceSize.
func OversizeTraces(parts []workload.Part) field.List {
	var errs field.List
	for i := range parts {
		k := parts[i].Kind()
		if k == nil {
			continue
		}
		raw := partJSON(&parts[i])
		for _, fd := range k.Fields {
			var text string
			if !fd.Input.Upload() || json.Unmarshal(raw[fd.Name], &text) != nil {
				continue
			}
			if e, ok := CheckTraceSize(fmt.Sprintf("workload.parts[%d].%s", i, fd.Name), len(text)); !ok {
				errs = append(errs, e)
			}
		}
	}
	return errs
}

// AddError records a message for an input key (and the summary).
func (f *Sweep) AddError(key, path, msg string) {
	if f.Errors == nil {
		f.Errors = map[string][]string{}
	}
	f.Errors[key] = append(f.Errors[key], msg)
	f.Problems = append(f.Problems, field.Error{Path: path, Msg: msg})
}

// dropErrors forgets the messages of one input (and their summary lines).
func (f *Sweep) dropErrors(key string) {
	if len(f.Errors[key]) == 0 {
		return
	}
	delete(f.Errors, key)
	f.Problems = slices.DeleteFunc(f.Problems, func(e field.Error) bool { return Key(e.Path) == key })
}

// Err returns the messages of one input.
func (f *Sweep) Err(key string) []string { return f.Errors[key] }

// HasErrors reports whether any input has an error.
func (f *Sweep) HasErrors() bool { return len(f.Problems) > 0 }

// hasAdvancedErrors reports an error inside the folded "advanced" section:
// the section opens to show it (its summary names what it holds).
func (f *Sweep) hasAdvancedErrors() bool {
	n := len(f.Err("metrics.rolling_window_ms")) + len(f.Err("metrics.fairness_window_ms")) + len(f.Err("reports")) + len(f.Err(ModelsKey))
	for _, r := range experiments.Rules() {
		n += len(f.Err(r.Path))
	}
	return n > 0
}

// problemsText counts the problems for the summary above the form.
func problemsText(n int) string {
	if n == 1 {
		return "1 problem"
	}
	return strconv.Itoa(n) + " problems"
}

// Key maps a config path from the engine ("workload.parts[2].segments[1].rate_rps",
// "limiters[0].burst[3]") to the key of the input that holds it
// ("parts.2.segments", "limiters.0.burst").
func Key(path string) string {
	p := strings.TrimPrefix(path, "workload.")
	if p == "workload" {
		p = "parts"
	}
	p = strings.NewReplacer("[", ".", "]", "").Replace(p)
	segs := strings.Split(p, ".")
	keep := 1
	switch {
	case segs[0] == "parts" || segs[0] == "limiters":
		keep = 3
	case segs[0] == "server" || segs[0] == "metrics" || segs[0] == "output":
		keep = 2
	case slices.Contains(modelSections, segs[0]):
		return ModelsKey
	}
	if len(segs) > keep {
		segs = segs[:keep]
	}
	key := strings.Join(segs, ".")
	if segs[0] == "version" {
		key = ""
	}
	return key
}

// RowKey is the key of an input of row i: "parts.2.rate_rps".
func RowKey(prefix string, i int, name string) string {
	return prefix + "." + strconv.Itoa(i) + "." + name
}

// InputID is the element id of an input key.
func InputID(key string) string { return "f-" + strings.ReplaceAll(key, ".", "-") }

// ObjectivePick is the objectives picker: a metric chosen by its name on
// the page, an operator and a target, added to the objectives' text by
// "+ Add objective" (a post without JavaScript; static/app.js adds the
// line in place).
type ObjectivePick struct{ Metric, Op, Value string }

// Line is the pick as a line of the objectives' text ("" without a metric).
func (p ObjectivePick) Line() string {
	if strings.TrimSpace(p.Metric) == "" {
		return ""
	}
	op := p.Op
	if op == "" {
		op = "<="
	}
	return strings.TrimSpace(p.Metric) + " " + op + " " + strings.TrimSpace(p.Value)
}

// ObjectiveOps are the operators an objective takes, as the picker offers them.
var ObjectiveOps = []string{"<=", ">=", "<", ">"}

// MetricChoice is one metric the picker offers: its results.csv key and
// its name on the page with its unit.
type MetricChoice struct{ Key, Label string }

// MetricChoices are every metric an objective can name
// (experiments.ObjectiveMetrics), labelled as the run page names the
// column (charts.ColumnLabel): "goodput_rps: goodput (req/s)",
// "sojourn_max_ms (ms)".
func MetricChoices() []MetricChoice {
	var out []MetricChoice
	for _, k := range experiments.ObjectiveMetrics() {
		label := charts.ColumnLabel(k)
		if !strings.HasPrefix(label, k) {
			label = k + ": " + label
		}
		out = append(out, MetricChoice{Key: k, Label: label})
	}
	return out
}
