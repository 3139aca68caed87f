package charts

import (
	"context"
	"slices"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
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

// runPreset runs a preset, once per test binary however many tests chart
// it (a view only reads the result).
func runPreset(t *testing.T, name string) *experiments.Result {
	t.Helper()
	return enginetest.Preset(t, name, 0)
}

// runPresetAfresh runs a preset for a test that changes the result (as an
// older stored run would decode): not runPreset's shared one.
func runPresetAfresh(t *testing.T, name string) *experiments.Result {
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

// TestPointLabel: a point's label puts its other parameters in
// parentheses and its scenario after them. Before: "token-bucket
// (rate_rps=80, heavy) burst=2".
func TestPointLabel(t *testing.T) {
	doc := `{"version":1,"seed":1,
 "workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},
 "server":{"workers":1,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[40,80],"burst":[2,4]}],
 "loads":[{"name":"light"},{"name":"heavy","parts":[{"type":"constant","rate_rps":100}]}]}`
	v := NewView(runDoc(t, doc), -1)
	var labels []string
	for i := range v.Res.Points {
		labels = append(labels, v.pointLabel(&v.Res.Points[i]))
	}
	want := "token-bucket burst=4 (rate_rps=80), load heavy"
	if !slices.Contains(labels, want) {
		t.Errorf("labels %q, want one %q", labels, want)
	}
}
