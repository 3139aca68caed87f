package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lab export reads a run folder's manifest and prints a point's deployable
// config on stdout, its notes and rerun on stderr; mistakes exit 2.
func TestExportCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sweep.json")
	doc := `{"version":1,"workload":{"duration_ms":500,"parts":[{"type":"constant","rate_rps":50}]},
		"limiters":[{"type":"token-bucket","rate_rps":100,"burst":[10,20]},{"type":"sliding-window-log","limit":10}]}`
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "-q", "--config", cfg, "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("lab run: exit %d: %s", code, stderr.String())
	}

	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"export", "--run-dir", out, "--point", "1", "--format", "nginx"}, &stdout, &stderr); code != 0 {
		t.Fatalf("lab export: exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"limit_req_zone ratelab zone=ratelab:10m rate=100r/s;", "limit_req zone=ratelab burst=19 nodelay;"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "note:") {
		t.Errorf("notes on stdout:\n%s", stdout.String())
	}
	for _, want := range []string{"note: nginx counts the excess", `rerun: add this limiter`, `"type":"nginx-limit-req"`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--point", "0", "--format", "nginx"}, "--run-dir DIR is required"},
		{[]string{"--run-dir", out, "--format", "nginx"}, "--point N is required"},
		{[]string{"--run-dir", out, "--point", "0"}, "for this point: nginx, envoy, go-x-time-rate"},
		{[]string{"--run-dir", out, "--point", "3", "--format", "nginx"}, "the sweep has points 0 to 2"},
		{[]string{"--run-dir", out, "--point", "0", "--format", "yaml"}, "unknown export format"},
		{[]string{"--run-dir", out, "--point", "2", "--format", "nginx"}, "formats for this point: none"},
		{[]string{"--run-dir", dir, "--point", "0", "--format", "nginx"}, "read the run's manifest"},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(context.Background(), append([]string{"export"}, c.args...), &stdout, &stderr); code != 2 {
			t.Errorf("lab export %v: exit %d, want 2", c.args, code)
		}
		if !strings.Contains(stderr.String(), c.want) {
			t.Errorf("lab export %v: stderr lacks %q:\n%s", c.args, c.want, stderr.String())
		}
		if stdout.Len() > 0 {
			t.Errorf("lab export %v: stdout %q", c.args, stdout.String())
		}
	}
}
