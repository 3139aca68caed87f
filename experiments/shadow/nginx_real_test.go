package shadow_test

import (
	"bufio"
	"fmt"
	"github.com/ratelab/ratelab/internal/realtools"
	"maps"
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

	"github.com/ratelab/ratelab/experiments/accesslog"
	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/shadow"
)

// realConf is the nginx under test: a log_format with $msec and
// $request_time, and three limited locations, each with zones of its own
// (a zone shared between locations would be charged by the other's
// requests, which a replay of one location does not see). The error log
// at warn holds limit_req's "delaying request" lines (realZones).
const realConf = `daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 512; }
http {
  log_format shadow '$remote_addr [$time_local] "$request" $status '
                    '$connection $msec $request_time "$http_x_api_key"';
  access_log %[1]s/access.log shadow;
  client_body_temp_path %[1]s/tmp/body;
  proxy_temp_path %[1]s/tmp/proxy;
  fastcgi_temp_path %[1]s/tmp/fastcgi;
  uwsgi_temp_path %[1]s/tmp/uwsgi;
  scgi_temp_path %[1]s/tmp/scgi;
  default_type text/plain;
  limit_req_zone $binary_remote_addr zone=a:1m rate=10r/s;
  limit_req_zone $http_x_api_key zone=b:1m rate=5r/s;
  limit_req_zone $binary_remote_addr zone=c_ip:1m rate=20r/s;
  limit_req_zone $http_x_api_key zone=c_key:1m rate=240r/m;
  server {
    listen 127.0.0.1:%[2]d;
    root %[1]s/html;
    location /a/ { limit_req zone=a burst=3 nodelay; }
    location /b/ { limit_req zone=b burst=3 delay=1; limit_req_status 429; }
    location /c/ { limit_req zone=c_ip burst=2 nodelay; limit_req zone=c_key burst=2; }
  }
}
`

// sent is one request of the sequence.
type sent struct {
	atMS   int
	path   string // "/a/ok?i=3"
	from   string // local address
	apiKey string // X-Api-Key, "" for none
}

// sequence is the known request sequence: per location, bursts from a few
// clients (local addresses 127.0.0.2-4, api keys k1-k2 and none) over
// about two seconds, from a fixed seed.
func sequence() []sent {
	rng := rand.New(rand.NewPCG(23, 5))
	var out []sent
	i := 0
	for _, loc := range []string{"a", "b", "c"} {
		for burst := range 8 {
			at := burst*250 + rng.IntN(60)
			for range 3 + rng.IntN(6) {
				from := fmt.Sprintf("127.0.0.%d", 2+rng.IntN(3))
				key := []string{"k1", "k2", "", "k1"}[rng.IntN(4)]
				out = append(out, sent{atMS: at, path: fmt.Sprintf("/%s/ok?i=%d", loc, i), from: from, apiKey: key})
				i++
				at += rng.IntN(4) * 7
			}
		}
	}
	return out
}

// TestShadowReproducesRealNginx starts Debian's nginx on loopback, sends it
// the known sequence, and replays its own access.log through its own
// config, location by location: every status (200, 503, 429) and every
// delay is nginx's, request by request. A request whose decision changes
// when its time moves by 1 ms (nginx decides on its monotonic ms clock,
// the log gives the wall clock's ms) may differ: such requests are named,
// never hidden, and any other difference fails.
func TestShadowReproducesRealNginx(t *testing.T) {
	bin := realtools.Server(t, "nginx")
	dir := t.TempDir()
	for _, d := range []string{"tmp", "html/a", "html/b", "html/c"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"", "a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(dir, "html", d, "ok"), []byte("ok\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	confText := fmt.Sprintf(realConf, dir, port)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(confText), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGQUIT) // graceful stop, by its PID: flushes the log
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(stop)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	get := func(s sent) (int, error) {
		d := net.Dialer{Timeout: 20 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(s.from)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		hdr := ""
		if s.apiKey != "" {
			hdr = "X-Api-Key: " + s.apiKey + "\r\n"
		}
		if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: ratelab\r\n%sConnection: close\r\n\r\n", s.path, hdr); err != nil {
			return 0, err
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return 0, err
		}
		var status int
		_, err = fmt.Sscanf(line, "HTTP/1.1 %d", &status)
		return status, err
	}
	deadline := time.Now().Add(60 * time.Second) // a loaded machine starts nginx slowly
	for {
		if st, err := get(sent{path: "/ok", from: "127.0.0.1"}); err == nil && st == 200 {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not answer on %s\n%s", addr, log)
		}
		time.Sleep(20 * time.Millisecond)
	}

	seq := sequence()
	got := make([]int, len(seq))
	errs := make([]error, len(seq))
	var wg sync.WaitGroup
	start := time.Now().Add(50 * time.Millisecond)
	for i, s := range seq {
		wg.Go(func() {
			time.Sleep(time.Until(start.Add(time.Duration(s.atMS) * time.Millisecond)))
			got[i], errs[i] = get(s)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	stop()

	// nginx's own log and config, read as lab shadow reads them.
	def, err := deploy.NginxLogFormat(confText, "shadow")
	if err != nil {
		t.Fatal(err)
	}
	f, err := accesslog.ParseFormat(def)
	if err != nil {
		t.Fatal(err)
	}
	logText, err := os.ReadFile(filepath.Join(dir, "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(logText)), "\n")
	errorLog, err := os.ReadFile(filepath.Join(dir, "error.log"))
	if err != nil {
		t.Fatal(err)
	}
	delays := realtools.NginxSetDelays(t, string(errorLog), realZones)
	counts := map[string]int{}
	var edges []string
	lateMS := 0.0
	for _, loc := range []string{"a", "b", "c"} {
		im, err := deploy.Import("nginx", confText, deploy.ImportOptions{Location: "/" + loc + "/"})
		if err != nil {
			t.Fatal(err)
		}
		route := "/" + loc + "/"
		// agrees says whether the replay's decision of a request is
		// nginx's: its status, and its delay nginx's to the ms — the
		// delay nginx set (its error log's excess), which its request
		// time is at least. The request time alone cannot say it: the
		// timer fires late on a loaded machine (113 ms seen at load 30,
		// more than 200 ms, the shortest interval between two delays
		// here, can happen), so it is no upper bound.
		agrees := func(d realDecision) (bool, float64) {
			fields := strings.Fields(lines[d.line-1])
			rt, _ := strconv.ParseFloat(fields[len(fields)-2], 64)
			nginxDelay := rt * 1000
			want := 200
			if d.limited {
				want = im.Status
			}
			set := delays[d.id]
			return want == int(d.logged) && (d.limited || math.Abs(d.delay-set) <= 1 && nginxDelay >= set-1), nginxDelay
		}
		// The log cannot say two things nginx knew: the order of requests
		// that start in the same ms, and its own ms clock (monotonic,
		// where the log's $msec is the wall clock's: 1 ms apart either
		// way). A request the replay decides otherwise is tried at those
		// other places: its ms's requests in another order (one in which
		// each of them gets nginx's decision), 1 ms earlier or later; the
		// first that gives nginx's decision is kept (and named), and the
		// replay goes on from there. A request no place explains fails
		// the test. Any order of the ms, not only d first or last: a
		// stalled nginx (a loaded machine) takes a backlog in one ms, in
		// an order of its own, neither its accept order ($connection) nor
		// its log's (seen: four requests of one key taken in the reverse
		// of their connections' order).
		shifts := map[int64]float64{}
		placed := map[int]bool{} // a request is placed once: no walking it away
		for range 100 {
			decisions := replay(t, im, f, string(logText), route, shifts)
			bad := slices.IndexFunc(decisions, func(d realDecision) bool { ok, _ := agrees(d); return !ok })
			if bad < 0 {
				for _, d := range decisions {
					counts[fmt.Sprint(d.logged)]++
					if d.delay > 0 {
						counts["delayed"]++
						_, took := agrees(d)
						lateMS = max(lateMS, took-d.delay)
					}
					if got[d.id] != int(d.logged) {
						t.Errorf("request %d: the client saw %d, the log says %d", d.id, got[d.id], d.logged)
					}
				}
				break
			}
			d := decisions[bad]
			_, nginxDelay := agrees(d)
			what := fmt.Sprintf("request %d %s (log line %d, start %.3f): nginx %d after %g ms, replay %s after %g ms",
				d.id, seq[d.id].path, d.line, d.start/1000, d.logged, nginxDelay, map[bool]string{true: "limited", false: "passed"}[d.limited], d.delay)
			if placed[d.id] {
				t.Errorf("%s, after being placed once already", what)
				break
			}
			placed[d.id] = true
			// d's ms: its requests (d among them), in the replay's order
			ms := math.Floor(d.start)
			var group []realDecision
			for _, o := range decisions {
				if math.Floor(o.start) == ms {
					group = append(group, o)
				}
			}
			// at puts the ms's requests in this order (starts spread
			// inside the ms), the others as they are
			at := func(order []realDecision) map[int64]float64 {
				m := maps.Clone(shifts)
				for i, o := range order {
					m[o.line] += ms + float64(i+1)/float64(len(order)+1) - o.start
				}
				return m
			}
			agreesIn := func(m map[int64]float64, id int) bool {
				again := replay(t, im, f, string(logText), route, m)
				i := slices.IndexFunc(again, func(o realDecision) bool { return o.id == id })
				ok, _ := agrees(again[i])
				return ok
			}
			// inOrder searches an order of the ms's requests in which each
			// gets nginx's decision, request by request (a request's
			// decision depends only on those before it), trying the
			// replay's order first; at most 2000 replays.
			budget := 2000
			var inOrder func(prefix, rest []realDecision) []realDecision
			inOrder = func(prefix, rest []realDecision) []realDecision {
				if len(rest) == 0 {
					return prefix
				}
				for i, c := range rest {
					if budget--; budget < 0 {
						return nil
					}
					next := append(slices.Clone(prefix), c)
					others := slices.Delete(slices.Clone(rest), i, i+1)
					if agreesIn(at(append(slices.Clone(next), others...)), c.id) {
						if order := inOrder(next, others); order != nil {
							return order
						}
					}
				}
				return nil
			}
			type place struct {
				name  string
				apply func() map[int64]float64
			}
			var places []place
			if len(group) > 1 {
				places = append(places, place{"in an order of its ms", func() map[int64]float64 {
					if order := inOrder(nil, group); order != nil {
						var ids []string
						for _, o := range order {
							ids = append(ids, strconv.Itoa(o.id))
						}
						what += " (" + strings.Join(ids, ", ") + ")"
						return at(order)
					}
					return nil
				}})
			}
			moved := func(by float64) func() map[int64]float64 {
				return func() map[int64]float64 {
					m := maps.Clone(shifts)
					m[d.line] += by
					if !agreesIn(m, d.id) {
						return nil
					}
					return m
				}
			}
			places = append(places, place{"1 ms earlier", moved(-1)}, place{"1 ms later", moved(1)})
			explained := false
			for _, p := range places {
				if alt := p.apply(); alt != nil {
					shifts, explained = alt, true
					edges = append(edges, what+": nginx's decision "+p.name)
					break
				}
			}
			if !explained {
				t.Errorf("%s, and no place within its ms or 1 ms away gives nginx's decision\n%s", what, locLines(lines, route))
				break
			}
		}
	}
	for _, e := range edges {
		t.Logf("on the clock's edge: %s", e)
	}
	t.Logf("agreement: %d requests, statuses %v, %d placed within their ms or 1 ms away; nginx's timers fired up to %.0f ms late", len(seq), counts, len(edges), lateMS)
	if total := counts["200"] + counts["503"] + counts["429"]; total != len(seq) {
		t.Errorf("%d of %d requests compared", total, len(seq))
	}
	for _, st := range []string{"200", "503", "429", "delayed"} {
		if counts[st] == 0 {
			t.Errorf("no %s agreed: the sequence no longer tests it", st)
		}
	}
}

// realZones are realConf's zones that delay.
var realZones = map[string]realtools.NginxZone{"b": {RateMilli: 5000, DelayMilli: 1000}, "c_key": {RateMilli: 240 * 1000 / 60}}

type realDecision struct {
	id      int
	line    int64
	start   float64
	limited bool
	delay   float64
	logged  int32
}

// replay runs lab shadow's replay of one location's requests; shift moves
// the start of a line by some ms (the 1 ms edge).
func replay(t *testing.T, im *deploy.Imported, f *accesslog.Format, log, route string, shift map[int64]float64) []realDecision {
	t.Helper()
	if len(shift) > 0 {
		lines := strings.Split(log, "\n")
		for line, ms := range shift {
			fields := strings.Fields(lines[line-1])
			n := len(fields)
			msec, _ := strconv.ParseFloat(fields[n-3], 64)
			fields[n-3] = strconv.FormatFloat(msec+ms/1000, 'f', 6, 64) // µs: places within a ms
			lines[line-1] = strings.Join(fields, " ")
		}
		log = strings.Join(lines, "\n")
	}
	var out []realDecision
	rp, err := shadow.Open(strings.NewReader(log), shadow.Options{Import: im, ReportKey: "$arg_i", MaxBadPct: -1,
		Log: accesslog.Options{Format: f, Route: route},
		Each: func(d *shadow.Decision) {
			id, err := strconv.Atoi(d.Key)
			if err != nil {
				t.Fatalf("line %d: key %q", d.Request.Line, d.Key)
			}
			out = append(out, realDecision{id: id, line: d.Request.Line, start: d.Request.StartMS, limited: d.Limited, delay: d.DelayMS, logged: d.Request.Status})
		}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rp.Run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Log.Bad != 0 {
		t.Fatalf("bad lines: %+v", res.Log)
	}
	return out
}

// locLines are the log's lines of one location, for a failure.
func locLines(lines []string, prefix string) string {
	var out []string
	for i, l := range lines {
		if strings.Contains(l, "\"GET "+prefix) {
			out = append(out, fmt.Sprintf("%d: %s", i+1, l))
		}
	}
	return strings.Join(out, "\n")
}
