package presets_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// post1File and post1Sum are the seed lab's Series 2 Post 1 sweep and its
// published sha256 (the model: shared/post1-spec.md). The seed lab's
// output is the external contract, so the sum stays a sha256 that
// RATELAB_UPDATE=1 cannot rewrite (the preset's own files are goldens:
// outputs_test.go).
const (
	post1File = "bp-post1-collapse-sweep.csv"
	post1Sum  = "965e6578eba2dbb33316af1fa12dc225f99b5b1d05ca6dee2572270b2ab84eeb"
)

func TestCollapseMatchesTheSeedLabsPost1(t *testing.T) {
	_, out := runPostPreset(t, "collapse", 0)
	data, ok := out[post1File]
	if !ok {
		t.Fatalf("no %s", post1File)
	}
	if got := (output.File{Name: post1File, Data: data}).SHA256(); got != post1Sum {
		t.Errorf("%s: sha256 %s, want %s\n%s", post1File, got, post1Sum, data)
	}
}

// post1Row is one row of the Post 1 sweep.
type post1Row struct {
	mode                                           string
	offered                                        int
	effective, ideal, goodput, wasted, p50, p99, q float64
}

func post1Rows(t *testing.T, data []byte) []post1Row {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if lines[0] != "mode,offered_rps,effective_rps,ideal_goodput_rps,goodput_rps,wasted_pct,p50_ms,p99_ms,avg_queue_depth" {
		t.Fatalf("header %q", lines[0])
	}
	var rows []post1Row
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 9 {
			t.Fatalf("row %q", l)
		}
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("row %q: %v", l, err)
			}
			return v
		}
		off, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("offered %q is not a whole number", f[1])
		}
		rows = append(rows, post1Row{f[0], off, num(f[2]), num(f[3]), num(f[4]), num(f[5]), num(f[6]), num(f[7]), num(f[8])})
	}
	return rows
}

// The spec's invariants, which hold without the golden numbers.
func TestCollapseInvariants(t *testing.T) {
	res, out := runPostPreset(t, "collapse", 0)
	rows := post1Rows(t, out[post1File])
	if len(rows) != 20 {
		t.Fatalf("%d rows, want 20", len(rows))
	}
	const capacity, service = 100, 10.0
	for i := range 10 {
		nr, r := rows[i], rows[10+i]
		if nr.mode != "no-retry" || r.mode != "retry" || nr.offered != r.offered {
			t.Fatalf("row order: %+v, %+v", nr, r)
		}
		if i > 0 && nr.offered <= rows[i-1].offered {
			t.Errorf("levels not ascending: %d after %d", nr.offered, rows[i-1].offered)
		}
		if nr.offered <= capacity {
			same := r
			same.mode = nr.mode
			if same != nr {
				t.Errorf("at %d rps the modes differ: %+v vs %+v", nr.offered, nr, r)
			}
			off := float64(nr.offered)
			if nr.goodput != off || nr.effective != off || nr.wasted != 0 || nr.p50 != service || nr.p99 != service {
				t.Errorf("at %d rps (at or below capacity): %+v, want goodput = effective = offered, no waste, p50 = p99 = %g", nr.offered, nr, service)
			}
		}
		if r.goodput != nr.goodput {
			t.Errorf("at %d rps retries changed goodput: %g vs %g", nr.offered, r.goodput, nr.goodput)
		}
		if r.effective < nr.effective {
			t.Errorf("at %d rps retry mode has less load: %g < %g", nr.offered, r.effective, nr.effective)
		}
		// No-retry effective load is the first-attempt rate.
		pt := &res.Points[i]
		if want := float64(pt.Metrics.Arrivals) / 5; nr.effective != want {
			t.Errorf("at %d rps no-retry effective %g, want arrivals/secs = %g", nr.offered, nr.effective, want)
		}
	}
	// Deterministic at any worker count.
	cfg, err := presets.Config("collapse")
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		data, err := output.Report(res, &cfg.Reports[0])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, out[post1File]) {
			t.Errorf("%d workers: other bytes", workers)
		}
	}
}

// seedPost1Dir holds the seed lab's own Post 1 sweeps at random parameter
// sets (testdata/seed-post1/README.md says how they were made).
const seedPost1Dir = "testdata/seed-post1"

// TestCollapseMatchesTheSeedAtRandomParameters runs the collapse preset at
// each parameter set of params.txt (window, service time, deadline,
// retries, backoff, levels) and compares its report with the seed
// program's file byte for byte: offered_rps is the configured level
// (level_rps) and ideal_goodput_rps min(level, capacity), also where
// level × window is no whole number of arrivals.
func TestCollapseMatchesTheSeedAtRandomParameters(t *testing.T) {
	t.Parallel()
	p, err := presets.Get("collapse")
	if err != nil {
		t.Fatal(err)
	}
	params, err := os.ReadFile(filepath.Join(seedPost1Dir, "params.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sets := 0
	for _, line := range strings.Split(string(params), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 7 {
			t.Fatalf("params.txt: %q", line)
		}
		sets++
		name := f[0]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(seedPost1Dir, name+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			doc := seedPost1Document(t, p.JSON, f[1:])
			cfg, err := document.DecodeConfig(doc)
			if err != nil {
				t.Fatalf("%s: %v\n%s", line, err, doc)
			}
			res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := output.Report(res, &cfg.Reports[0])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the report differs from the seed program's\n got:\n%s\nwant:\n%s", line, got, want)
			}
		})
	}
	if sets < 12 {
		t.Fatalf("%d parameter sets in params.txt, want a dozen", sets)
	}
}

// seedPost1Document is the collapse preset's document with one parameter
// set: window_ms, service_ms, deadline_ms, retries, backoff_ms and the
// levels (comma separated), each as the seed's CollapseSimulator takes it.
func seedPost1Document(t *testing.T, preset []byte, f []string) []byte {
	t.Helper()
	whole := func(s string) int {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return v
	}
	var levels []int
	for _, s := range strings.Split(f[5], ",") {
		levels = append(levels, whole(s))
	}
	var doc map[string]any
	if err := json.Unmarshal(preset, &doc); err != nil {
		t.Fatal(err)
	}
	w, srv := doc["workload"].(map[string]any), doc["server"].(map[string]any)
	w["duration_ms"] = whole(f[0])
	w["parts"].([]any)[0].(map[string]any)["rate_rps"] = levels
	srv["service_ms"], srv["deadline_ms"] = whole(f[1]), whole(f[2])
	pols := doc["policies"].([]any)
	pols[0].(map[string]any)["timeout_ms"] = whole(f[2])
	retry := pols[1].(map[string]any)
	retry["timeout_ms"], retry["retries"], retry["backoff_ms"] = whole(f[2]), whole(f[3]), whole(f[4])
	delete(doc, "objectives")
	delete(doc, "decision")
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
