package charts

import (
	"strings"
	"testing"
)

// TestFlowSection: the weighted-tiers page shows, for each point with
// per-flow bounds and each tier, the tier's bound at the shared server
// beside its measured worst: 200 workers of 10 ms (R = 20/ms, T = 10 ms)
// behind a bucket of burst 100 give the FIFO bound 10 + 100/20 = 15 ms
// for every tier, blind multiplexing 15.1 ms for the per-client buckets
// and (200 + 200)/(20 - 0.1) = 20.1 ms for the work-conserving one (a
// client may take the whole global bucket), and the server never queues:
// measured 10 ms. The global token bucket has no per-flow bound.
func TestFlowSection(t *testing.T) {
	var sec *Group
	for _, g := range presetView(t, "weighted-tiers").Groups() {
		if g.ID == "flows" {
			sec = g
		}
	}
	if sec == nil || len(sec.Charts) != 1 {
		t.Fatalf("weighted-tiers has no per-flow section: %+v", sec)
	}
	o := sec.Charts[0].Option
	for _, want := range []string{
		`"per-client-weighted burst=100 · gold"`, `"per-client-weighted burst=100 · silver"`, `"work-conserving-weighted burst=100 · bronze"`,
		`"measured worst"`, `"FIFO bound"`, `"blind multiplexing bound"`, `"value":15`, `"value":10`, `"value":15.1`, `"value":20.1`,
	} {
		if !strings.Contains(o, want) {
			t.Errorf("the chart lacks %s: %.1500s", want, o)
		}
	}
	if strings.Contains(o, `token-bucket burst=100 · gold`) {
		t.Error("the global token bucket has per-flow bars")
	}
	for _, g := range presetView(t, "token-vs-leaky").Groups() {
		if g.ID == "flows" {
			t.Error("token-vs-leaky (one client) has a per-flow section")
		}
	}
}
