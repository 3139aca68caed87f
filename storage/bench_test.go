package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// benchConfig has 200 points over 60 s (600 series windows each: 120,000
// series rows) with two client groups.
func benchConfig(b *testing.B) *experiments.Config {
	b.Helper()
	bursts := make([]string, 100)
	for i := range bursts {
		bursts[i] = fmt.Sprint(i + 1)
	}
	doc := `{"version": 1, "seed": 5,
	  "workload": {"duration_ms": 60000, "parts": [
	    {"type": "clients", "group": "a", "clients": 5, "rate_rps": 20, "arrival": "poisson"},
	    {"type": "clients", "group": "b", "clients": 5, "rate_rps": 40, "arrival": "poisson"}]},
	  "server": {"workers": 2, "service_ms": 5, "deadline_ms": 200},
	  "limiters": [{"type": "token-bucket", "rate_rps": 250, "burst": [` + strings.Join(bursts, ",") + `]},
	               {"type": "leaky-bucket", "rate_rps": 250, "queue": [` + strings.Join(bursts, ",") + `]}]}`
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

// BenchmarkComplete stores a 200-point run (results, series blobs and all
// files) and reads its Result back; it reports the database size per run.
func BenchmarkComplete(b *testing.B) {
	cfg := benchConfig(b)
	res, err := sweep.Run(b.Context(), cfg, sweep.Options{})
	if err != nil {
		b.Fatal(err)
	}
	files, err := output.Files(res)
	if err != nil {
		b.Fatal(err)
	}
	fileBytes := 0
	for _, f := range files {
		fileBytes += len(f.Data)
	}
	path := filepath.Join(b.TempDir(), "bench.db")
	st, err := Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.Run("complete", func(b *testing.B) {
		for b.Loop() {
			r := newRun(cfg)
			if err := st.Create(b.Context(), r); err != nil {
				b.Fatal(err)
			}
			if err := st.Complete(b.Context(), r.ID, res, files); err != nil {
				b.Fatal(err)
			}
		}
	})
	r := newRun(cfg)
	if err := st.Create(b.Context(), r); err != nil {
		b.Fatal(err)
	}
	if err := st.Complete(b.Context(), r.ID, res, files); err != nil {
		b.Fatal(err)
	}
	b.Run("result", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.Result(b.Context(), r.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	if _, err := st.db.ExecContext(b.Context(), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	_, runs, _ := st.List(b.Context(), 1, 0)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d points, %d series windows, output files %d bytes; database %d bytes for %d runs (%d bytes a run)",
		len(res.Points), len(res.Points)*res.Points[0].Series.Windows(), fileBytes, fi.Size(), runs, fi.Size()/int64(runs))
}
