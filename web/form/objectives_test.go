package form

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/presets"
)

// TestFormObjectives: the objectives text area becomes the config's
// objectives and back; a bad line or an unknown metric lands beside it.
func TestFormObjectives(t *testing.T) {
	cfg, err := presets.Config("delay-budget")
	if err != nil {
		t.Fatal(err)
	}
	f := FromConfig(cfg)
	f.Objectives = "sojourn_p99_ms <= 200\n\ndownstream_peak_rps<=150\njain_index >= 0.95\n"
	_, got := f.Document()
	if got == nil {
		t.Fatalf("errors: %v", f.Problems)
	}
	want := []experiments.Objective{{Metric: "sojourn_p99_ms", Op: "<=", Value: 200}, {Metric: "downstream_peak_rps", Op: "<=", Value: 150}, {Metric: "jain_index", Op: ">=", Value: 0.95}}
	if len(got.Objectives) != 3 || got.Objectives[0] != want[0] || got.Objectives[1] != want[1] || got.Objectives[2] != want[2] {
		t.Fatalf("objectives %+v", got.Objectives)
	}
	if back := FromConfig(got).Objectives; back != "sojourn_p99_ms <= 200\ndownstream_peak_rps <= 150\njain_index >= 0.95\n" {
		t.Fatalf("back in the form: %q", back)
	}

	for text, msg := range map[string]string{
		"reject_pct 5":                 "write metric op value",
		"reject_pct <= five":           "is not a number",
		"nope <= 5":                    `unknown metric "nope": did you mean `,
		"reject_pct <= 5\nlimiter < 3": `unknown metric "limiter"`,
	} {
		f := FromConfig(cfg)
		f.Objectives = text
		if _, got := f.Document(); got != nil {
			t.Errorf("%q: no error", text)
			continue
		}
		if errs := f.Err("objectives"); len(errs) == 0 || !strings.Contains(strings.Join(errs, "|"), msg) {
			t.Errorf("%q: errors %v, want %q", text, errs, msg)
		}
	}
}

// TestFormObjectiveMinusZero: a target typed as -0 is the target 0 (one
// results.csv column, printed back as 0); 0 and -0 together are one
// objective given twice, refused beside the box.
func TestFormObjectiveMinusZero(t *testing.T) {
	cfg, err := presets.Config("delay-budget")
	if err != nil {
		t.Fatal(err)
	}
	f := FromConfig(cfg)
	f.Objectives = "reject_pct <= -0\n"
	_, got := f.Document()
	if got == nil {
		t.Fatalf("errors: %v", f.Problems)
	}
	if o := got.Objectives[0]; o.Value != 0 || math.Signbit(o.Value) || o.Column() != "pass_reject_pct_le_0" {
		t.Errorf("-0 reads as %v (%s)", o.Value, o.Column())
	}
	if back := FromConfig(got).Objectives; back != "reject_pct <= 0\n" {
		t.Errorf("back in the form: %q", back)
	}
	f = FromConfig(cfg)
	f.Objectives = "reject_pct <= 0\nreject_pct <= -0\n"
	if _, got := f.Document(); got != nil || len(f.Err("objectives")) == 0 {
		t.Errorf("0 and -0 taken as two objectives: %v", f.Err("objectives"))
	}
}

// TestFormObjectivePickerMeasures: the metric picker offers measures
// only, never a limiter's parameter (a parameter is a setting, chosen,
// not measured); a duplicate objective is refused once, naming both
// lines. Before: rate_rps, burst and the other parameters were offered,
// and the duplicate read "objectives[2] objectives[1] is the same
// objective".
func TestFormObjectivePickerMeasures(t *testing.T) {
	var keys []string
	for _, m := range MetricChoices() {
		keys = append(keys, m.Key)
	}
	for _, param := range []string{"rate_rps", "burst", "limit", "window_ms", "queue"} {
		if slices.Contains(keys, param) {
			t.Errorf("the picker offers the parameter %s", param)
		}
	}
	for _, measure := range []string{"goodput_rps", "reject_pct", "sojourn_p99_ms"} {
		if !slices.Contains(keys, measure) {
			t.Errorf("the picker lacks %s", measure)
		}
	}
	cfg, err := presets.Config("delay-budget")
	if err != nil {
		t.Fatal(err)
	}
	f := FromConfig(cfg)
	f.Objectives = "reject_pct <= 5\ngoodput_rps >= 1\nreject_pct <= 5\n"
	if _, got := f.Document(); got != nil {
		t.Fatal("a duplicate objective taken")
	}
	errs := f.Err("objectives")
	if len(errs) != 1 || strings.Count(errs[0], "objectives[") > 2 || strings.Contains(errs[0], "] objectives[") {
		t.Errorf("duplicate: %q, want one message naming the two lines", errs)
	}
}
