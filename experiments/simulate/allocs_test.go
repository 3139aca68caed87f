package simulate_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/simulate"
	"github.com/ratelab/ratelab/experiments/workload"
)

// countingGate observes completions and only counts them: it allocates
// nothing.
type countingGate struct {
	limiter.Gate
	heard int
}

func (g *countingGate) Complete(limiter.Completion) { g.heard++ }

// TestLoopAllocatesPerPointNotPerEvent: a worker's point in the event loop
// allocates what the point needs (its series, its results), not per
// event: on every model, with a gate that observes (completions in the
// heap) and without, a run four times as long allocates at most a few
// more times (slices that grow by doubling), with the worker's
// Instruments kept across points as the sweep keeps them.
func TestLoopAllocatesPerPointNotPerEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts: a long test")
	}
	clients := `, "timeout_ms": 30, "retries": 2, "backoff_ms": 20`
	for _, c := range []struct{ name, part, server string }{
		{"queue", "", `, "discipline": "lifo", "door": "tail-drop", "bound": 20`},
		{"clients", clients, ""},
		{"clients-queue", clients, `, "door": "tail-drop", "bound": 10`},
		{"clients-events", clients, `, "discipline": "lifo", "door": "tail-drop", "bound": 10, "cancel_on_timeout": "drop-unstarted"`},
	} {
		for _, observe := range []bool{false, true} {
			allocs := func(durationMS int) float64 {
				cfg, err := document.DecodeConfig(fmt.Appendf(nil, `{"version": 1, "seed": 5,
  "workload": {"duration_ms": %d, "parts": [{"type": "poisson", "rate_rps": 300%s}]},
  "server": {"workers": 2, "service_ms": 8, "deadline_ms": 40%s},
  "limiters": [{"type": "token-bucket", "rate_rps": 260, "burst": 20}]}`, durationMS, c.part, c.server))
				if err != nil {
					t.Fatal(err)
				}
				a, err := workload.Generate(&cfg.Workload, cfg.Seed)
				if err != nil {
					t.Fatal(err)
				}
				var sw simulate.Switches
				if observe {
					sw.Gate = func(g limiter.Gate, _ limiter.Occupancy) limiter.Gate { return &countingGate{Gate: g} }
				}
				in := new(simulate.Instruments)
				pts := cfg.Points()
				run := func() {
					pt := pts[0]
					if err := simulate.Point(context.Background(), cfg, a, nil, in, &pt, &sw); err != nil {
						t.Fatal(err)
					}
				}
				run() // the worker's buffers grow once
				return testing.AllocsPerRun(3, run)
			}
			short, long := allocs(5_000), allocs(20_000)
			if long > short+8 {
				t.Errorf("%s (observed: %v): %g allocations for 5 s, %g for 20 s: allocations per event", c.name, observe, short, long)
			}
		}
	}
}
