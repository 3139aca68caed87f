package accesslog_test

import (
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/accesslog"
	"github.com/ratelab/ratelab/internal/realtools"
)

// haproxyConf is the HAProxy under test: option httplog to a syslog
// server on UDP (the test), a captured X-Api-Key, a deny rule (a request
// HAProxy answers itself: no server time), in front of the test's backend.
const haproxyConf = `global
  log 127.0.0.1:%[1]d local0
defaults
  mode http
  log global
  option httplog
  timeout connect 20s
  timeout client 30s
  timeout server 30s
frontend web
  bind 127.0.0.1:%[2]d
  capture request header X-Api-Key len 32
  http-request deny if { path_beg /deny }
  default_backend app
backend app
  server s1 %[3]s
`

// TestHAProxyRealLog starts Debian's HAProxy on loopback with option
// httplog logging to a UDP syslog server the test runs, sends it a known
// sequence of requests (three client addresses, API keys, statuses 200,
// 404, 429, 503 from the backend, 403 from HAProxy itself, slow answers),
// and reads HAProxy's own log with HAProxy's own config as the format:
// each request's start is the date HAProxy logged (to the ms, inside the
// client's send..answer window), its key the client address and the
// captured header, its status and service time HAProxy's.
func TestHAProxyRealLog(t *testing.T) {
	bin := realtools.Server(t, "haproxy")
	t.Parallel()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(40 * time.Millisecond)
		}
		var code int
		if _, err := fmt.Sscanf(r.URL.Query().Get("code"), "%d", &code); err != nil {
			code = 200
		}
		w.WriteHeader(code)
	}))
	defer backend.Close()

	syslog, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer syslog.Close()
	var mu sync.Mutex
	var lines []string
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, _, err := syslog.ReadFrom(buf)
			if err != nil {
				return
			}
			mu.Lock()
			lines = append(lines, strings.TrimRight(string(buf[:n]), "\n"))
			mu.Unlock()
		}
	}()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	conf := fmt.Sprintf(haproxyConf, syslog.LocalAddr().(*net.UDPAddr).Port, port, strings.TrimPrefix(backend.URL, "http://"))
	confPath := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-f", confPath, "-db")
	cmd.Env = append(os.Environ(), "TZ=UTC") // %tr is local time: the reader's Location is UTC
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGUSR1) // soft stop, by its PID
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()

	type sent struct {
		from, key, path  string
		status           int32
		t0, t1           time.Time
		slow, noUpstream bool
	}
	get := func(s *sent) error {
		d := net.Dialer{Timeout: 20 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(s.from)}}
		client := http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
		req, err := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", port, s.path), nil)
		if err != nil {
			return err
		}
		if s.key != "" {
			req.Header.Set("X-Api-Key", s.key)
		}
		s.t0 = time.Now()
		resp, err := client.Do(req)
		s.t1 = time.Now()
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if int32(resp.StatusCode) != s.status {
			return fmt.Errorf("%s: status %d, want %d", s.path, resp.StatusCode, s.status)
		}
		return nil
	}
	// wait for HAProxy to listen; the probe's line is read and left out
	deadline := time.Now().Add(60 * time.Second) // a loaded machine starts HAProxy slowly
	for {
		if err := get(&sent{from: "127.0.0.1", path: "/probe", status: 200}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not answer: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var seq []*sent
	codes := []int32{200, 200, 404, 429, 503, 200}
	for i := range 30 {
		s := &sent{from: fmt.Sprintf("127.0.0.%d", 2+i%3), status: codes[i%len(codes)]}
		s.path = fmt.Sprintf("/api/%d?code=%d", i, s.status)
		if i%4 != 3 {
			s.key = fmt.Sprintf("k%d", i%5)
		}
		switch {
		case i%7 == 6:
			s.path, s.status, s.noUpstream = fmt.Sprintf("/deny/%d", i), 403, true
		case i%5 == 2:
			s.path, s.slow = fmt.Sprintf("/slow?code=%d", s.status), true
		}
		if err := get(s); err != nil {
			t.Fatal(err)
		}
		seq = append(seq, s)
		time.Sleep(time.Duration(i%3) * 3 * time.Millisecond)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := len(lines)
		mu.Unlock()
		if n >= len(seq)+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d log lines of %d: %s", n, len(seq)+1, stderr.String())
		}
	}
	// A copy: the reader may still append a late datagram (the race
	// detector saw one), and the checks below read the lines logged now.
	mu.Lock()
	logLines := slices.Clone(lines)
	mu.Unlock()
	log := strings.Join(logLines, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "haproxy.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}

	// HAProxy's config is the log's definition: option httplog and the
	// capture name the fields
	f, err := accesslog.ServerFormat("haproxy", conf)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := accesslog.NewReader(strings.NewReader(log), accesslog.Options{Format: f, Keys: []string{"$remote_addr", "$http_x_api_key", "$uri"}})
	if err != nil {
		t.Fatal(err)
	}
	var reqs []accesslog.Request
	for {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, *r)
	}
	if st := rd.Stats(); st.Bad != 0 || len(reqs) != len(seq)+1 {
		t.Fatalf("%d requests of %d lines, %d bad %v:\n%s", len(reqs), len(seq)+1, st.Bad, st.FirstBad, log)
	}
	reqs = reqs[1:] // the probe
	date := regexp.MustCompile(`\[(\d\d/\w\w\w/\d{4}:\d\d:\d\d:\d\d\.\d{3})\]`)
	ms := func(tm time.Time) float64 { return float64(tm.UnixMilli()) }
	// HAProxy times an answer in whole milliseconds of its own clock, read
	// once per poll loop, so an answer the client timed at 41.3 ms can be
	// logged as 42: the client's time rounded up, plus that one tick.
	seen := func(s *sent) float64 { return math.Ceil(float64(s.t1.Sub(s.t0).Microseconds())/1000) + 1 }
	for i, r := range reqs {
		s := seq[i]
		line := logLines[r.Line-1]
		logged, err := time.ParseInLocation("02/Jan/2006:15:04:05.000", date.FindStringSubmatch(line)[1], time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("request %d (%s %s %q, line %q)", i, s.from, s.path, s.key, line)
		if r.StartMS != ms(logged) {
			t.Errorf("%s: start %.0f, HAProxy logged %s", what, r.StartMS, logged.Format(time.RFC3339Nano))
		}
		if r.StartMS < ms(s.t0) || r.StartMS > ms(s.t1) {
			t.Errorf("%s: start %.0f outside the client's %.0f..%.0f", what, r.StartMS, ms(s.t0), ms(s.t1))
		}
		if r.Status != s.status {
			t.Errorf("%s: status %d, want %d", what, r.Status, s.status)
		}
		if got := rd.Key(0).Name(r.Keys[0]); got != s.from {
			t.Errorf("%s: address %q", what, got)
		}
		if got := rd.Key(1).Name(r.Keys[1]); got != s.key {
			t.Errorf("%s: api key %q", what, got)
		}
		if want, _, _ := strings.Cut(s.path, "?"); rd.Key(2).Name(r.Keys[2]) != want {
			t.Errorf("%s: uri %q", what, rd.Key(2).Name(r.Keys[2]))
		}
		switch {
		case s.noUpstream && r.ServiceMS == r.ServiceMS:
			t.Errorf("%s: service %v ms, HAProxy answered itself", what, r.ServiceMS)
		case s.slow && !(r.ServiceMS >= 40 && r.ServiceMS <= seen(s)):
			t.Errorf("%s: service %v ms of a 40 ms answer (client saw %.1f)", what, r.ServiceMS, float64(s.t1.Sub(s.t0).Microseconds())/1000)
		case !s.noUpstream && !(r.ServiceMS >= 0):
			t.Errorf("%s: service %v ms", what, r.ServiceMS)
		}
	}
	t.Logf("HAProxy's lines:\n%s", log)
}
