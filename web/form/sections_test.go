package form

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
)

// TestSectionSummaries: each folded section's line names what it holds,
// as the rule in sections.go writes it (static/app.js writes the same;
// the browser test compares them).
func TestSectionSummaries(t *testing.T) {
	cfg, err := presets.Config("slo-load-control")
	if err != nil {
		t.Fatal(err)
	}
	f := FromConfig(cfg)
	if got := f.advancedSummary(); !strings.HasPrefix(got, "class_draw, classes 2, decision, loads 8, servers 2, slo, Rolling window 1000 ms") {
		t.Errorf("advanced: %q", got)
	}
	if got := f.objectivesSummary(); got != "critical_success_pct >= 99" {
		t.Errorf("objectives: %q", got)
	}
	p := Part{Type: "poisson", Fields: map[string]string{"rate_rps": "90", "retries": "3", "backoff": "exponential", "timeout_ms": "500", "arrival": "poisson"}}
	if got := clientsSummary(p); got != "Timeout 500 ms, Retries 3, Backoff growth exponential" {
		t.Errorf("clients: %q (arrival is no poisson part's field)", got)
	}
	if got := clientsSummary(Part{Type: "poisson"}); got != ClientsEmpty {
		t.Errorf("empty clients: %q", got)
	}
	if got := instancesSummary(Limiter{Params: map[string]string{"instances": "3"}}); got != "Instances 3 instances" {
		t.Errorf("instances: %q", got)
	}
	if got := keysItem("M", `{"loads": [1, 2], "slo": {}}`); got != "loads 2, slo" {
		t.Errorf("keys: %q", got)
	}
	if got := keysItem("M", `[1]`); got != "M" {
		t.Errorf("keys of a list: %q", got)
	}
}
