package charts

import (
	"strings"
	"testing"
)

// The instances section: on a replicated point, the effective limit
// against the configured one and a line per instance; none on a run of
// one gate.
func TestInstancesSection(t *testing.T) {
	res := runPreset(t, "traefik-three-pods")
	var g *Group
	for _, x := range NewView(res, 1).Groups() { // three-pods
		if x.ID == "instances" {
			g = x
		}
	}
	if g == nil || len(g.Charts) != 2 {
		t.Fatalf("three-pods: instances section %+v, want 2 charts", g)
	}
	for _, want := range []string{"configured limit", "all instances"} {
		if !strings.Contains(g.Charts[0].Option, want) {
			t.Errorf("effective chart lacks %q", want)
		}
	}
	for _, want := range []string{"instance 0", "instance 1", "instance 2"} {
		if !strings.Contains(g.Charts[1].Option, want) {
			t.Errorf("per-instance chart lacks %q", want)
		}
	}
	for _, x := range presetView(t, "boundary").Groups() {
		if x.ID == "instances" {
			t.Error("boundary (one gate per point) has an instances section")
		}
	}
}
