package realtools

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// NginxZone is a delaying limit_req zone as ngx_http_limit_req_module
// holds it: its rate in thousandths of a request per second, and the
// excess in thousandths passed at once (delay=N is N*1000; no delay= is 0).
type NginxZone struct{ RateMilli, DelayMilli int }

var nginxDelaying = regexp.MustCompile(`delaying request, excess: (\d+)\.(\d{3}), by zone "(\w+)".*request: "GET [^ ]*[?&]i=(\d+)[ &]`)

// NginxSetDelays reads the delay nginx set each delayed request, keyed by
// the request's ?i=, from an error log (at warn or info) holding
// limit_req's "delaying request, excess: E, by zone Z" lines: (E - Z's
// delay) * 1000 / Z's rate ms, in integers, as ngx_http_limit_req_account
// computes it. A delaying line it cannot read, or a zone not in zones,
// fails the test.
func NginxSetDelays(t testing.TB, errorLog string, zones map[string]NginxZone) map[int]float64 {
	t.Helper()
	out := map[int]float64{}
	for _, line := range strings.Split(errorLog, "\n") {
		if !strings.Contains(line, "delaying request") {
			continue
		}
		m := nginxDelaying.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("nginx error log line %q", line)
		}
		whole, _ := strconv.Atoi(m[1])
		frac, _ := strconv.Atoi(m[2])
		id, _ := strconv.Atoi(m[4])
		z, ok := zones[m[3]]
		if !ok {
			t.Fatalf("zone %q delayed request %d, not a known delaying zone: %q", m[3], id, line)
		}
		out[id] = float64((whole*1000 + frac - z.DelayMilli) * 1000 / z.RateMilli)
	}
	return out
}
