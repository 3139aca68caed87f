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
	"time"
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
	// the same requests as HAProxy's log (option httplog, %Tr the service time)
	var hx strings.Builder
	t0 := time.Date(2026, 12, 1, 18, 14, 0, 0, time.UTC)
	for i := range 400 {
		at := t0.Add(time.Duration(i*7+i%3) * time.Millisecond)
		fmt.Fprintf(&hx, "10.0.0.%d:4000 [%s] web app/s1 0/0/0/%d/%d 200 2 - - ---- 1/1/0/0/0 0/0 \"GET / HTTP/1.1\"\n", i%5, at.Format("02/Jan/2006:15:04:05.000"), 1+i%4, 1+i%4)
	}
	hxPath := writeTemp(t, dir, "haproxy.log", []byte(hx.String()))
	mustRun(t, "run", "-q", "--config", cfg, "--trace", hxPath, "--trace-log-server", "haproxy", "--out", filepath.Join(dir, "haproxy"))
	want := readDir(t, filepath.Join(dir, "csv"))
	for _, run := range []string{"log", "haproxy"} {
		got := readDir(t, filepath.Join(dir, run))
		for _, name := range []string{"results.csv", "series.csv", "clients.csv"} {
			if len(want[name]) == 0 || !bytes.Equal(want[name], got[name]) {
				t.Errorf("%s: the %s log's run differs from the trace file's", name, run)
			}
		}
	}
}

// TestShadowFormats replays the same requests, pairs 5 ms apart (the
// second of each refused at 6000r/m), written as HAProxy's log (its
// frontend's config as --log-format @FILE, its dates in --log-tz), vegeta's
// CSV and JSON results and k6's JSON output.
func TestShadowFormats(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte("limit_req_zone $request_method zone=m:1m rate=6000r/m;\nlimit_req zone=m;\nlimit_req_status 429;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	frontend := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(frontend, []byte("frontend web\n  bind :80\n  option httplog\n  capture request header X-Api-Key len 32\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 18, 14, 0, 0, time.UTC)
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	for _, tc := range []struct {
		format, logFormat string
		line              func(at time.Time, i int) string
	}{
		{"haproxy", "@" + frontend, func(at time.Time, i int) string {
			return fmt.Sprintf("<134>Dec  1 19:14:00 haproxy[1]: 10.0.0.1:%d [%s] web app/s1 0/0/0/3/3 200 2 - - ---- 1/1/0/0/0 0/0 {k%d} \"GET /api/x HTTP/1.1\"", 1000+i, at.In(paris).Format("02/Jan/2006:15:04:05.000"), i%2)
		}},
		{"vegeta", "csv", func(at time.Time, i int) string {
			return fmt.Sprintf("%d,200,3000000,0,2,,,,%d,GET,http://h/api/x,", at.UnixNano(), i)
		}},
		{"vegeta", "json", func(at time.Time, i int) string {
			return fmt.Sprintf(`{"attack":"","seq":%d,"code":200,"timestamp":"%s","latency":3000000,"bytes_out":0,"bytes_in":2,"error":"","body":null,"method":"GET","url":"http://h/api/x","headers":{}}`, i, at.Format(time.RFC3339Nano))
		}},
		{"k6", "", func(at time.Time, i int) string {
			end := at.Add(3 * time.Millisecond).Format(time.RFC3339Nano)
			tags := `{"method":"GET","status":"200","url":"http://h/api/x","name":"x"}`
			return fmt.Sprintf(`{"type":"Point","data":{"time":"%s","value":1,"tags":%s},"metric":"http_reqs"}`+"\n"+
				`{"type":"Point","data":{"time":"%s","value":3,"tags":%s},"metric":"http_req_duration"}`, end, tags, end, tags)
		}},
	} {
		t.Run(tc.format+" "+tc.logFormat, func(t *testing.T) {
			var b strings.Builder
			for i := range 50 {
				at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
				fmt.Fprintln(&b, tc.line(at, 2*i))
				fmt.Fprintln(&b, tc.line(at.Add(5*time.Millisecond), 2*i+1))
			}
			log := filepath.Join(dir, "log")
			if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			args := []string{"shadow", "--log", log, "--format", tc.format, "--log-format", tc.logFormat, "--log-tz", "Europe/Paris", "--config", conf, "--out", out}
			if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			keys, err := os.ReadFile(filepath.Join(out, "shadow.csv"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(keys), "\nGET,100,50,50.00,0,2026-12-01T18:14:00.005Z,1,20\n") {
				t.Errorf("shadow.csv:\n%s\n%s", keys, stdout.String())
			}
		})
	}
}
