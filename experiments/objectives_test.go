package experiments_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// Objectives name measures, never a limiter's parameter (a setting).
func TestObjectiveMetricsAreMeasures(t *testing.T) {
	metrics := experiments.ObjectiveMetrics()
	for _, c := range experiments.Columns() {
		if _, param := limiter.ParamByName(c.Key); param && slices.Contains(metrics, c.Key) {
			t.Errorf("objective metrics offer the parameter %s", c.Key)
		}
	}
	for _, m := range []string{"goodput_rps", "sojourn_p99_ms", "reject_pct", "end_to_end_bound_ms", "recovery_ms"} {
		if !slices.Contains(metrics, m) {
			t.Errorf("objective metrics lack %s", m)
		}
	}
	cfg, err := document.DecodeConfig([]byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},
	 "limiters":[{"type":"token-bucket","rate_rps":40,"burst":2}],"classes":[{"name":"critical","share":0.5},{"name":"bulk"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cfg.ObjectiveMetricsOf() {
		if _, param := limiter.ParamByName(m); param {
			t.Errorf("the config's objective metrics offer the parameter %s", m)
		}
	}
}

// "did you mean" offers the 1 to 3 nearest metrics.
func TestNearestMetrics(t *testing.T) {
	metrics := experiments.ObjectiveMetrics()
	for name, want := range map[string][]string{
		"goodpt":         {"goodput_rps"},
		"goodput":        {"goodput_rps"},
		"goodput_rp":     {"goodput_rps"},
		"sojourn_p99":    {"sojourn_p99_ms"},
		"p99_ms":         {"sojourn_p99_ms", "gate_delay_p99_ms", "server_wait_p99_ms"},
		"recovery":       {"recovery_ms"},
		"latency_p99_ms": {"gate_delay_p99_ms"},
	} {
		if got := experiments.NearestMetrics(name, metrics); !slices.Equal(got, want) {
			t.Errorf("nearest to %s: %v, want %v", name, got, want)
		}
	}
	if got := experiments.NearestMetrics("nope", metrics); len(got) < 1 || len(got) > 3 {
		t.Errorf("nearest to nope: %v, want 1 to 3 names", got)
	}
}

// Objective errors: a duplicate names each objective once and is reported
// once; an unknown metric gets at most 3 suggestions and no list of every
// metric; a parameter is refused as a setting.
func TestObjectiveErrors(t *testing.T) {
	base := `{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},"limiters":[{"type":"none"}],"objectives":`
	for _, tc := range []struct {
		objectives string
		want       string // the whole error
	}{
		{`[{"metric":"late","op":"<=","value":0},{"metric":"reject_pct","op":"<=","value":0},{"metric":"reject_pct","op":"<=","value":-0}]`,
			"objectives[2]: the same objective as objectives[1] (reject_pct <= 0)"},
		{`[{"metric":"goodpt","op":">=","value":1}]`, `objectives[0].metric: unknown metric "goodpt": did you mean goodput_rps?`},
		{`[{"metric":"p99_ms","op":"<=","value":1}]`, `objectives[0].metric: unknown metric "p99_ms": did you mean sojourn_p99_ms, gate_delay_p99_ms or server_wait_p99_ms?`},
		{`[{"metric":"burst","op":"<=","value":10}]`, `objectives[0].metric: "burst" is a limiter parameter, a setting you choose, not a measure: name a measure such as goodput_rps or sojourn_p99_ms`},
		{`[{"metric":"rate_rps","op":"<=","value":10}]`, `objectives[0].metric: "rate_rps" is a limiter parameter, a setting you choose, not a measure: name a measure such as goodput_rps or sojourn_p99_ms`},
	} {
		_, err := document.DecodeConfig([]byte(base + tc.objectives + "}"))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.objectives, err, tc.want)
		}
		if err != nil && strings.Count(err.Error(), "objectives[") > 2 {
			t.Errorf("%s: %v names an objective more than once", tc.objectives, err)
		}
	}
}
