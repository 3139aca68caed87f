package web

import (
	"context"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/presets"
)

func presetView(t *testing.T, name string) *ResultView {
	t.Helper()
	cfg, err := presets.Config(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return NewResultView(res, -1)
}

func TestRecoverySectionOnFlashCrowdRunsOnly(t *testing.T) {
	var rec *ChartGroup
	for _, g := range presetView(t, "flash-crowd").Groups() {
		if g.ID == "recovery" {
			rec = g
		}
	}
	if rec == nil {
		t.Fatal("flash-crowd run page has no recovery section")
	}
	if len(rec.Charts) != 3 {
		t.Fatalf("recovery section has %d charts, want 3", len(rec.Charts))
	}
	// The bar chart carries the measured recovery times (flash-crowd
	// preset: token bucket 9400 ms, per-client bucket 1500 ms).
	for _, want := range []string{"9400", "1500", "token-bucket"} {
		if !strings.Contains(rec.Charts[0].Option, want) {
			t.Errorf("recovery chart option lacks %q", want)
		}
	}
	for _, g := range presetView(t, "boundary").Groups() {
		if g.ID == "recovery" {
			t.Error("boundary run (no flash crowd) has a recovery section")
		}
	}
}
