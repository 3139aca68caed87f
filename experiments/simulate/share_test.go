package simulate_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/simulate"
	"github.com/ratelab/ratelab/experiments/workload"
)

// TestLoadShareOffered: forward-pass points given their load's share
// (Instruments.ShareLoad) measure what they measure without it, their
// offered series one slice counted once; a point fed other arrivals than
// the share's (a copy of the times) counts its own.
func TestLoadShareOffered(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 3,
  "workload": {"duration_ms": 20000, "parts": [{"type": "poisson", "rate_rps": 400}]},
  "server": {"workers": 1, "service_ms": 3, "deadline_ms": 50},
  "limiters": [{"type": "token-bucket", "rate_rps": 300, "burst": [1, 20]}, {"type": "leaky-bucket", "rate_rps": 300, "queue": 8}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, err := workload.Generate(&cfg.Workload, cfg.Seed)
	if err != nil {
		t.Fatal(err)
	}
	share := simulate.NewLoadShare(a.T)
	other := *a
	other.T = slices.Clone(a.T)
	var first []int32
	for i, pt := range cfg.Points() {
		alone, shared := pt, pt
		if err := simulate.Point(context.Background(), cfg, a, nil, new(simulate.Instruments), &alone, &simulate.Switches{}); err != nil {
			t.Fatal(err)
		}
		in := new(simulate.Instruments)
		in.ShareLoad(share)
		if err := simulate.Point(context.Background(), cfg, a, nil, in, &shared, &simulate.Switches{}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(alone.Series.Offered, shared.Series.Offered) || !slices.Equal(alone.Series.Rejected, shared.Series.Rejected) ||
			!slices.Equal(alone.Series.Released, shared.Series.Released) || alone.Metrics.Rejected != shared.Metrics.Rejected {
			t.Errorf("point %d: the shared offered series changed what it measures", i)
		}
		if i == 0 {
			first = shared.Series.Offered
		} else if &shared.Series.Offered[0] != &first[0] {
			t.Errorf("point %d: its offered series is not the share's", i)
		}
		fed := pt
		if err := simulate.Point(context.Background(), cfg, &other, nil, in, &fed, &simulate.Switches{}); err != nil {
			t.Fatal(err)
		}
		if &fed.Series.Offered[0] == &first[0] || !slices.Equal(fed.Series.Offered, first) {
			t.Errorf("point %d fed other arrivals: offered series shared, or counted differently", i)
		}
	}
}
