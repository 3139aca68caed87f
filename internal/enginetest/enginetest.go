// Package enginetest holds what the engine's tests share across its
// packages (experiments, simulate, sweep, presets, web/charts): a document
// decoded or read from a file, a config run to its output files, a preset
// run once per test binary, a file's CSV rows, the small valid config the
// bad-config cases edit. Tests only.
package enginetest

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// Decode decodes a config document, failing the test on an error.
func Decode(t testing.TB, doc string) *experiments.Config {
	t.Helper()
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// ReadConfig reads and decodes the config document at path (relative to
// the test's package).
func ReadConfig(t testing.TB, path string) (*experiments.Config, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := document.DecodeConfig(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg, data
}

// RunFiles runs cfg with workers and returns its output files.
func RunFiles(t testing.TB, cfg *experiments.Config, workers int) []output.File {
	t.Helper()
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return ResultFiles(t, res)
}

// ResultFiles are res's output files (output.Files).
func ResultFiles(t testing.TB, res *experiments.Result) []output.File {
	t.Helper()
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// SameFiles fails the test when got are not the files want, byte for
// byte: another count stops it, each file that differs (in name or bytes)
// is an error naming what was compared.
func SameFiles(t testing.TB, what string, got, want []output.File) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d files, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Errorf("%s: %s differs", what, want[i].Name)
		}
	}
}

// FileOf is the file called name of files.
func FileOf(t testing.TB, files []output.File, name string) []byte {
	t.Helper()
	for _, f := range files {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("no %s", name)
	return nil
}

// CSVRows are the rows of CSV data.
func CSVRows(t testing.TB, data []byte) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// Sum is the sum of a series.
func Sum(xs []int32) int {
	n := 0
	for _, x := range xs {
		n += int(x)
	}
	return n
}

// Base is a small valid config the bad-config cases edit.
const Base = `{
  "version": 1,
  "seed": 1,
  "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]},
  "limiters": [
    {"type": "token-bucket", "rate_rps": 100, "burst": 10},
    {"type": "leaky-bucket", "rate_rps": 100, "queue": 10}
  ]
}`

// Edit is Base with its first old replaced by new.
func Edit(old, new string) string {
	if !strings.Contains(Base, old) {
		panic("base config has no " + old)
	}
	return strings.Replace(Base, old, new, 1)
}

// WindowDoc is a sweep of two limiters over durationMS of a Poisson part
// and a client group, extra appended to its top-level fields.
func WindowDoc(durationMS float64, extra string) string {
	return fmt.Sprintf(`{"version": 1, "seed": 3,
  "workload": {"duration_ms": %g, "parts": [{"type": "poisson", "rate_rps": 30}, {"type": "clients", "group": "g", "clients": 3, "rate_rps": 5}]},
  "limiters": [{"type": "token-bucket", "rate_rps": 25, "burst": [1, 5]}, {"type": "leaky-bucket", "rate_rps": 25, "queue": 8}]%s}`, durationMS, extra)
}

// ReplicatedDoc is a replicated sweep (5 runs a point) of two Poisson
// rates through two limiters, with an objective.
const ReplicatedDoc = `{
  "version": 1,
  "seed": 40,
  "replications": 5,
  "workload": {"duration_ms": 3000, "parts": [{"type": "poisson", "rate_rps": [80, 140]}]},
  "server": {"service_ms": 8},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": [2, 10, 40]},
               {"type": "leaky-bucket", "rate_rps": 100, "queue": 10}],
  "objectives": [{"metric": "sojourn_p99_ms", "op": "<=", "value": 60}]
}`

// SweptDoc sweeps a workload rate, the service time and the seed beside a
// limiter parameter.
const SweptDoc = `{
  "version": 1,
  "seed": [7, 8],
  "workload": {"duration_ms": 2000, "parts": [
    {"type": "poisson", "rate_rps": [60, 120]},
    {"type": "flash-crowd", "group": "crowd", "clients": 3, "base_rps": 5, "multiplier": [2, 4], "start_ms": 500, "duration_ms": 300}
  ]},
  "server": {"workers": 1, "service_ms": [5, 10]},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": [5, 20]}]
}`

// Preset is the result of the preset name run at durationMS (0: the
// preset's own duration), run once per test binary however many tests
// read it: the engine gives the same bytes every time, and the tests only
// read a result (one that changes it runs its own).
func Preset(t testing.TB, name string, durationMS float64) *experiments.Result {
	t.Helper()
	r := presetRunOf(name, durationMS)
	r.once.Do(func() {
		cfg, err := presets.Config(name)
		if err != nil {
			r.err = err
			return
		}
		if durationMS > 0 {
			cfg.Workload.DurationMS = durationMS
			if err := cfg.Validate(); err != nil {
				r.err = fmt.Errorf("preset %s at %g ms: %w", name, durationMS, err)
				return
			}
		}
		if r.res, r.err = sweep.Run(context.Background(), cfg, sweep.Options{}); r.err != nil {
			r.err = fmt.Errorf("run preset %s: %w", name, r.err)
		}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.res
}

// PresetFiles is Preset's result and its output files by name, written
// once per test binary; the map is the caller's own (it may add and delete
// files).
func PresetFiles(t testing.TB, name string, durationMS float64) (*experiments.Result, map[string][]byte) {
	t.Helper()
	res := Preset(t, name, durationMS)
	r := presetRunOf(name, durationMS)
	r.filesOnce.Do(func() {
		var files []output.File
		files, r.filesErr = output.Files(res)
		r.files = map[string][]byte{}
		for _, f := range files {
			r.files[f.Name] = f.Data
		}
	})
	if r.filesErr != nil {
		t.Fatal(r.filesErr)
	}
	return res, maps.Clone(r.files)
}

// presetRuns are Preset's runs by preset name and duration.
var presetRuns sync.Map // presetKey -> *presetRun

type presetKey struct {
	name       string
	durationMS float64
}

type presetRun struct {
	once      sync.Once
	res       *experiments.Result
	err       error
	filesOnce sync.Once
	files     map[string][]byte
	filesErr  error
}

func presetRunOf(name string, durationMS float64) *presetRun {
	v, _ := presetRuns.LoadOrStore(presetKey{name, durationMS}, new(presetRun))
	return v.(*presetRun)
}
