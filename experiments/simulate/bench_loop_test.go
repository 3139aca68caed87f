package simulate_test

import (
	"context"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/simulate"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/experiments/workload"
)

// BenchmarkForwardPassInTheLoop is the seed lab's token-bucket burst sweep
// (the scaled seed model over 1 000 s, 117 030 arrivals, 10 points) on the
// forward pass's own loop ("forward") and in the event loop one arrival at
// a time ("loop", as a gate with hooks runs): what the fast path saves,
// in ns per request per point.
func BenchmarkForwardPassInTheLoop(b *testing.B) {
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 1,
  "workload": {"duration_ms": 1000000, "parts": [
    {"type": "demand-curve", "segments": [{"rate_rps": 20, "duration_ms": 1000}, {"rate_rps": 600, "duration_ms": 200}]}]},
  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 200},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": [1, 2, 4, 8, 12, 16, 20, 28, 40, 80]}]}`))
	if err != nil {
		b.Fatal(err)
	}
	arrivals, err := workload.Generate(&cfg.Workload, cfg.Seed)
	if err != nil {
		b.Fatal(err)
	}
	for _, model := range []simulate.ModelSwitch{simulate.SwitchNone, simulate.SwitchForwardInLoop} {
		name := map[simulate.ModelSwitch]string{simulate.SwitchNone: "forward", simulate.SwitchForwardInLoop: "loop"}[model]
		b.Run(name, func(b *testing.B) {
			opt := sweep.Options{Workers: 1}
			opt.Simulate.Model = model
			for b.Loop() {
				if _, err := sweep.RunArrivals(context.Background(), cfg, arrivals, opt); err != nil {
					b.Fatal(err)
				}
			}
			reqs := float64(b.N) * float64(arrivals.Len()) * float64(len(cfg.Points()))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/reqs, "ns/req")
		})
	}
}
