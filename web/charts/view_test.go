package charts

import (
	"context"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// runDoc runs a config document.
func runDoc(t *testing.T, doc string) *experiments.Result {
	t.Helper()
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return run(t, cfg)
}

// runPreset runs a preset.
func runPreset(t *testing.T, name string) *experiments.Result {
	t.Helper()
	cfg, err := presets.Config(name)
	if err != nil {
		t.Fatal(err)
	}
	return run(t, cfg)
}

func run(t *testing.T, cfg *experiments.Config) *experiments.Result {
	t.Helper()
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// presetView is the default view of a preset's run.
func presetView(t *testing.T, name string) *View {
	t.Helper()
	return NewView(runPreset(t, name), -1)
}

// TestChosenPointOfTwoParameterSweep: the time-series charts show the
// point chosen in the results table, not the first point of its limiter
// with the same swept value (rate_rps=50 burst=5 was shown for
// rate_rps=150 burst=5, under a title naming the chosen point).
func TestChosenPointOfTwoParameterSweep(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[
		{"type":"poisson","rate_rps":90}]},
		"limiters":[{"type":"token-bucket","rate_rps":[50,150],"burst":[1,5]},{"type":"leaky-bucket","rate_rps":100,"queue":[1,5]}]}`)
	for i := range res.Points {
		p := &res.Points[i]
		v := NewView(res, i)
		if got := v.Step[p.LimiterIndex]; got != i {
			q := &res.Points[got]
			t.Errorf("chose %s, the charts show %s", v.pointLabel(p), v.pointLabel(q))
		}
	}
}
