package accesslog_test

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/accesslog"
)

func mustFormat(t testing.TB, def string) *accesslog.Format {
	t.Helper()
	f, err := accesslog.ParseFormat(def)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// readAll reads every request of log, with the options' format from def.
func readAll(t testing.TB, def, log string, opt accesslog.Options) ([]accesslog.Request, accesslog.Stats, *accesslog.Reader) {
	t.Helper()
	opt.Format = mustFormat(t, def)
	rd, err := accesslog.NewReader(strings.NewReader(log), opt)
	if err != nil {
		t.Fatal(err)
	}
	var out []accesslog.Request
	for {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, *r)
	}
	return out, rd.Stats(), rd
}

// nginx's documented combined lines (the access_log examples).
func TestCombined(t *testing.T) {
	t.Parallel()
	log := `127.0.0.1 - - [01/Dec/2026:18:14:20 +0000] "GET /api/items?id=3 HTTP/1.1" 200 612 "-" "curl/8.5.0"
10.0.0.2 - frank [01/Dec/2026:19:14:20 +0100] "POST /login HTTP/1.1" 429 0 "https://example.com/" "Mozilla/5.0 (X11; Linux x86_64) \x22quoted\x22"
127.0.0.1 - - [01/Dec/2026:18:14:21 +0000] "GET / HTTP/1.1" 503 197 "-" "curl/8.5.0"
`
	reqs, st, rd := readAll(t, "combined", log, accesslog.Options{Keys: []string{"$binary_remote_addr", "$request_method $uri", "$arg_id"}})
	if len(reqs) != 3 || st.Bad != 0 || !st.Approximate {
		t.Fatalf("got %d requests, stats %+v", len(reqs), st)
	}
	base := 1796148860000.0 // 2026-12-01T18:14:20Z
	wantStart := []float64{base + 250, base + 750, base + 1500}
	wantStatus := []int32{200, 429, 503}
	for i, r := range reqs {
		if r.StartMS != wantStart[i] || r.Status != wantStatus[i] || !math.IsNaN(r.ServiceMS) {
			t.Errorf("request %d: start %v status %d service %v; want %v %d NaN", i, r.StartMS, r.Status, r.ServiceMS, wantStart[i], wantStatus[i])
		}
	}
	names := func(k int) []string {
		var out []string
		for _, r := range reqs {
			out = append(out, rd.Key(k).Name(r.Keys[k]))
		}
		return out
	}
	if got := fmt.Sprint(names(0)); got != "[127.0.0.1 10.0.0.2 127.0.0.1]" {
		t.Errorf("remote_addr keys %s", got)
	}
	if got := fmt.Sprint(names(1)); got != "[GET /api/items POST /login GET /]" {
		t.Errorf("method and uri keys %s", got)
	}
	if reqs[0].Keys[2] != 0 || reqs[1].Keys[2] != -1 {
		t.Errorf("$arg_id slots %d %d, want 0 -1 (empty: no key)", reqs[0].Keys[2], reqs[1].Keys[2])
	}
}

const timedFormat = `log_format timed '$remote_addr [$time_local] "$request" $status '
                     '$msec $request_time $upstream_response_time "$http_x_api_key"';`

// A log_format directive with $msec and $request_time: start = msec -
// request_time, exact to the ms; the upstream time summed; "-" is empty.
func TestLogFormatDirective(t *testing.T) {
	t.Parallel()
	log := `10.0.0.1 [01/Dec/2026:18:14:20 +0000] "GET /a HTTP/1.1" 200 1796148860.500 0.300 0.250 "k1"
10.0.0.1 [01/Dec/2026:18:14:20 +0000] "GET /a HTTP/1.1" 200 1796148860.400 0.000 0.010, 0.005 "-"
10.0.0.2 [01/Dec/2026:18:14:20 +0000] "GET /a HTTP/1.1" 502 1796148860.450 0.001 - "k1"
`
	reqs, st, rd := readAll(t, timedFormat, log, accesslog.Options{Keys: []string{"$http_x_api_key"}})
	if st.Approximate || st.Bad != 0 || len(reqs) != 3 {
		t.Fatalf("stats %+v, %d requests", st, len(reqs))
	}
	want := []struct {
		start   float64
		service float64
		line    int64
		key     string
	}{
		{1796148860200, 250, 1, "k1"},
		{1796148860400, 15, 2, ""},
		{1796148860449, math.NaN(), 3, "k1"},
	}
	for i, w := range want {
		r := reqs[i]
		if r.StartMS != w.start || r.Line != w.line || rd.Key(0).Name(r.Keys[0]) != w.key ||
			!(r.ServiceMS == w.service || math.IsNaN(w.service) && math.IsNaN(r.ServiceMS)) {
			t.Errorf("request %d: %+v key %q; want %+v", i, r, rd.Key(0).Name(r.Keys[0]), w)
		}
	}
}

// nginx's escape=json format (the documented example's shape).
func TestJSONFormat(t *testing.T) {
	t.Parallel()
	def := `log_format json_combined escape=json '{' '"time_local":"$time_local",' '"remote_addr":"$remote_addr",' '"request":"$request",' '"status": "$status",' '"msec": $msec,' '"request_time":$request_time,' '"http_user_agent":"$http_user_agent"' '}';`
	log := `{"time_local":"01/Dec/2026:18:14:20 +0000","remote_addr":"10.0.0.9","request":"GET /q?key=a%20b HTTP/1.1","status": "429","msec": 1796148860.123,"request_time":0.023,"http_user_agent":"say \"hi\"\u00e9\\"}
{"time_local":"01/Dec/2026:18:14:20 +0000", "remote_addr":"10.0.0.9", "extra": null, "request":"GET / HTTP/1.1","status": "200","msec": 1796148860.200,"request_time":0.000,"http_user_agent":""}
not json
`
	reqs, st, rd := readAll(t, def, log, accesslog.Options{Keys: []string{"$remote_addr$http_user_agent"}})
	if len(reqs) != 2 || st.Bad != 1 || st.Reasons[accesslog.ReasonNotObject] != 1 || st.FirstBad[0].Line != 3 {
		t.Fatalf("%d requests, stats %+v", len(reqs), st)
	}
	if reqs[0].StartMS != 1796148860100 || reqs[0].Status != 429 || reqs[1].StartMS != 1796148860200 {
		t.Errorf("requests %+v", reqs)
	}
	if got := rd.Key(0).Name(reqs[0].Keys[0]); got != `10.0.0.9say "hi"é\` {
		t.Errorf("key %q", got)
	}
}

// Lines out of start order are put in order within the window; a line
// before the window is counted as bad, with its number, not moved.
func TestReorderWindow(t *testing.T) {
	t.Parallel()
	def := `$remote_addr $msec $request_time $status`
	var b strings.Builder
	line := func(end, rt float64) { fmt.Fprintf(&b, "a %.3f %.3f 200\n", end, rt) }
	line(1000.000, 0)
	line(1000.500, 0.400) // starts at 1000.100
	line(1003.000, 2.950) // starts at 1000.050: 3 s late, in a 5 s window
	line(1010.000, 0)     // moves the window to 1005
	line(1010.100, 6.000) // starts at 1004.100: before the window
	line(1010.200, 0.100) // starts at 1010.100
	reqs, st, _ := readAll(t, def, b.String(), accesslog.Options{WindowMS: 5000})
	var starts []float64
	var lines []int64
	for _, r := range reqs {
		starts = append(starts, r.StartMS)
		lines = append(lines, r.Line)
	}
	if fmt.Sprint(starts) != "[1e+06 1.00005e+06 1.0001e+06 1.01e+06 1.0101e+06]" || fmt.Sprint(lines) != "[1 3 2 4 6]" {
		t.Errorf("starts %v lines %v", starts, lines)
	}
	if st.Bad != 1 || st.Reasons[accesslog.ReasonLate] != 1 || st.FirstBad[0].Line != 5 {
		t.Errorf("stats %+v", st)
	}
}

// Bad lines by reason, the first ten kept with their numbers.
func TestBadLines(t *testing.T) {
	t.Parallel()
	def := `$remote_addr $msec $status`
	var b strings.Builder
	for i := range 30 {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "a %d.000 200\n", 1000+i)
		case 1:
			fmt.Fprintf(&b, "a x%d 200\n", i)
		case 2:
			fmt.Fprintf(&b, "a %d.000 OK\n", 1000+i)
		}
	}
	b.WriteString("\n\n" + strings.Repeat("x", accesslog.MaxLineBytes+10) + "\nshort\n")
	reqs, st, _ := readAll(t, def, b.String(), accesslog.Options{})
	if len(reqs) != 10 || st.Lines != 32 || st.Bad != 22 || st.Reasons[accesslog.ReasonTime] != 10 ||
		st.Reasons[accesslog.ReasonStatus] != 10 || st.Reasons[accesslog.ReasonTooLong] != 1 || st.Reasons[accesslog.ReasonNoMatch] != 1 {
		t.Fatalf("%d requests, stats %+v", len(reqs), st)
	}
	if len(st.FirstBad) != 10 || st.FirstBad[0].Line != 2 || st.FirstBad[1].Line != 3 || st.FirstBad[9].Line != 15 {
		t.Errorf("first bad %+v", st.FirstBad)
	}
	if pct := st.BadPct(); pct != 100*22.0/32 {
		t.Errorf("bad %g%%", pct)
	}
}

func TestFilters(t *testing.T) {
	t.Parallel()
	def := `$msec "$request" $status`
	log := `1000.000 "GET /api/a HTTP/1.1" 200
1001.000 "GET /web/a HTTP/1.1" 200
1002.000 "GET /api/b HTTP/1.1" 503
1003.000 "GET /api/c HTTP/1.1" 404
1004.000 "GET /api/d HTTP/1.1" 200
`
	sf, err := accesslog.ParseStatusFilter("2xx,500-504")
	if err != nil {
		t.Fatal(err)
	}
	reqs, st, _ := readAll(t, def, log, accesslog.Options{Route: "/api/", Status: sf, ToMS: 1004000})
	if len(reqs) != 2 || reqs[0].Line != 1 || reqs[1].Line != 3 || st.Filtered != 3 {
		t.Errorf("requests %+v stats %+v", reqs, st)
	}
}

func TestFormatErrors(t *testing.T) {
	t.Parallel()
	for def, want := range map[string]string{
		"$remote_addr$status":                 "nothing between them",
		"":                                    "empty",
		`log_format x escape=xml '$msec';`:    "escape=xml",
		`{"a": "b"}`:                          "no key's value is a variable",
		"$msec ${bad":                         "unterminated",
		`log_format main '$remote_addr $msec`: "unterminated",
	} {
		if _, err := accesslog.ParseFormat(def); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", def, err, want)
		}
	}
	f := mustFormat(t, "$remote_addr $status")
	if _, err := accesslog.NewReader(strings.NewReader(""), accesslog.Options{Format: f}); err == nil || !strings.Contains(err.Error(), "logs no time") {
		t.Errorf("no time: %v", err)
	}
	f = mustFormat(t, "combined")
	if _, err := f.CompileKey("$http_x_api_key"); err == nil || !strings.Contains(err.Error(), "$http_x_api_key is not in the log format") || !strings.Contains(err.Error(), "$remote_addr") {
		t.Errorf("unlogged key: %v", err)
	}
}

// The reorder window holds at most MaxHeld requests: a log denser than
// that over its window is refused at the line that overflows it, and one
// whose seconds leave the window as it reads is not.
func TestReorderWindowHeldBound(t *testing.T) {
	t.Parallel()
	def := `$remote_addr $msec $status`
	f, err := accesslog.ParseFormat(def)
	if err != nil {
		t.Fatal(err)
	}
	read := func(log string) (int, error) {
		rd, err := accesslog.NewReader(strings.NewReader(log), accesslog.Options{Format: f, WindowMS: 2000, MaxHeld: 3})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			_, err := rd.Next()
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			n++
		}
	}
	dense := strings.Repeat("a 1000.000 200\n", 4)
	if n, err := read(dense); err == nil || !strings.Contains(err.Error(), "line 4: the reorder window holds 3 requests") {
		t.Errorf("4 requests in one second, 3 held at most: %d read, error %v", n, err)
	}
	var b strings.Builder
	for i := range 12 {
		fmt.Fprintf(&b, "a %d.000 200\n", 1000+3*i)
	}
	if n, err := read(b.String()); err != nil || n != 12 {
		t.Errorf("one request every 3 s: %d read, error %v", n, err)
	}
}
