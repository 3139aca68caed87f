package limiter_test

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"github.com/ratelab/ratelab/internal/realtools"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/limiter"
)

func nginxParams(rate, burst, delay float64) limiter.Params {
	return limiter.Params{limiter.ParamRate: rate, limiter.ParamBurst: burst, limiter.ParamNginxDelay: delay}
}

var (
	nodelayOn  = map[string]string{limiter.OptionNodelay: "on"}
	perKey     = map[string]string{limiter.OptionNodelay: "on", limiter.OptionNginxKey: "client"}
	perKeyWait = map[string]string{limiter.OptionNginxKey: "client"}
)

// Table tests of nginx limit_req, worked from ngx_http_limit_req_module.c
// by hand. rate=10r/s is 10000 thousandths/s: 10 thousandths drain per ms,
// and an excess of E waits E*1000/10000 ms.
func TestNginxLimitReq(t *testing.T) {
	t.Parallel()
	runLibCases(t, []libraryCase{
		{
			name: "a new key passes empty; the excess waits whole intervals on the ms clock; past the burst 503",
			typ:  limiter.TypeNginxLimitReq, params: nginxParams(10, 3, 0),
			events: []event{
				admit(0),             // new key: excess 0
				shaped(0, 100),       // excess 1000: 100 ms
				shaped(0.5, 200),     // same ms: 2000, released at floor(t) + 200
				shaped(0.9, 300),     // 3000 = burst
				reject(0.9),          // 4000 > burst: 503, key unchanged
				reject(50.7),         // 50 ms drained 500: 3500 > 3000
				shaped(100.2, 400),   // 100 ms drained 1000: 3000 again, 300 ms from 100
				reject(100.3),        // 4000
				admit(1000.5),        // 900 ms drained 9000: below 0, so excess 0
				shaped(1000.6, 1100), // 1000: 100 ms
			},
		},
		{
			name: "nodelay: the same arrivals pass at once up to the burst",
			typ:  limiter.TypeNginxLimitReq, params: nginxParams(10, 3, 0), options: nodelayOn,
			events: []event{admit(0), admit(0), admit(0.5), admit(0.9), reject(0.9), reject(50.7), admit(100.2), reject(100.3)},
		},
		{
			name: "delay=2: two excess requests pass at once, the rest wait (E - 2000)*1000/rate",
			typ:  limiter.TypeNginxLimitReq, params: nginxParams(10, 3, 2),
			events: []event{admit(0), admit(0), admit(0.5), shaped(0.9, 100), reject(0.9)},
		},
		{
			name: "the drain may go below zero before the 1000 is added: an idle key passes with a smaller excess",
			typ:  limiter.TypeNginxLimitReq, params: nginxParams(1, 5, 0),
			events: []event{
				admit(0), shaped(0, 1000), // excess 1000 at 1r/s: 1 s
				admit(3000),        // 1000 - 3000 + 1000 < 0: excess 0
				shaped(3500, 4000), // 0 - 500 + 1000 = 500: 500 ms
			},
		},
		{
			name: "rate=1r/m is 16 thousandths/s, truncated: one excess request waits 62.5 s, not 60",
			typ:  limiter.TypeNginxLimitReq, params: nginxParams(1.0/60, 1, 0),
			events: []event{admit(0), shaped(0, 62_500), reject(0)},
		},
		{
			name: "a delay under 1 ms truncates to 0: the request passes at once",
			typ:  limiter.TypeNginxLimitReq, params: nginxParams(2000, 5, 0),
			events: []event{admit(0), admit(0), shaped(0, 1), shaped(0, 1), shaped(0, 2)}, // 1000, 2000, 3000, 4000 thousandths / 2e6
		},
		{
			name:   "key client: every client its own key with the full rate and burst",
			typ:    limiter.TypeNginxLimitReq,
			params: nginxParams(1, 1, 0), options: perKey, clients: 2,
			events: []event{admitFrom(0, 0), admitFrom(0, 0), rejectFrom(0, 0), admitFrom(1, 0), admitFrom(1, 0.5), rejectFrom(1, 0.7), rejectFrom(0, 999), admitFrom(0, 1000)},
		},
		{
			// 1r/m drains 16*60000/1000 = 960 in 60 s: a key left alone
			// passes with 0 - 960 + 1000 = 40 > burst 0 and is refused ...
			name:   "burst 0 at 1r/m: a key idle 60 s still carries 40 thousandths",
			typ:    limiter.TypeNginxLimitReq,
			params: nginxParams(1.0/60, 0, 0), options: perKey, clients: 3,
			events: []event{admitFrom(0, 0), rejectFrom(0, 60_000)},
		},
		{
			// ... but creating another key drops it first (idle >= 60 s,
			// drained), and it comes back empty.
			name:   "creating a key drops the least recently used key idle 60 s; it comes back empty",
			typ:    limiter.TypeNginxLimitReq,
			params: nginxParams(1.0/60, 0, 0), options: perKey, clients: 3,
			events: []event{admitFrom(0, 0), admitFrom(1, 60_000), admitFrom(0, 60_001), rejectFrom(1, 60_002)},
		},
		{
			name:   "expiry stops at the first key at the end of the queue that is not idle 60 s",
			typ:    limiter.TypeNginxLimitReq,
			params: nginxParams(1.0/60, 0, 0), options: perKey, clients: 3,
			events: []event{
				admitFrom(0, 0), admitFrom(1, 30_000),
				admitFrom(2, 60_000),  // drops key 0 (idle 60 s), stops at key 1 (30 s)
				admitFrom(0, 60_001),  // key 0 comes back empty
				rejectFrom(1, 90_000), // key 1 was kept: 0 - 960 + 1000 = 40 > 0
			},
		},
	})
}

// The row refuses per-client keys with delays (the releases would leave out
// of order), and the parameter table states nginx's own limits.
func TestNginxLimitReqSettings(t *testing.T) {
	t.Parallel()
	s := limiter.Spec{Type: limiter.TypeNginxLimitReq, Options: perKeyWait}
	s.Normalize()
	if _, err := limiter.New(&s, nginxParams(10, 5, 0), []float64{1, 1}, nil); err == nil || !strings.Contains(err.Error(), "out of arrival order") {
		t.Errorf("per-client keys with delays: error %v", err)
	}
	for _, p := range []limiter.Params{nginxParams(10, 5, 5), nginxParams(10, 5, 9)} {
		if _, err := limiter.New(&s, p, []float64{1, 1}, nil); err != nil {
			t.Errorf("per-client keys with delay >= burst never delay: %v", err)
		}
	}
	bad := limiter.Spec{Type: limiter.TypeNginxLimitReq, Params: map[string]limiter.Values{
		limiter.ParamRate: {0}, limiter.ParamBurst: {-1}, limiter.ParamNginxDelay: {0}}}
	bad.Normalize()
	errs := bad.Validate("limiters[0]")
	if len(errs) != 2 || errs[0].Path != "limiters[0].rate_rps" || !strings.Contains(errs[0].Msg, "invalid rate") ||
		errs[1].Path != "limiters[0].burst" {
		t.Errorf("rate 0, burst -1: %v", errs)
	}
	if d, _ := limiter.GateDelayBoundMS(&limiter.Spec{Type: limiter.TypeNginxLimitReq}, nginxParams(10, 5, 2)); d != 300 {
		t.Errorf("delay bound (5-2)*100 ms = %g", d)
	}
}

// randomNginx draws limit_req settings: whole r/s, r/m and odd rates,
// bursts from 0, delays below and above the burst.
func randomNginx(rng *rand.Rand) (limiter.Params, bool) {
	rate := randomRate(rng)
	if rng.IntN(4) == 0 {
		rate = float64(1+rng.IntN(600)) / 60 // N r/m
	}
	burst := float64(rng.IntN(25))
	delay := 0.0
	if rng.IntN(2) == 0 {
		delay = float64(rng.IntN(30))
	}
	return nginxParams(rate, burst, delay), rng.IntN(4) == 0
}

// Zone mode: releases in arrival order, no longer held than DelayBoundMS,
// and no more than (burst+1) + rate*(d + 2 ms) in any window d (the
// truncated rate; the ms clock costs up to 1 ms at each end).
func TestNginxLimitReqZoneGuarantees(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(20, uint64(run)))
		p, nodelay := randomNginx(rng)
		opts := map[string]string{}
		if nodelay {
			opts = nodelayOn
		}
		g := libGate(t, limiter.TypeNginxLimitReq, p, opts, 1)
		rs := offerAll(t, g, randomTimes(rng, 50+rng.IntN(250)), nil, nil)
		bound, _ := limiter.GateDelayBoundMS(&limiter.Spec{Type: limiter.TypeNginxLimitReq, Options: opts}, p)
		for _, r := range rs {
			if held := r.release - r.t; held > bound || (nodelay && held != 0) {
				t.Fatalf("run %d %v nodelay=%v: held %g ms, bound %g", run, p, nodelay, held, bound)
			}
		}
		rate := math.Floor(p[limiter.ParamRate]*1000+1e-6) / 1000
		checkCurve(t, run, "nginx limit_req zone", releaseTimes(rs), rate, p[limiter.ParamBurst]+1+rate*2/1000)
	}
}

// Per client key with nodelay, every client's releases obey the zone's
// guarantee on its own.
func TestNginxLimitReqPerKeyGuarantees(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns / 4 {
		rng := rand.New(rand.NewPCG(21, uint64(run)))
		p, _ := randomNginx(rng)
		const clients = 4
		g := libGate(t, limiter.TypeNginxLimitReq, p, perKey, clients)
		ts := randomTimes(rng, 100+rng.IntN(400))
		cs := make([]int32, len(ts))
		for i := range cs {
			cs[i] = int32(rng.IntN(clients))
		}
		rs := offerAll(t, g, ts, cs, nil)
		rate := math.Floor(p[limiter.ParamRate]*1000+1e-6) / 1000
		for c := range int32(clients) {
			var mine []float64
			for _, r := range rs {
				if r.client == c {
					mine = append(mine, r.release)
				}
			}
			checkCurve(t, run, fmt.Sprintf("nginx limit_req key %d", c), mine, rate, p[limiter.ParamBurst]+1+rate*2/1000)
		}
	}
}

// nginxServer is a real nginx on 127.0.0.1 with its own config, pid file
// and logs in a temporary directory, stopped by its PID at cleanup.
type nginxServer struct {
	bin, dir string
	port     int
	sent     int // requests numbered so far (?i=, the logs' key)
}

// nginxConfig is the test server's configuration: every zone but timed
// (1r/s) at 5r/s (200 ms intervals), one location per variant, and /ready
// unlimited. The limited locations log their requests: the time nginx
// decided each (its cached clock, which limit_req reads too), the status
// and ?i=; the error log (info) holds the delays limit_req set.
const nginxConfig = `daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[1]s/tmp/body;
  proxy_temp_path %[1]s/tmp/proxy;
  fastcgi_temp_path %[1]s/tmp/fastcgi;
  uwsgi_temp_path %[1]s/tmp/uwsgi;
  scgi_temp_path %[1]s/tmp/scgi;
  default_type text/plain;
  log_format timed '$msec $status';
  log_format burst '$msec $request_time $status $arg_i';
  limit_req_zone $binary_remote_addr zone=delay0:1m rate=5r/s;
  limit_req_zone $binary_remote_addr zone=nodelay:1m rate=5r/s;
  limit_req_zone $binary_remote_addr zone=delay2:1m rate=5r/s;
  limit_req_zone $arg_key zone=perkey:1m rate=5r/s;
  limit_req_zone $arg_key zone=perkeywait:1m rate=5r/s;
  limit_req_zone $arg_key zone=timed:1m rate=1r/s;
  server {
    listen 127.0.0.1:%[2]d;
    root %[1]s/html;
    location /delay0/ { limit_req zone=delay0 burst=4; access_log %[1]s/burst.log burst; }
    location /nodelay/ { limit_req zone=nodelay burst=4 nodelay; access_log %[1]s/burst.log burst; }
    location /delay2/ { limit_req zone=delay2 burst=4 delay=2; access_log %[1]s/burst.log burst; }
    location /perkey/ { limit_req zone=perkey burst=2 nodelay; access_log %[1]s/burst.log burst; }
    location /perkeywait/ { limit_req zone=perkeywait burst=2; access_log %[1]s/burst.log burst; }
    location /timed/ { limit_req zone=timed burst=2 nodelay; access_log %[1]s/timed.log timed; }
  }
}
`

func startNginx(t *testing.T) *nginxServer {
	t.Helper()
	// The port is free when chosen, then closed for nginx to bind: another
	// process (an outgoing connection's ephemeral port, another test's
	// listener) can take it meanwhile, so a port found taken is chosen
	// again.
	for range 4 {
		if s := startNginxOnce(t); s != nil {
			return s
		}
	}
	t.Fatal("nginx found its port taken four times")
	return nil
}

// startNginxOnce is startNginx on one port: nil when nginx could not bind
// it (Address already in use).
func startNginxOnce(t *testing.T) *nginxServer {
	t.Helper()
	bin := realtools.Server(t, "nginx")
	dir := t.TempDir()
	for _, d := range []string{"tmp", "html"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "html", "ready"), []byte("ready\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"delay0", "nodelay", "delay2", "perkey", "perkeywait", "timed"} {
		if err := os.MkdirAll(filepath.Join(dir, "html", loc), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "html", loc, "ok"), []byte("ok\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConfig, dir, port), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGQUIT) // graceful stop, by its PID
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	s := &nginxServer{bin: bin, dir: dir, port: port}
	deadline := time.Now().Add(60 * time.Second) // a loaded machine starts nginx slowly
	for {
		if status, _, err := s.get("/ready"); err == nil && status == 200 {
			return s
		}
		select {
		case err := <-done:
			done <- err // for the cleanup
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			if strings.Contains(string(log), "Address already in use") {
				t.Logf("port %d taken before nginx bound it: another port", port)
				return nil
			}
			t.Fatalf("nginx exited: %v\n%s", err, log)
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not answer on 127.0.0.1:%d\n%s", port, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// get sends one request on a new connection and returns the status.
func (s *nginxServer) get(path string) (int, time.Duration, error) {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), 20*time.Second)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	start := time.Now()
	return s.exchange(c, path, start)
}

func (s *nginxServer) exchange(c net.Conn, path string, start time.Time) (int, time.Duration, error) {
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: ratelab\r\nConnection: close\r\n\r\n", path); err != nil {
		return 0, 0, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return 0, 0, err
	}
	took := time.Since(start)
	var status int
	if _, err := fmt.Sscanf(line, "HTTP/1.1 %d", &status); err != nil {
		return 0, 0, fmt.Errorf("status line %q: %w", line, err)
	}
	return status, took, nil
}

// burst opens a connection per path, then sends all the requests at once
// and returns each one's status and time to its status line.
func (s *nginxServer) burst(paths []string) ([]int, []time.Duration, error) {
	conns := make([]net.Conn, len(paths))
	for i := range conns {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), 20*time.Second)
		if err != nil {
			return nil, nil, err
		}
		defer c.Close()
		conns[i] = c
	}
	statuses := make([]int, len(paths))
	took := make([]time.Duration, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range conns {
		wg.Go(func() { statuses[i], took[i], errs[i] = s.exchange(c, paths[i], start) })
	}
	wg.Wait()
	return statuses, took, errors.Join(errs...)
}

// TestNginxMatchesTheRealServer sends simultaneous requests to a real nginx
// (limit_req with burst, nodelay, delay= and per-key variants, 5r/s) and
// compares nginx's decisions, read from its logs, request by request with
// the gate's for the same requests at the times nginx took them: the
// status, and the delay limit_req set (its error log's excess), to 2 ms.
// The gate at one instant is first checked against the test's own
// expectation (the number of 503s, the delays in intervals of 1/rate).
func TestNginxMatchesTheRealServer(t *testing.T) {
	srv := startNginx(t)
	const intervalMS = 200.0
	variants := []struct {
		name     string
		path     string
		keys     []string // per-key variants: the key of each key's requests
		perKey   int      // requests per key (or in all)
		gate     func(clients int) limiter.Gate
		want200  int // per key
		wantWait []float64
	}{
		{name: "burst=4 (delay 0)", path: "/delay0/ok", perKey: 9,
			gate:    func(int) limiter.Gate { return libGate(t, limiter.TypeNginxLimitReq, nginxParams(5, 4, 0), nil, 1) },
			want200: 5, wantWait: []float64{0, 1, 2, 3, 4}},
		{name: "burst=4 nodelay", path: "/nodelay/ok", perKey: 9,
			gate: func(int) limiter.Gate {
				return libGate(t, limiter.TypeNginxLimitReq, nginxParams(5, 4, 0), nodelayOn, 1)
			},
			want200: 5, wantWait: []float64{0, 0, 0, 0, 0}},
		{name: "burst=4 delay=2", path: "/delay2/ok", perKey: 9,
			gate:    func(int) limiter.Gate { return libGate(t, limiter.TypeNginxLimitReq, nginxParams(5, 4, 2), nil, 1) },
			want200: 5, wantWait: []float64{0, 0, 0, 1, 2}},
		{name: "per key ($arg_key) burst=2 nodelay", path: "/perkey/ok", keys: []string{"a", "b"}, perKey: 4,
			gate: func(n int) limiter.Gate {
				return libGate(t, limiter.TypeNginxLimitReq, nginxParams(5, 2, 0), perKey, n)
			},
			want200: 3, wantWait: []float64{0, 0, 0}},
		{name: "per key ($arg_key) burst=2, waiting", path: "/perkeywait/ok", keys: []string{"a", "b"}, perKey: 4,
			gate: func(n int) limiter.Gate {
				// The lab's row refuses this (its releases interleave); the
				// gate itself models it.
				return limiter.NewNginxLimitReq(5, 2, 0, false, true, n)
			},
			want200: 3, wantWait: []float64{0, 1, 2}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			nginxBurstMatches(t, srv, v.path, v.keys, v.perKey, v.gate, v.want200, v.wantWait, intervalMS)
		})
	}

	// nginx's own limits, which the row's ranges state: rate=0r/s is refused.
	conf := filepath.Join(srv.dir, "bad.conf")
	bad := "events {}\nhttp { limit_req_zone $binary_remote_addr zone=z:1m rate=0r/s; }\n"
	if err := os.WriteFile(conf, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(srv.bin, "-t", "-p", srv.dir, "-c", conf, "-e", filepath.Join(srv.dir, "bad.log")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "invalid rate") {
		t.Errorf("nginx -t with rate=0r/s: %v\n%s", err, out)
	}
}

// TestNginxDrainMatchesTheRealServer sends a timed stream to a real nginx
// (limit_req rate=1r/s burst=2 nodelay: 1 thousandth of excess drains per
// ms) and compares each answer with the gate's decision for the same
// request. Planned: three pass at 0 ms (excess 0, 1000, 2000) and the
// fourth is refused; at 500 ms the excess would be 2000 - 500 + 1000 =
// 2500 (refused, nothing stored); at 1500 ms 2000 - 1500 + 1000 = 1500
// (passes); at 1750 ms 1500 - 250 + 1000 = 2250 (refused); at 2500 ms
// 1500 - 1000 + 1000 = 1500 (passes). Every planned decision has at least
// 250 ms of margin. The gate is fed the times nginx decided the requests
// at, read from its log (/timed/'s $msec), not the times the client sent
// them: on a loaded machine a request can reach nginx hundreds of ms after
// the client's clock was read (a send stalled 250 ms would flip the 1750 ms
// decision), so nginx's own clock is the one both decide on; the statuses,
// in nginx's order, are compared, and the client's answers with the log's.
func TestNginxDrainMatchesTheRealServer(t *testing.T) {
	srv := startNginx(t)
	plan := []struct {
		atMS  float64
		count int
	}{{0, 4}, {500, 1}, {1500, 1}, {1750, 1}, {2500, 1}}
	want := []int{200, 200, 200, 503, 503, 200, 503, 200}
	newGate := func() limiter.Gate { return libGate(t, limiter.TypeNginxLimitReq, nginxParams(1, 2, 0), nodelayOn, 1) }
	decide := func(g limiter.Gate, atMS float64) int {
		if _, ok := g.Offer(1000+atMS, 0); ok {
			return 200
		}
		return 503
	}

	g := newGate()
	var planned []int
	for _, step := range plan {
		for range step.count {
			planned = append(planned, decide(g, step.atMS))
		}
	}
	if !slices.Equal(planned, want) {
		t.Fatalf("the gate answers %v on the plan, want %v (the test's own arithmetic)", planned, want)
	}

	path := fmt.Sprintf("/timed/ok?key=drain-%d", time.Now().UnixNano()) // a fresh key
	var got []int
	var sentMS []float64
	start := time.Now()
	for _, step := range plan {
		time.Sleep(time.Until(start.Add(time.Duration(step.atMS * float64(time.Millisecond)))))
		sentMS = append(sentMS, math.Floor(float64(time.Since(start).Microseconds())/1000))
		if step.count == 1 {
			st, _, err := srv.get(path)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, st)
			continue
		}
		paths := make([]string, step.count)
		for i := range paths {
			paths[i] = path
		}
		sts, _, err := srv.burst(paths)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, sts...)
	}

	// nginx logs a request after its answer: wait for every line.
	var lines []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		text, _ := os.ReadFile(filepath.Join(srv.dir, "timed.log"))
		if lines = strings.Fields(string(text)); len(lines) >= 2*len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx logged %d of %d requests:\n%s", len(lines)/2, len(want), text)
		}
	}
	g = newGate()
	var logged, gate []int
	var nginxMS []float64
	for i := 0; i < len(lines); i += 2 {
		sec, err1 := strconv.ParseFloat(lines[i], 64)
		status, err2 := strconv.Atoi(lines[i+1])
		if err1 != nil || err2 != nil {
			t.Fatalf("log line %q %q", lines[i], lines[i+1])
		}
		nginxMS = append(nginxMS, math.Round(sec*1000)) // whole ms, as limit_req reads
		logged = append(logged, status)
	}
	first := nginxMS[0]
	for i := range nginxMS {
		nginxMS[i] -= first
		gate = append(gate, decide(g, nginxMS[i]))
	}
	t.Logf("sent at %v ms, nginx decided at %v ms: nginx %v, gate %v (planned %v)", sentMS, nginxMS, logged, gate, planned)
	if !slices.Equal(logged, gate) {
		t.Errorf("nginx answered %v at %v ms of its clock; the gate %v", logged, nginxMS, gate)
	}
	slices.Sort(got)
	slices.Sort(logged)
	if !slices.Equal(got, logged) {
		t.Errorf("the client saw %v, nginx logged %v", got, logged)
	}
}

// A keyed gate's curve and nominal rate are per client: with key "client"
// and 3 clients the aggregate is 3 times one key's (and 1 time with key
// "zone").
func TestKeyedCurveCountsClients(t *testing.T) {
	t.Parallel()
	p := limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 4}
	zone := &limiter.Spec{Type: limiter.TypeNginxLimitReq}
	zone.Normalize()
	perKey := &limiter.Spec{Type: limiter.TypeNginxLimitReq, Options: map[string]string{limiter.OptionNginxKey: "client"}}
	perKey.Normalize()
	one, _ := limiter.ArrivalCurve(zone, p, 3)
	three, _ := limiter.ArrivalCurve(perKey, p, 3)
	if one.At(1000) != 4+1+10*1.002 || three.At(1000) != 3*one.At(1000) {
		t.Errorf("alpha(1 s): zone %g, per key ×3 %g", one.At(1000), three.At(1000))
	}
	if n1, _ := limiter.Nominal(zone, p, 3, 1000); n1 != 10 {
		t.Errorf("zone nominal %g, want 10", n1)
	}
	if n3, _ := limiter.Nominal(perKey, p, 3, 1000); n3 != 30 {
		t.Errorf("per-key nominal %g, want 30", n3)
	}
}

// nginxZones are the delaying zones of nginxConfig.
var nginxZones = map[string]realtools.NginxZone{"delay0": {RateMilli: 5000}, "delay2": {RateMilli: 5000, DelayMilli: 2000}, "perkeywait": {RateMilli: 5000}}

// nginxBurstMatches sends one burst of a TestNginxMatchesTheRealServer
// variant and compares nginx's decisions with the gate's. A loaded machine
// spreads the "simultaneous" requests over many ms, even over more than an
// interval, and nginx then decides otherwise than at one instant; so the
// gate is fed the times nginx took the requests at ($msec -
// $request_time, whole ms), and each request's delay is the one nginx set
// (its error log's "delaying request, excess: E": (E - the zone's delay)
// * 1000 / its rate ms), not its time to answer (a timer fires late on a
// loaded machine). Requests of one key that nginx took in the same ms are
// alike: they are matched in the order of their decisions (shortest
// delay first, 503 last), as the gate's come.
func nginxBurstMatches(t *testing.T, srv *nginxServer, path string, keys []string, perKey int, gate func(int) limiter.Gate, want200 int, wantWait []float64, intervalMS float64) {
	t.Helper()
	if keys == nil {
		keys = []string{""}
	}
	// The gate at one instant against the test's own expectation.
	g := gate(len(keys))
	for k := range keys {
		var waits []float64
		for range perKey {
			if release, ok := g.Offer(1000, int32(k)); ok {
				waits = append(waits, math.Round((release-1000)/intervalMS))
			}
		}
		slices.Sort(waits)
		if !slices.Equal(waits, wantWait) || len(waits) != want200 {
			t.Fatalf("key %q: the gate's waits at one instant %v intervals, want %v (the test's own expectation)", keys[k], waits, wantWait)
		}
	}

	type request struct {
		id, key, status int
		startMS         float64 // nginx's
		setMS, tookMS   float64 // the delay nginx set; its request time
	}
	var paths []string
	byID := map[int]*request{}
	var reqs []*request
	for k, key := range keys {
		for range perKey {
			srv.sent++
			r := &request{id: srv.sent, key: k, status: -1}
			p := fmt.Sprintf("%s?i=%d", path, r.id)
			if key != "" {
				p = fmt.Sprintf("%s?key=%s&i=%d", path, key, r.id)
			}
			paths = append(paths, p)
			reqs = append(reqs, r)
			byID[r.id] = r
		}
	}
	statuses, _, err := srv.burst(paths)
	if err != nil {
		t.Fatal(err)
	}

	// nginx logs a request after its answer: wait for every line.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		text, _ := os.ReadFile(filepath.Join(srv.dir, "burst.log"))
		for _, line := range strings.Split(string(text), "\n") {
			var sec, took float64
			var status, id int
			if n, _ := fmt.Sscanf(line, "%f %f %d %d", &sec, &took, &status, &id); n == 4 && byID[id] != nil {
				byID[id].status = status
				byID[id].startMS = math.Round(sec*1000) - math.Round(took*1000)
				byID[id].tookMS = math.Round(took * 1000)
			}
		}
		if !slices.ContainsFunc(reqs, func(r *request) bool { return r.status < 0 }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx did not log every request of the burst:\n%s", text)
		}
	}
	errorLog, err := os.ReadFile(filepath.Join(srv.dir, "error.log"))
	if err != nil {
		t.Fatal(err)
	}
	for id, setMS := range realtools.NginxSetDelays(t, string(errorLog), nginxZones) {
		if r := byID[id]; r != nil {
			r.setMS = setMS
		}
	}
	for i, r := range reqs {
		if statuses[i] != r.status {
			t.Errorf("request %d: the client saw %d, nginx logged %d", r.id, statuses[i], r.status)
		}
	}

	// The gate, fed nginx's times in nginx's order.
	rank := func(r *request) float64 {
		if r.status != 200 {
			return math.Inf(1)
		}
		return r.setMS
	}
	slices.SortStableFunc(reqs, func(a, b *request) int {
		if c := cmp.Compare(a.startMS, b.startMS); c != 0 {
			return c
		}
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(rank(a), rank(b))
	})
	g = gate(len(keys))
	var mismatch []string
	for _, r := range reqs {
		at := 1000 + r.startMS - reqs[0].startMS
		release, ok := g.Offer(at, int32(r.key))
		gateSaid := "503"
		if ok {
			gateSaid = fmt.Sprintf("200 after %g ms", release-at)
		}
		what := fmt.Sprintf("request %d (key %q) at %g ms: nginx %d, delay set %g ms (answered after %g); gate %s",
			r.id, keys[r.key], at-1000, r.status, r.setMS, r.tookMS, gateSaid)
		switch {
		case r.status != 200 && r.status != 503:
			t.Fatalf("%s: status %d", what, r.status)
		case ok != (r.status == 200), ok && math.Abs(release-at-r.setMS) > 2, r.tookMS < r.setMS-1:
			mismatch = append(mismatch, what)
		}
		t.Log(what)
	}
	if len(mismatch) > 0 {
		t.Errorf("nginx and the gate disagree:\n%s", strings.Join(mismatch, "\n"))
	}
}
