package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const shadowConf = `http {
  log_format timed '$remote_addr [$time_local] "$request" $status $msec $request_time';
  limit_req_zone $binary_remote_addr zone=perip:1m rate=6000r/m;
  server { location /api/ { limit_req zone=perip; limit_req_status 429; } }
}
`

// writeShadowLog writes a gzip log of the timed format: pairs 5 ms apart
// from one address (the second of each refused at 6000r/m), every line
// out of start order by its request time, and bad lines.
func writeShadowLog(t *testing.T, path string, bad int) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	for i := range 50 {
		at := 1796148840.0 + float64(i)*0.1
		fmt.Fprintf(zw, "10.0.0.1 [01/Dec/2026:18:14:00 +0000] \"GET /api/x HTTP/1.1\" 200 %.3f 0.030\n", at+0.030)
		fmt.Fprintf(zw, "10.0.0.1 [01/Dec/2026:18:14:00 +0000] \"GET /api/x HTTP/1.1\" 200 %.3f 0.000\n", at+0.005)
	}
	for range bad {
		fmt.Fprintln(zw, "garbage")
	}
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestShadowCommand(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(shadowConf), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "access.log.gz")
	writeShadowLog(t, log, 0)
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	args := []string{"shadow", "--log", log, "--log-format", "timed", "--config", conf, "--out", out, "--requests", "--what-if"}
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	keys, err := os.ReadFile(filepath.Join(out, "shadow.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(keys), "\n10.0.0.1,100,50,50.00,0,2026-12-01T18:14:00.005Z,1,20\n") {
		t.Errorf("shadow.csv:\n%s", keys)
	}
	reqs, err := os.ReadFile(filepath.Join(out, "shadow-requests.csv"))
	if err != nil || !strings.Contains(string(reqs), "\n2,2026-12-01T18:14:00.005Z,10.0.0.1,true,0,200,429\n") {
		t.Errorf("shadow-requests.csv: %v\n%.300s", err, reqs)
	}
	if w, err := os.ReadFile(filepath.Join(out, "shadow-whatif.csv")); err != nil || !strings.Contains(string(w), "\n2,1,rate_rps=200 burst=0 delay=0,100,0,0.00,") {
		t.Errorf("shadow-whatif.csv: %v\n%s", err, w)
	}
	if !strings.Contains(stdout.String(), "limited: 50 (50.00%)") || !strings.Contains(stdout.String(), "recommended (") ||
		!strings.Contains(stdout.String(), "its config:\n  ") {
		t.Errorf("summary:\n%s", stdout.String())
	}

	// 2 bad lines of 102 is over 1%: refused, nothing written.
	writeShadowLog(t, log, 2)
	out2 := filepath.Join(dir, "out2")
	stderr.Reset()
	args = []string{"shadow", "--log", log, "--log-format", "timed", "--config", conf, "--out", out2}
	if code := run(context.Background(), args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "2 of 102 lines (1.96%) are bad, more than --max-bad-pct 1%: nothing written") ||
		!strings.Contains(stderr.String(), "line 101: does not match the log format: garbage") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Errorf("the refused run wrote %s: %v", out2, err)
	}
	// An unmodelled directive is refused, named.
	if err := os.WriteFile(conf, []byte(strings.Replace(shadowConf, "limit_req_status 429;", "limit_req_dry_run on;", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run(context.Background(), args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "limit_req_dry_run on") {
		t.Errorf("dry run: exit %d: %s", code, stderr.String())
	}
}

// An access log read as the trace of lab run gives the run the trace
// file of the same requests gives.
func TestRunAccessLogTrace(t *testing.T) {
	dir := t.TempDir()
	var csv, log strings.Builder
	csv.WriteString("t_ms,client,service_ms\n")
	for i := range 400 {
		ms := i*7 + i%3
		client := fmt.Sprintf("10.0.0.%d", i%5)
		fmt.Fprintf(&csv, "%d,%s,%d\n", ms, client, 1+i%4)
		// logged at the end, out of start order by the request time
		fmt.Fprintf(&log, "%s %.3f %.3f %.3f\n", client, 1796148840+float64(ms+20)/1000, 0.020, float64(1+i%4)/1000)
	}
	csvPath := writeTemp(t, dir, "day.csv", []byte(csv.String()))
	logPath := writeTemp(t, dir, "access.log", gzipped(t, log.String()))
	cfg := writeTemp(t, dir, "sweep.json", fmt.Appendf(nil, traceSweep, `{"type":"constant","rate_rps":1}`))
	mustRun(t, "run", "-q", "--config", cfg, "--trace", csvPath, "--out", filepath.Join(dir, "csv"))
	mustRun(t, "run", "-q", "--config", cfg, "--trace", logPath, "--trace-log-format", "$remote_addr $msec $request_time $upstream_response_time", "--out", filepath.Join(dir, "log"))
	want, got := readDir(t, filepath.Join(dir, "csv")), readDir(t, filepath.Join(dir, "log"))
	for _, name := range []string{"results.csv", "series.csv", "clients.csv"} {
		if len(want[name]) == 0 || !bytes.Equal(want[name], got[name]) {
			t.Errorf("%s: the access log's run differs from the trace file's", name)
		}
	}
}
