package sweep_test

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// sameFiles fails t when got's files are not want's bytes.
func sameFiles(t *testing.T, what string, got, want *experiments.Result) {
	t.Helper()
	enginetest.SameFiles(t, what, enginetest.ResultFiles(t, got), enginetest.ResultFiles(t, want))
}

// TestFollowedLoadsWriteTheSameBytes: the points of a load held in memory
// that follow it as it is read (the default) write the same bytes as when
// it is read whole before they run, at 1, 2 and 16 workers, read in the
// default chunks or in hundreds of small ones (the points wait for the
// reader), for the presets whose points run the forward pass (the others
// are read first, as before) and with curves on and off.
func TestFollowedLoadsWriteTheSameBytes(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"token-vs-leaky", "flash-crowd", "boundary", "weighted-tiers", "retry-storm"} {
		cfg, err := presets.Config(name)
		if err != nil {
			t.Fatal(err)
		}
		run := func(opt sweep.Options) *experiments.Result {
			res, err := sweep.Run(context.Background(), cfg, opt)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res
		}
		want := run(sweep.WithoutFollow(sweep.Options{Workers: 1}))
		for _, workers := range []int{1, 2, 16} {
			for _, chunk := range []int{0, 97} {
				opt := sweep.WithFollowChunk(sweep.Options{Workers: workers}, chunk)
				got := run(opt)
				if !reflect.DeepEqual(got.Points, want.Points) || !reflect.DeepEqual(got.ArrivalCurves, want.ArrivalCurves) || got.Arrivals != want.Arrivals {
					t.Fatalf("%s workers %d chunk %d: the result differs from the load read first", name, workers, chunk)
				}
				sameFiles(t, name, got, want)
				opt.NoCurves = true
				sameFiles(t, name+" without curves", run(opt), want)
			}
		}
	}
}

// TestFollowedLoadPastItsLimitStreams: a load followed by its points that
// turns out to hold more arrivals than a load in memory may is streamed,
// as a load read first is, and measures the same.
func TestFollowedLoadPastItsLimitStreams(t *testing.T) {
	t.Parallel()
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		base := sweep.WithStreamBatch(sweep.WithStreamCache(sweep.Options{Workers: workers}, 200), 64)
		want, err := sweep.Run(context.Background(), cfg, sweep.WithoutFollow(base))
		if err != nil {
			t.Fatal(err)
		}
		got, err := sweep.Run(context.Background(), cfg, sweep.WithFollowChunk(sweep.WithFollowAny(base), 50))
		if err != nil {
			t.Fatal(err)
		}
		if want.ArrivalCurves != nil || got.ArrivalCurves != nil || got.Arrivals <= 200 {
			t.Fatalf("workers %d: %d arrivals, curves %v %v: the load did not stream", workers, got.Arrivals, got.ArrivalCurves != nil, want.ArrivalCurves != nil)
		}
		if !reflect.DeepEqual(got.Points, want.Points) {
			t.Fatalf("workers %d: a followed load past its limit measures other points than a streamed one", workers)
		}
		sameFiles(t, "past the limit", got, want)
	}
}

// TestFollowedLoadsErrorsComeFirst: a load whose reading fails while
// its points follow it (a trace whose text gains a bad line after the
// first read, which counted 5,000 good ones) fails the sweep with the
// load's error, as when it is read first.
func TestFollowedLoadsErrorsComeFirst(t *testing.T) {
	t.Parallel()
	var good strings.Builder
	good.WriteString("t_ms,client\n")
	for i := range 5000 {
		fmt.Fprintf(&good, "%d,c%d\n", i, i%3)
	}
	bad := good.String() + "oops,a\n"
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "name": "t",
  "workload": {"duration_ms": 10000, "parts": [{"type": "trace", "file": "t.csv"}]},
  "server": {"workers": 1, "service_ms": 1, "deadline_ms": 100},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": [1, 2, 3]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, follow := range []bool{false, true} {
		var mu sync.Mutex
		opens := 0
		opt := sweep.WithFollowChunk(sweep.Options{Workers: 2, Traces: func(string) (io.ReadCloser, error) {
			mu.Lock()
			defer mu.Unlock()
			opens++
			if opens == 1 {
				return io.NopCloser(strings.NewReader(good.String())), nil
			}
			return io.NopCloser(strings.NewReader(bad)), nil
		}}, 100)
		if !follow {
			opt = sweep.WithoutFollow(opt)
		}
		_, err := sweep.Run(context.Background(), cfg, opt)
		if err == nil {
			t.Fatalf("follow %v: no error from a trace that gained a bad line", follow)
		}
		errs = append(errs, err.Error())
	}
	if errs[0] != errs[1] {
		t.Errorf("followed: %s\nread first: %s", errs[1], errs[0])
	}
}
