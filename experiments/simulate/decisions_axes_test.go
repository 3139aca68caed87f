package simulate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/simulate"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// TestDiffReplaysThePointsArrivals: the decision diff replays each point's
// own arrivals, with its swept workload value and listed seed: two points
// of a sweep over the offered rate (or over seeds) see different arrivals
// and are refused, and a point at the swept rate 200 replays 200 rps. It
// replayed the config's first seed and its load without the swept values:
// such points were diffed as if they saw the same requests.
func TestDiffReplaysThePointsArrivals(t *testing.T) {
	decode := func(doc string) *experiments.Config {
		cfg, err := document.DecodeConfig([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	rates := decode(`{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[{"type":"poisson","client":"api","rate_rps":[50,200]}]},
		"limiters":[{"type":"token-bucket","rate_rps":100,"burst":[5,20]}]}`)
	seeds := decode(`{"version":1,"seed":[1,2],"workload":{"duration_ms":2000,"parts":[{"type":"poisson","client":"api","rate_rps":80}]},
		"limiters":[{"type":"token-bucket","rate_rps":100,"burst":5}]}`)
	side := func(cfg *experiments.Config, i int) simulate.DiffSide {
		return simulate.DiffSide{Config: cfg, Point: i}
	}
	pts := rates.Points()
	if len(pts) != 4 {
		t.Fatalf("%d points", len(pts))
	}
	// Points 0 and 1: burst 5 at rates 50 and 200.
	if err := simulate.CheckDiff(side(rates, 0), side(rates, 1)); err == nil {
		t.Error("points at 50 and 200 rps: diffed as if they saw the same arrivals")
	}
	if err := simulate.CheckDiff(side(seeds, 0), side(seeds, 1)); err == nil || !strings.Contains(err.Error(), "seed 1 and 2") {
		t.Errorf("seeds 1 and 2: %v", err)
	}
	res, err := sweep.Run(context.Background(), rates, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Points 1 and 3: burst 5 and 20, both at 200 rps.
	sum, err := simulate.DiffDecisions(context.Background(), side(rates, 1), side(rates, 3), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Arrivals != int64(res.Points[1].Metrics.Arrivals) || sum.AdmittedA != int64(res.Points[1].Metrics.Admitted) || sum.AdmittedB != int64(res.Points[3].Metrics.Admitted) {
		t.Errorf("replayed %d arrivals, admitted %d and %d; the points had %d arrivals, admitted %d and %d",
			sum.Arrivals, sum.AdmittedA, sum.AdmittedB, res.Points[1].Metrics.Arrivals, res.Points[1].Metrics.Admitted, res.Points[3].Metrics.Admitted)
	}
}
