package output_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// reopened collects the files written, by name, a file opened again
// written anew; it counts the opens.
type reopened struct {
	mu    sync.Mutex
	files map[string]*bytes.Buffer
	opens map[string]int
}

func (w *reopened) open(name string) (io.Writer, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.files == nil {
		w.files, w.opens = map[string]*bytes.Buffer{}, map[string]int{}
	}
	b := new(bytes.Buffer)
	w.files[name] = b
	w.opens[name]++
	return b, nil
}

// sameAsFiles fails t unless outs and the files written are Files(res)'s.
func sameAsFiles(t *testing.T, res *experiments.Result, outs []output.Output, w *reopened) {
	t.Helper()
	want, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != len(want) || len(w.files) != len(want) {
		t.Fatalf("wrote %d files, listed %d, want %d", len(w.files), len(outs), len(want))
	}
	for i, f := range want {
		if o := outs[i]; o.Name != f.Name || o.SHA256 != f.SHA256() || o.Bytes != len(f.Data) {
			t.Errorf("listed %+v, want %s %s %d", o, f.Name, f.SHA256(), len(f.Data))
		}
		if got := w.files[f.Name]; got == nil || !bytes.Equal(got.Bytes(), f.Data) {
			t.Errorf("%s: the bytes written differ from Files'", f.Name)
		}
	}
}

// TestSeriesAheadIsFiles: series.csv written while the sweep runs
// (SeriesAhead told each point as it finishes) is Files' series.csv, at 1,
// 2 and 16 workers, with and without the client columns, and it is
// written once (not again by WriteAhead); a sweep with replications (told
// nothing) gets it from WriteAhead.
func TestSeriesAheadIsFiles(t *testing.T) {
	seed, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	seed.Workload.DurationMS = 1_000_000
	if err := seed.Validate(); err != nil {
		t.Fatal(err)
	}
	clients, err := document.DecodeConfig([]byte(`{"version":1,"seed":4,
		"workload":{"duration_ms":3000,"parts":[{"type":"poisson","client":"api","rate_rps":150}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":200},
		"limiters":[{"type":"token-bucket","rate_rps":90,"burst":[5,10]}],
		"policies":[{"name":"plain"},{"name":"retry","timeout_ms":150,"retries":2,"backoff_ms":30}]}`))
	if err != nil {
		t.Fatal(err)
	}
	replicated, err := document.DecodeConfig([]byte(`{"version":1,"seed":4,"replications":3,
		"workload":{"duration_ms":3000,"parts":[{"type":"poisson","rate_rps":150}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":200},
		"limiters":[{"type":"token-bucket","rate_rps":90,"burst":[5,10]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	quoted, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]*experiments.Config{"seed": seed, "clients": clients, "replicated": replicated, "quoted": quoted} {
		for _, workers := range []int{1, 2, 16} {
			t.Run(fmt.Sprintf("%s/workers=%d", name, workers), func(t *testing.T) {
				var w reopened
				ahead := output.NewSeriesAhead(w.open)
				defer ahead.Stop()
				res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: workers, Finished: ahead.Finished})
				if err != nil {
					t.Fatal(err)
				}
				outs, err := output.WriteAhead(res, w.open, ahead)
				if err != nil {
					t.Fatal(err)
				}
				sameAsFiles(t, res, outs, &w)
				if n := w.opens[experiments.FileSeries]; n != 1 {
					t.Errorf("series.csv opened %d times, want once", n)
				}
			})
		}
	}
}

// TestSeriesAheadWrittenAgain: a result whose series.csv SeriesAhead did
// not write whole is written again by WriteAhead, the bytes Files makes:
// a partial result (the points told were fewer, or more, than it keeps),
// and a result with the client columns that the config did not predict.
func TestSeriesAheadWrittenAgain(t *testing.T) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workload.DurationMS = 100_000
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	whole, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		told int                         // points told, from the first
		edit func(r *experiments.Result) // after they are told
	}{
		{"partial, fewer told", 3, func(r *experiments.Result) {
			r.Points = r.Points[:5:5]
			r.Partial = &experiments.Partial{PointsDone: 5, PointsTotal: 20}
		}},
		{"partial, more told", 7, func(r *experiments.Result) {
			r.Points = r.Points[:5:5]
			r.Partial = &experiments.Partial{PointsDone: 5, PointsTotal: 20}
		}},
		{"client columns", 20, func(r *experiments.Result) {
			r.Points[4].Series.Attempts = make([]int32, len(r.Points[4].Series.Offered))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := *whole
			res.Points = append([]experiments.Point(nil), whole.Points...)
			var w reopened
			ahead := output.NewSeriesAhead(w.open)
			defer ahead.Stop()
			for k := range c.told {
				ahead.Finished(&res, k)
			}
			c.edit(&res)
			outs, err := output.WriteAhead(&res, w.open, ahead)
			if err != nil {
				t.Fatal(err)
			}
			sameAsFiles(t, &res, outs, &w)
			if n := w.opens[experiments.FileSeries]; n != 2 {
				t.Errorf("series.csv opened %d times, want twice (ahead, then again)", n)
			}
		})
	}
}
