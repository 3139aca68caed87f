package charts

import (
	"strings"
	"testing"
)

// The adaptive section: on capacity-drop's page, each adaptive limiter's
// limit over time and the server's ideal concurrency (10, 5 during the
// drop), as the engine filed them; none on a run without adaptive gates.
func TestAdaptiveSectionOnAdaptiveRunsOnly(t *testing.T) {
	var sec *Group
	for _, g := range presetView(t, "capacity-drop").Groups() {
		if g.ID == "adaptive" {
			sec = g
		}
	}
	if sec == nil || len(sec.Charts) != 2 {
		t.Fatalf("capacity-drop's page: adaptive section %+v, want 2 charts", sec)
	}
	for _, want := range []string{"ideal concurrency", "aimd", "vegas", "envoy", "failsafe-go", "[20000,10]", "[20100,5]", "[40000,5]", "[40100,10]"} {
		if !strings.Contains(sec.Charts[0].Option, want) {
			t.Errorf("the limit chart lacks %q", want)
		}
	}
	for _, g := range presetView(t, "boundary").Groups() {
		if g.ID == "adaptive" {
			t.Error("boundary's page (no adaptive gate) has an adaptive section")
		}
	}
}
