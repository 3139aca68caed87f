package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// lab run --config manifest.json runs the sweep the manifest records: the
// same files, byte for byte; an edited manifest is refused (exit 2).
func TestRunFromManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if code := run(context.Background(), []string{"run", "-q", "--preset", "token-vs-leaky", "--out", a}, &stdout, &stderr); code != 0 {
		t.Fatalf("lab run: exit %d: %s", code, stderr.String())
	}
	manifest := filepath.Join(a, "manifest.json")
	if code := run(context.Background(), []string{"run", "-q", "--config", manifest, "--out", b}, &stdout, &stderr); code != 0 {
		t.Fatalf("lab run --config manifest.json: exit %d: %s", code, stderr.String())
	}
	entries, err := os.ReadDir(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		x, _ := os.ReadFile(filepath.Join(a, e.Name()))
		y, err := os.ReadFile(filepath.Join(b, e.Name()))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs when run from the manifest (%v)", e.Name(), err)
		}
	}
	data, _ := os.ReadFile(manifest)
	edited := filepath.Join(dir, "edited.json")
	os.WriteFile(edited, bytes.Replace(data, []byte(`"duration_ms": 5000`), []byte(`"duration_ms": 4000`), 1), 0o644)
	stderr.Reset()
	if code := run(context.Background(), []string{"run", "-q", "--config", edited, "--out", filepath.Join(dir, "c")}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "config_sha256") {
		t.Errorf("an edited manifest: exit %d: %s", code, stderr.String())
	}
}

// An interrupted lab run writes the points that finished, marked partial
// in manifest.json, and exits 1.
func TestRunInterruptedWritesPartial(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sweep.json")
	bursts := make([]string, 400)
	for i := range bursts {
		bursts[i] = strconv.Itoa(i + 1)
	}
	doc := `{"version":1,"workload":{"duration_ms":60000,"parts":[{"type":"constant","rate_rps":20000}]},
		"limiters":[{"type":"token-bucket","rate_rps":100,"burst":[` + strings.Join(bursts, ",") + `]}]}`
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := filepath.Join(dir, "out")
	var stdout bytes.Buffer
	// The context ends as a SIGINT ends it, once a point has finished (at
	// the first progress line, which counts finished points: at least one,
	// after 500 ms) and long before the last of the 400 (about 8 ms each,
	// 3 s in all on an idle machine; at 2,000 rps the whole run took 0.4 s
	// there and ended before the first progress line).
	stderr := &cancelAtProgress{cancel: cancel}
	code := run(ctx, []string{"run", "--workers", "1", "--config", cfg, "--out", out}, &stdout, stderr)
	if !stderr.cancelled {
		t.Fatalf("no progress line before the end: exit %d: %s", code, stderr.String())
	}
	if code != 1 || !strings.Contains(stderr.String(), "marked partial") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil || !strings.Contains(string(data), `"partial": {`) || !strings.Contains(string(data), `"points_total": 400`) {
		t.Fatalf("manifest (%v):\n%.2000s", err, data)
	}
}

// cancelAtProgress is a lab run's stderr that cancels its context at the
// first progress line ("lab run: 3/400 points (0.5s)"): a point has
// finished then.
type cancelAtProgress struct {
	bytes.Buffer
	cancel    context.CancelFunc
	cancelled bool
}

func (w *cancelAtProgress) Write(p []byte) (int, error) {
	if !w.cancelled && bytes.Contains(p, []byte(" points (")) {
		w.cancelled = true
		w.cancel()
	}
	return w.Buffer.Write(p)
}
