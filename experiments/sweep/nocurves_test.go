package sweep_test

import (
	"context"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// TestNoCurvesWritesTheSameFiles: a sweep without the empirical curves
// (Options.NoCurves, lab run's) has none, and every file output writes
// from it is the same bytes as with them, for presets of each model: the
// forward pass (token-vs-leaky, flash-crowd), replications (heavy-tail),
// the client model (retry-storm), the queue model (load-shedding).
func TestNoCurvesWritesTheSameFiles(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"token-vs-leaky", "flash-crowd", "heavy-tail", "retry-storm", "load-shedding"} {
		cfg, err := presets.Config(name)
		if err != nil {
			t.Fatal(err)
		}
		with, err := sweep.Run(context.Background(), cfg, sweep.Options{})
		if err != nil {
			t.Fatal(err)
		}
		without, err := sweep.Run(context.Background(), cfg, sweep.Options{NoCurves: true, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if with.ArrivalCurves == nil || with.Points[0].OutputCurve == nil {
			t.Fatalf("%s: no curves to leave out", name)
		}
		if without.ArrivalCurves != nil {
			t.Errorf("%s: arrival curves with NoCurves", name)
		}
		for i := range without.Points {
			if without.Points[i].OutputCurve != nil {
				t.Errorf("%s point %d: an output curve with NoCurves", name, i)
			}
		}
		enginetest.SameFiles(t, name+" without the curves", enginetest.ResultFiles(t, without), enginetest.ResultFiles(t, with))
	}
}
