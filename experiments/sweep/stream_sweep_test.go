package sweep_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// withoutCurves is a point as the streaming path measures it: everything
// but the empirical output curve, which needs every release.
func withoutCurves(p experiments.Point) experiments.Point {
	p.OutputCurve = nil
	return p
}

// TestStreamingMeasuresWhatMemoryDoes: every preset, run with its arrivals
// streamed (in batches shared by the points) instead of held in memory,
// measures every point the same; only the empirical arrival curves, which
// need the whole trace, are left out. The presets take 1, 2 and 3 workers
// in turn (a third of them each): that a stream's outputs are the same at
// every worker count, in batches of every size, is
// TestStreamedOutputsAreTheSameAtEveryWorkerCount's, so each preset is
// streamed once.
func TestStreamingMeasuresWhatMemoryDoes(t *testing.T) {
	t.Parallel()
	for pi, p := range presets.All() {
		t.Run(p.Name, func(t *testing.T) {
			cfg, err := presets.Config(p.Name)
			if err != nil {
				t.Fatal(err)
			}
			want, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{1 + pi%3} {
				got, err := sweep.Run(context.Background(), cfg, sweep.WithStreamCache(sweep.Options{Workers: workers}, 0))
				if err != nil {
					t.Fatal(err)
				}
				if got.Arrivals != want.Arrivals || !reflect.DeepEqual(got.LoadArrivals, want.LoadArrivals) || !reflect.DeepEqual(got.Clients, want.Clients) {
					t.Fatalf("workers %d: %d arrivals %v, want %d %v", workers, got.Arrivals, got.LoadArrivals, want.Arrivals, want.LoadArrivals)
				}
				for i := range want.Points {
					g, w := withoutCurves(got.Points[i]), withoutCurves(want.Points[i])
					if !reflect.DeepEqual(g, w) {
						gj, _ := json.Marshal(g)
						wj, _ := json.Marshal(w)
						t.Fatalf("workers %d: point %d streamed:\n%s\nin memory:\n%s", workers, i, clip(gj), clip(wj))
					}
				}
			}
		})
	}
}

func clip(b []byte) string {
	if len(b) > 3000 {
		return string(b[:3000]) + "…"
	}
	return string(b)
}

// TestStreamedOutputsAreTheSameAtEveryWorkerCount: a sweep over a stream
// writes the same bytes with 1 to 4 workers, in batches of the default
// size or in hundreds of small batches (the workers' points drift apart
// by up to the producer's ring).
func TestStreamedOutputsAreTheSameAtEveryWorkerCount(t *testing.T) {
	t.Parallel()
	doc := `{"version": 1, "seed": 7,
  "workload": {"duration_ms": 60000, "parts": [
    {"type": "clients", "group": "c", "clients": 30, "rate_rps": 10, "arrival": "poisson"},
    {"type": "poisson", "client": "heavy", "rate_rps": 300}]},
  "server": {"workers": 2, "service_ms": 4, "deadline_ms": 100},
  "limiters": [
    {"type": "token-bucket", "rate_rps": 400, "burst": [1, 10, 100]},
    {"type": "sliding-window-log", "limit": [200, 400], "window_ms": 1000},
    {"type": "per-client-token-bucket", "rate_rps": 500, "burst": 60}]}`
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var first []output.File
	for run := 0; run < 8; run++ {
		workers := run%4 + 1
		opt := sweep.WithStreamCache(sweep.Options{Workers: workers}, 1000)
		if run >= 4 {
			opt = sweep.WithStreamBatch(opt, 97)
		}
		res, err := sweep.Run(context.Background(), cfg, opt)
		if err != nil {
			t.Fatal(err)
		}
		if res.ArrivalCurves != nil {
			t.Fatal("a streamed run has the offered arrival curve")
		}
		files, err := output.Files(res)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = files
			continue
		}
		for i := range files {
			if string(files[i].Data) != string(first[i].Data) {
				t.Fatalf("workers %d (run %d): %s differs from workers 1", workers, run, files[i].Name)
			}
		}
	}
}

// TestStreamPassesMeasureWhatOnePassDoes: a sweep with more points than
// share one pass opens its stream again per pass and measures the same.
func TestStreamPassesMeasureWhatOnePassDoes(t *testing.T) {
	t.Parallel()
	cfg, err := document.DecodeConfig([]byte(enginetest.WindowDoc(30_000, "")))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Limiters[0].Params["burst"] = limiter.Values{1, 2, 3, 5, 8, 13}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	want, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	got, err := sweep.Run(context.Background(), cfg, sweep.WithMaxLivePoints(sweep.WithStreamCache(sweep.Options{Workers: 2}, 100), 3))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Points) != 7 || got.Arrivals != want.Arrivals {
		t.Fatalf("%d points, %d arrivals; want 7, %d", len(got.Points), got.Arrivals, want.Arrivals)
	}
	for i := range want.Points {
		if !reflect.DeepEqual(withoutCurves(got.Points[i]), withoutCurves(want.Points[i])) {
			t.Fatalf("point %d differs when streamed in passes of 3", i)
		}
	}
}

// TestStreamedPassesSayHowFarTheyRead: while a streamed pass runs,
// Options.Reading hears the runs done of total (Progress's counts, the
// total before Progress has said it: each replication a run; "2/1 points"
// was printed when lab run counted points), how many it runs and how far
// through the load it has read, rising from above 0 to 1 within each pass,
// then Progress counts the pass's runs; serialized, so the counts
// interleave in order: three points of two replications, two passes of 3
// runs over 60 s read in batches of 500.
func TestStreamedPassesSayHowFarTheyRead(t *testing.T) {
	t.Parallel()
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 3,
  "workload": {"duration_ms": 60000, "parts": [{"type": "poisson", "rate_rps": 200}]},
  "server": {"workers": 2, "service_ms": 4, "deadline_ms": 100},
  "replications": 2,
  "limiters": [{"type": "token-bucket", "rate_rps": 150, "burst": [1, 3, 8]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	type heard struct {
		done, points int
		read         float64
	}
	const runs = 6
	var log []heard
	done := 0
	opt := sweep.Options{Workers: 2,
		Progress: func(d, total int) {
			if total != runs {
				t.Errorf("progress of %d runs, want %d", total, runs)
			}
			done = d
			log = append(log, heard{done: d})
		},
		Reading: func(d, total, points int, read float64) {
			if d != done || total != runs {
				t.Errorf("reading at %d of %d runs, Progress said %d of %d", d, total, done, runs)
			}
			log = append(log, heard{done: d, points: points, read: read})
		},
	}
	opt = sweep.WithStreamBatch(sweep.WithMaxLivePoints(sweep.WithStreamCache(opt, 1000), 3), 500)
	res, err := sweep.Run(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Arrivals < 10_000 {
		t.Fatalf("%d arrivals: the load is not streamed in many batches", res.Arrivals)
	}
	passes, reads, last := 0, 0, 0.0
	for i, h := range log {
		if h.points == 0 { // a Progress call: the pass's points are done
			if h.done != 3*(passes+1) || last != 1 {
				t.Fatalf("call %d: %d points done after a pass that read to %g; want %d, read to 1", i, h.done, last, 3*(passes+1))
			}
			passes, last = passes+1, 0
			continue
		}
		reads++
		if h.points != 3 || !(h.read > last) || h.read > 1 || h.done != 3*passes {
			t.Fatalf("call %d: %+v after reading to %g in pass %d: want 3 points, more read than before, at most 1", i, h, last, passes)
		}
		last = h.read
	}
	if passes != 2 || reads < 2*res.Arrivals/500 {
		t.Fatalf("%d passes, %d reading calls for %d arrivals in batches of 500", passes, reads, res.Arrivals)
	}
}
