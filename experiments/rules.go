package experiments

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/decimal"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/workload"
)

// OutputSpec says how the run's files print (the "output" section of a
// config). Left out, every setting is the lab's exact rule.
type OutputSpec struct {
	// Decimals is how a number with decimal places prints (see Rules).
	Decimals string `json:"decimals,omitempty"`
	// Windows is how many 100 ms windows a "series" report has (see Rules).
	Windows string `json:"windows,omitempty"`
}

// Words of the output and measuring rules.
const (
	DecimalsBinary   = "binary"
	DecimalsShortest = "shortest-half-up"

	WindowsCover = "cover"
	WindowsWhole = "whole"

	ScoreToEnd          = "end"
	ScoreToEndMinusDead = "end-minus-deadline"
)

// Rule is one word-valued setting of how a run measures or prints: its
// path in the config, the words it takes (the first is the default, also
// when it is left out) and what each one does. The seed lab's program
// differs from the lab's exact rules in these; its presets name its words.
type Rule struct {
	Path    string // "output.decimals"
	Label   string
	Doc     string
	Choices []RuleChoice
	get     func(c *Config) *string
}

// RuleChoice is one word of a rule.
type RuleChoice struct {
	Name string
	Doc  string
}

// Rules lists the output and measuring rules.
func Rules() []Rule {
	return []Rule{
		{Path: "output.decimals", Label: "Decimals", Doc: "how a number with decimal places prints", Choices: []RuleChoice{
			{DecimalsBinary, "round the exact binary value, ties to even (Go's %.1f)"},
			{DecimalsShortest, "take the shortest decimal string that reads back as the same float64 and round it half up (Java's %.1f, the seed lab's): a value whose shortest form is 31.45 prints 31.5, where %.1f prints 31.4"},
		}, get: func(c *Config) *string { return &c.Output.Decimals }},
		{Path: "output.windows", Label: "Series windows", Doc: "how many aligned 100 ms windows a series report has over a scoring window of E ms", Choices: []RuleChoice{
			{WindowsCover, "ceil(E / 100): a partial last window is a row"},
			{WindowsWhole, "floor(E / 100): a partial last window is dropped (below 100 ms, the header only), the seed lab's rule"},
		}, get: func(c *Config) *string { return &c.Output.Windows }},
		{Path: "workload.pacing", Label: "Pacing", Doc: "where a paced part (constant, demand curve, paced client groups) at spacing d = 1000/rate_rps places its arrivals from its start s", Choices: []RuleChoice{
			{workload.PacingAdded, "by repeated floating addition, s, s+d, (s+d)+d, ... (the lab spec's rule: rounding sometimes adds an arrival just before the end)"},
			{workload.PacingMultiplied, "arrival k at s + k × d, one multiplication each (the seed lab's Post 1)"},
		}, get: func(c *Config) *string { return &c.Workload.Pacing }},
		{Path: "metrics.percentiles", Label: "Percentiles", Doc: "what a percentile of whole-millisecond delays reports for its nearest-rank value v", Choices: []RuleChoice{
			{metrics.PercentilesExact, "v itself"},
			{metrics.PercentilesHdr3, "the largest value of v's bucket in an HdrHistogram of 3 significant digits, the seed lab's recording: v below 2048, else v | (2^b - 1) with b = bitlength(v) - 11 (60000 reads 60031)"},
		}, get: func(c *Config) *string { return &c.Metrics.Percentiles }},
		{Path: "metrics.score_until", Label: "Scoring window", Doc: "which arrivals the metrics count", Choices: []RuleChoice{
			{ScoreToEnd, "every arrival of the window [0, duration_ms); rates per duration_ms"},
			{ScoreToEndMinusDead, "the arrivals at or before duration_ms - deadline_ms, which have a whole deadline inside the window (the seed lab's Post 5); rates per max(1, duration_ms - deadline_ms) ms. The others still load the server"},
		}, get: func(c *Config) *string { return &c.Metrics.ScoreUntil }},
	}
}

// Rule is the value of the rule at path: its default when left out.
func (c *Config) Rule(path string) string {
	for _, r := range Rules() {
		if r.Path == path {
			if v := *r.get(c); v != "" {
				return v
			}
			return r.Choices[0].Name
		}
	}
	return ""
}

// RawRule is the value of the rule at path as given ("" when left out).
func (c *Config) RawRule(path string) string {
	for _, r := range Rules() {
		if r.Path == path {
			return *r.get(c)
		}
	}
	return ""
}

// SetRule sets the rule at path ("" leaves it to its default).
func (c *Config) SetRule(path, v string) {
	for _, r := range Rules() {
		if r.Path == path {
			*r.get(c) = v
		}
	}
}

func (c *Config) validateRules() field.List {
	var errs field.List
	for _, r := range Rules() {
		v := *r.get(c)
		if v == "" || slices.ContainsFunc(r.Choices, func(ch RuleChoice) bool { return ch.Name == v }) {
			continue
		}
		q := make([]string, len(r.Choices))
		for i, ch := range r.Choices {
			q[i] = strconv.Quote(ch.Name)
		}
		errs.Add(r.Path, "must be one of %s", strings.Join(q, ", "))
	}
	return errs
}

// ScoreEndMS is the end of the scoring window of a point whose server has
// deadline deadlineMS: arrivals at or before it are measured.
func (c *Config) ScoreEndMS(deadlineMS float64) float64 {
	if c.Rule("metrics.score_until") == ScoreToEndMinusDead {
		return c.Workload.DurationMS - deadlineMS
	}
	return c.Workload.DurationMS
}

// ScoreSeconds is the length of the scoring window in seconds, the
// denominator of every rate.
func (c *Config) ScoreSeconds(deadlineMS float64) float64 {
	if c.Rule("metrics.score_until") == ScoreToEndMinusDead {
		return max(1, c.Workload.DurationMS-deadlineMS) / 1000.0
	}
	return c.Workload.DurationMS / 1000
}

// Printer formats numbers by the config's decimals rule.
type Printer struct{ shortest bool }

// PrinterFor is the config's number printer.
func PrinterFor(c *Config) Printer {
	return Printer{shortest: c != nil && c.Rule("output.decimals") == DecimalsShortest}
}

// Append formats v under f (Text is not a number format), as AppendValue
// does under the binary rule.
func (p Printer) Append(b []byte, f Format, v float64) []byte {
	if !p.shortest || f == Int {
		return AppendValue(b, f, v)
	}
	if v == 0 {
		v = 0 // no "-0.0"
	}
	places := 1
	if f == Fixed4 {
		places = 4
	}
	return decimal.AppendHalfUp(b, v, places)
}

// AppendPlaces formats v with places decimals (0 to 20) by the decimals
// rule.
func (p Printer) AppendPlaces(b []byte, v float64, places int) []byte {
	if v == 0 {
		v = 0 // no "-0.0"
	}
	if p.shortest {
		return decimal.AppendHalfUp(b, v, places)
	}
	return strconv.AppendFloat(b, v, 'f', places, 64)
}
