package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter/limitertest"
)

// lab -h lists every limiter type with its parameters and every workload
// part type with its fields, from the engine's tables: a gate registered
// in this test binary appears with no edit here.
func TestHelpListsTheRegistry(t *testing.T) {
	t.Parallel()
	limitertest.Register(t)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &out, &errOut); code != 0 {
		t.Fatalf("lab -h: exit %d", code)
	}
	help := errOut.String()
	for _, want := range []string{
		"token-bucket", "rate_rps (number, req/s, 0.001 to 1000000)", "burst (whole number, requests, 1 to 10000000)", "window_ms (number, ms, 0.001 to 86400000, default 1000)",
		"test-spacer", "test spacer: at most one admission per gap_ms", "gap_ms (number, ms, 0.5 to 60000)", "edge (closed | open)",
		"flash-crowd", "multiplier (number, ×)",
		"Server settings", "discipline", "tail-drop",
		"Retry-After: when the bucket holds a whole token again", "no Retry-After (retry_after \"honour\" retries on the backoff)",
		"no Retry-After: it refuses by the server's occupancy (retry_after \"honour\" is refused unless another limiter of the sweep gives one)",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("lab -h lacks %q:\n%s", want, help)
		}
	}

	// The registered gate runs from a config document.
	dir := t.TempDir()
	cfg := dir + "/spacer.json"
	doc := `{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},"limiters":[{"type":"test-spacer","gap_ms":[10,40]}]}`
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run(context.Background(), []string{"run", "--config", cfg, "--out", dir + "/out"}, &out, &errOut); code != 0 {
		t.Fatalf("lab run: exit %d: %s", code, errOut.String())
	}
}

// lab run -h names every file it writes, settings.csv among them.
func TestRunHelpNamesItsFiles(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"run", "-h"}, &out, &errOut); code != 0 {
		t.Fatalf("lab run -h: exit %d", code)
	}
	for _, want := range []string{"results.csv", "settings.csv", "series.csv", "clients.csv", "manifest.json"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("lab run -h lacks %s:\n%s", want, errOut.String())
		}
	}
}
