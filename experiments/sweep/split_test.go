package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// TestSplitPassesWriteTheSame: a streamed sweep of fewer points than
// workers splits each point's pass (its measures on goroutines of their
// own): every file is the same bytes as with no pass split, at 2 and 16
// workers, for one point and for three.
func TestSplitPassesWriteTheSame(t *testing.T) {
	for _, limiters := range []string{
		`[{"type": "token-bucket", "rate_rps": 45000, "burst": 100}]`,
		`[{"type": "token-bucket", "rate_rps": 45000, "burst": [10, 1000]}, {"type": "fixed-window", "limit": 400, "window_ms": 10}]`,
	} {
		cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 3,
			"workload": {"duration_ms": 3000, "parts": [{"type": "clients", "group": "c", "clients": 4, "rate_rps": 12500, "arrival": "poisson"}]},
			"server": {"workers": 40, "service_ms": 1, "deadline_ms": 3},
			"metrics": {"fairness_window_ms": 250},
			"limiters": ` + limiters + `}`))
		if err != nil {
			t.Fatal(err)
		}
		files := func(opt sweep.Options) []output.File {
			res, err := sweep.Run(context.Background(), cfg, sweep.WithStreamCache(opt, 0))
			if err != nil {
				t.Fatal(err)
			}
			return enginetest.ResultFiles(t, res)
		}
		for _, workers := range []int{2, 16} {
			want := files(sweep.WithoutSplit(sweep.Options{Workers: workers}))
			got := files(sweep.Options{Workers: workers})
			enginetest.SameFiles(t, fmt.Sprintf("%s split at %d workers", limiters, workers), got, want)
		}
	}
}

// TestSplitPassesEnd: a split pass cancelled midway returns the
// context's error, and its measuring goroutines end with it.
func TestSplitPassesEnd(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 3,
		"workload": {"duration_ms": 3000, "parts": [{"type": "poisson", "rate_rps": 50000}]},
		"server": {"workers": 40, "service_ms": 1, "deadline_ms": 3},
		"limiters": [{"type": "token-bucket", "rate_rps": 45000, "burst": 100}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt := sweep.Options{Workers: 2, Reading: func(_, _, _ int, read float64) {
		if read > 0.3 {
			cancel()
		}
	}}
	if _, err := sweep.Run(ctx, cfg, sweep.WithStreamBatch(sweep.WithStreamCache(opt, 0), 1000)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	for range 100 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines before the sweeps, %d after", before, runtime.NumGoroutine())
}
