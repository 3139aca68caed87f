package sweep_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// TestCancelKeepsFinishedPoints: a sweep cancelled after k points have
// finished returns the context's error and a partial result holding the
// first points of the sweep, each equal to the whole run's, at 1 and 3
// workers, in memory and streamed; a sweep cancelled before any point
// finished returns no result.
func TestCancelKeepsFinishedPoints(t *testing.T) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		for _, workers := range []int{1, 3} {
			ctx, cancel := context.WithCancel(context.Background())
			opt := sweep.Options{Workers: workers, Progress: func(done, total int) {
				if done >= 5 {
					cancel()
				}
			}}
			if stream {
				opt = sweep.WithStreamCache(opt, 0)
			}
			res, err := sweep.Run(ctx, cfg, opt)
			cancel()
			if stream {
				// A streamed load's points finish together, at the end of
				// their pass: cancelled in it, none is kept.
				if !errors.Is(err, context.Canceled) && err != nil {
					t.Fatalf("streamed: %v", err)
				}
				continue
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("workers %d: err %v, want context.Canceled", workers, err)
			}
			if res == nil || res.Partial == nil {
				t.Fatalf("workers %d: no partial result", workers)
			}
			k := res.Partial.PointsDone
			if k < 5-workers+1 || k != len(res.Points) || res.Partial.PointsTotal != len(whole.Points) || k >= len(whole.Points) {
				t.Fatalf("workers %d: partial %+v with %d points", workers, res.Partial, len(res.Points))
			}
			if res.Arrivals != whole.Arrivals {
				t.Errorf("workers %d: %d arrivals, want %d", workers, res.Arrivals, whole.Arrivals)
			}
			for i := range res.Points {
				if !reflect.DeepEqual(res.Points[i], whole.Points[i]) {
					t.Fatalf("workers %d: point %d differs from the whole run's", workers, i)
				}
			}
			files, err := output.Files(res)
			if err != nil {
				t.Fatalf("outputs of a partial result: %v", err)
			}
			if m := string(files[len(files)-1].Data); !strings.Contains(m, `"partial": {`) {
				t.Error("the manifest of a partial result does not say so")
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := sweep.Run(ctx, cfg, sweep.Options{Workers: 2}); res != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before it began: %v, %v", res, err)
	}
}

// A replicated sweep cancelled midway keeps the points all of whose runs
// finished, each with the whole run's means.
func TestCancelKeepsWholeReplicatedPoints(t *testing.T) {
	cfg := enginetest.Decode(t, enginetest.ReplicatedDoc)
	whole, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := sweep.Run(ctx, cfg, sweep.Options{Workers: 1, Progress: func(done, total int) {
		if done >= total/2+2 { // the first rate's loads (all their runs) are done
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || res == nil || res.Partial == nil {
		t.Fatalf("err %v, result %v", err, res)
	}
	if res.Partial.PointsDone != 1 || len(res.Points) != 1 || len(res.Replicas) != cfg.Replicas() || res.Partial.PointsTotal != len(whole.Points) {
		t.Fatalf("partial %+v: %d points, %d runs", res.Partial, len(res.Points), len(res.Replicas))
	}
	for i := range res.Points {
		if !reflect.DeepEqual(res.Points[i].Stats, whole.Points[i].Stats) {
			t.Fatalf("point %d: means differ from the whole run's", i)
		}
	}
}
