package output_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// written collects the files Write writes, by name.
type written struct {
	mu    sync.Mutex
	files map[string]*bytes.Buffer
}

func (w *written) open(name string) (io.Writer, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.files == nil {
		w.files = map[string]*bytes.Buffer{}
	}
	if w.files[name] != nil {
		return nil, fmt.Errorf("%s opened twice", name)
	}
	b := new(bytes.Buffer)
	w.files[name] = b
	return b, nil
}

// TestWriteIsFiles: Write writes the bytes Files makes, lists them as
// Files' manifest does, in Files' order, on one core and on several:
// series.csv streamed in pieces of rows (the seed model at 1,000 s has
// 10,000 rows a point, so pieces end inside points) and with the client
// model's columns.
func TestWriteIsFiles(t *testing.T) {
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
		"limiters":[{"type":"token-bucket","rate_rps":90,"burst":10}],
		"policies":[{"name":"plain"},{"name":"retry","timeout_ms":150,"retries":2,"backoff_ms":30}]}`))
	if err != nil {
		t.Fatal(err)
	}
	quoted, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]*experiments.Config{"seed": seed, "clients": clients, "quoted": quoted} {
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := output.Files(res)
		if err != nil {
			t.Fatal(err)
		}
		for _, procs := range []int{1, 2, 5} {
			t.Run(fmt.Sprintf("%s/procs=%d", name, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				var w written
				outs, err := output.Write(res, w.open)
				if err != nil {
					t.Fatal(err)
				}
				if len(outs) != len(want) || len(w.files) != len(want) {
					t.Fatalf("wrote %d files, listed %d, want %d", len(w.files), len(outs), len(want))
				}
				for i, f := range want {
					o := outs[i]
					if o.Name != f.Name || o.SHA256 != f.SHA256() || o.Bytes != len(f.Data) {
						t.Errorf("listed %+v, want %s %s %d", o, f.Name, f.SHA256(), len(f.Data))
					}
					if got := w.files[f.Name]; got == nil || !bytes.Equal(got.Bytes(), f.Data) {
						t.Errorf("%s: the bytes written differ from Files'", f.Name)
					}
				}
			})
		}
	}
}

// failing fails its writes once it has taken limit bytes.
type failing struct {
	n, limit int
}

var errFull = errors.New("disk full")

func (f *failing) Write(b []byte) (int, error) {
	if f.n+len(b) > f.limit {
		return 0, errFull
	}
	f.n += len(b)
	return len(b), nil
}

// TestWriteStopsAtAWriteError: a write that fails in series.csv's pieces
// ends Write with the error, naming the file (no goroutine left waiting).
func TestWriteStopsAtAWriteError(t *testing.T) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workload.DurationMS = 1_000_000
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 5} {
		runtime.GOMAXPROCS(procs)
		_, err := output.Write(res, func(name string) (io.Writer, error) {
			if name == experiments.FileSeries {
				return &failing{limit: 1 << 20}, nil
			}
			return io.Discard, nil
		})
		if !errors.Is(err, errFull) || !strings.Contains(err.Error(), experiments.FileSeries) {
			t.Errorf("procs=%d: err %v, want %v naming %s", procs, err, errFull, experiments.FileSeries)
		}
	}
}
