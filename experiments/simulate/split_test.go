package simulate_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/simulate"
	"github.com/ratelab/ratelab/experiments/workload"
)

// streamPoint runs point pt's forward pass over arrivals a fed in
// batches of random sizes (up to most), split on goroutines or not; it
// reports whether the pass was split.
func streamPoint(cfg *experiments.Config, a *workload.Arrivals, pt *experiments.Point, split bool, seed uint64, most int) (bool, error) {
	f, err := simulate.NewForwardPass(context.Background(), cfg, pt, a.Clients, len(a.Groups), nil)
	if err != nil {
		return false, err
	}
	defer f.Stop()
	was := split && f.Split()
	rng := rand.New(rand.NewPCG(seed, 3))
	for i := 0; i < a.Len(); {
		e := min(i+1+rng.IntN(most), a.Len())
		if err := f.Feed(a.T[i:e], a.Client[i:e]); err != nil {
			return was, err
		}
		i = e
	}
	return was, f.Finish()
}

// samePoints compares two runs of a point: the same error, or the same
// measures.
func samePoints(t *testing.T, what string, one, two *experiments.Point, err1, err2 error) {
	t.Helper()
	if fmt.Sprint(err1) != fmt.Sprint(err2) {
		t.Fatalf("%s: on one goroutine %v, split %v", what, err1, err2)
	}
	if err1 == nil && !reflect.DeepEqual(one, two) {
		t.Fatalf("%s: split, the point measures\n%+v\non one goroutine\n%+v", what, two.Metrics, one.Metrics)
	}
}

// TestSplitMeasuresTheSame: a forward pass split on goroutines (Split)
// measures what it measures on one, every field of the point, or fails
// with the same error: over random configs' forward-pass points fed in
// batches of random sizes, and over a load of many batches of the split
// stages (their ring wraps many times).
func TestSplitMeasuresTheSame(t *testing.T) {
	split := 0
	for seed := range uint64(300) {
		cfg, err := document.DecodeConfig(randomConfig(seed))
		if err != nil || cfg.Workload.Expected() > 30_000 {
			continue
		}
		a, err := workload.Generate(&cfg.Workload, cfg.Seed)
		if err != nil {
			continue
		}
		for _, pt := range cfg.Points() {
			if simulate.HoldsArrivals(cfg, &pt, &simulate.Switches{}) {
				continue
			}
			one, two := pt, pt
			_, err1 := streamPoint(cfg, a, &one, false, seed, 9000)
			was, err2 := streamPoint(cfg, a, &two, true, seed, 9000)
			samePoints(t, fmt.Sprintf("seed %d, point %d", seed, pt.Index), &one, &two, err1, err2)
			if was {
				split++
			}
		}
	}
	if split < 100 {
		t.Fatalf("only %d random points were split", split)
	}
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 4,
		"workload": {"duration_ms": 2000, "parts": [{"type": "clients", "group": "c", "clients": 3, "rate_rps": 40000, "arrival": "poisson"}]},
		"server": {"workers": 50, "service_ms": 1, "deadline_ms": 5},
		"metrics": {"fairness_window_ms": 100, "rolling_window_ms": 250},
		"limiters": [{"type": "token-bucket", "rate_rps": 90000, "burst": [10, 5000]}, {"type": "sliding-window-log", "limit": 9000, "window_ms": 100}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, err := workload.Generate(&cfg.Workload, cfg.Seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range cfg.Points() {
		one, two := pt, pt
		_, err1 := streamPoint(cfg, a, &one, false, 1, 70_000)
		was, err2 := streamPoint(cfg, a, &two, true, 1, 70_000)
		if !was {
			t.Fatalf("point %d was not split", pt.Index)
		}
		samePoints(t, fmt.Sprintf("point %d", pt.Index), &one, &two, err1, err2)
	}
}
