package deploy

import (
	"fmt"
	"math"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// nginxFormat is nginx's ngx_http_limit_req_module: a limit_req_zone (in
// the http block) and a limit_req (in the http, server or location block).
//
// Mapping. A bucket (rate r, burst b, and q requests that may wait) is
// limit_req_zone rate=r and limit_req burst=b-1+q: nginx lets a key's
// first request through with no excess and counts each later one as one
// request of excess, refusing (503) past burst, so burst=b-1 passes b
// back to back. A policer (q = 0) adds nodelay; otherwise delay=b-1 lets
// b requests through at once and makes the next q wait their turn, paced
// at the rate (delay omitted when 0, nginx's default). So a token bucket
// (r, b) is burst=b-1 nodelay and a leaky bucket (r, queue) is
// burst=queue-1 with no delay: nginx's classic leaky bucket.
//
// Rounding. nginx takes whole requests per second (Nr/s) or per minute
// (Nr/m), and holds the rate in truncated thousandths per second: a rate
// that is not whole is written in r/m, to the nearest whole request per
// minute (at least 1r/m). The key is a constant (one key for every request)
// or $binary_remote_addr for a point keyed per client. nginx's whole-ms
// clock, its excess in thousandths and the expiry of idle keys are not the
// textbook bucket: every export but the nginx-limit-req gate's own offers
// that gate at the deployed setting as its rerun.
func nginxFormat() *Format {
	return &Format{
		Name:    "nginx",
		Label:   "nginx limit_req",
		Ext:     "conf",
		File:    "ratelab-limit-req.conf",
		Doc:     "limit_req_zone in the http block, limit_req in the http, server or location block to limit",
		Comment: "# ",
		From: append([]From{{Type: limiter.TypeNginxLimitReq, export: nginxFromNginx},
			{Type: limiter.TypeDualTokenBucket, export: nginxFromDual}},
			bucketFrom(nginxFromBucket, limiter.TypeNginxLimitReq)...),
	}
}

// nginxZone names the zone the export declares; a dual token bucket's
// peak bucket is the zone nginxPeakZone.
const (
	nginxZone     = "ratelab"
	nginxPeakZone = "ratelab_peak"
)

// nginxSetting is one limit_req_zone and limit_req.
type nginxSetting struct {
	rate      float64 // requests/s as the point gives it
	burst     int64
	delay     int64
	nodelay   bool
	perClient bool
}

// nginxRate writes rate for rate=: whole r/s when it is whole, else the
// nearest whole r/m (at least 1r/m); deployed is that rate in requests/s.
func nginxRate(rate float64) (text string, deployed float64) {
	if n, ok := whole(rate); ok && n >= 1 {
		return fmt.Sprintf("%dr/s", n), float64(n)
	}
	m := max(int64(math.Round(rate*60)), 1)
	return fmt.Sprintf("%dr/m", m), float64(m) / 60
}

// export writes the two directives, the notes on the rate and the rerun:
// the nginx-limit-req gate at the deployed setting.
func (s nginxSetting) export() *Export {
	text, deployed := nginxRate(s.rate)
	key := nginxZone
	if s.perClient {
		key = "$binary_remote_addr"
	}
	var b strings.Builder
	b.WriteString("# In the http {} block:\n")
	fmt.Fprintf(&b, "limit_req_zone %s zone=%s:10m rate=%s;\n", key, nginxZone, text)
	b.WriteString("# In the http {}, server {} or location {} block to limit:\n")
	fmt.Fprintf(&b, "limit_req zone=%s", nginxZone)
	if s.burst > 0 {
		fmt.Fprintf(&b, " burst=%d", s.burst)
	}
	switch {
	case s.nodelay:
		b.WriteString(" nodelay")
	case s.delay > 0:
		fmt.Fprintf(&b, " delay=%d", s.delay)
	}
	b.WriteString(";\n")

	e := &Export{Text: b.String()}
	if deployed != s.rate {
		e.Notes = append(e.Notes, fmt.Sprintf("nginx takes whole requests per second or per minute: %s requests/s is written rate=%s (%s requests/s).",
			num(s.rate), text, num(deployed)))
	}
	if held := float64(thousandths(deployed)) / 1000; held != deployed {
		e.Notes = append(e.Notes, fmt.Sprintf("nginx holds the rate in whole thousandths of a request per second, truncated: rate=%s runs at %s requests/s.",
			text, num(held)))
	}
	if s.perClient {
		e.Notes = append(e.Notes, "The key $binary_remote_addr keeps one state per client address, each with the whole rate and burst.")
	} else {
		e.Notes = append(e.Notes, fmt.Sprintf("The key is the constant %q: one state for every request, as the point has.", nginxZone))
	}
	nodelay, key := "off", "zone"
	if s.nodelay {
		nodelay = "on"
	}
	if s.perClient {
		key = "client"
	}
	e.Rerun = spec(limiter.TypeNginxLimitReq,
		limiter.Params{limiter.ParamRate: deployed, limiter.ParamBurst: float64(s.burst), limiter.ParamNginxDelay: float64(s.delay)},
		map[string]string{limiter.OptionNodelay: nodelay, limiter.OptionNginxKey: key})
	return e
}

// nginxFromNginx writes the nginx-limit-req gate's own setting.
func nginxFromNginx(pt *reading) (*Export, error) {
	s := nginxSetting{
		rate:      pt.param(limiter.ParamRate),
		burst:     int64(pt.param(limiter.ParamBurst)),
		delay:     int64(pt.param(limiter.ParamNginxDelay)),
		nodelay:   pt.option(limiter.OptionNodelay) == "on",
		perClient: pt.option(limiter.OptionNginxKey) == "client",
	}
	e := s.export()
	if s.nodelay {
		// delay= is ignored with nodelay: the rerun keeps the point's.
		e.Rerun.SetValues(limiter.ParamNginxDelay, limiter.Values{pt.param(limiter.ParamNginxDelay)})
	}
	return e, nil
}

// nginxFromBucket writes a bucket (see nginxFormat).
func nginxFromBucket(b bucket) (*Export, error) {
	s := nginxSetting{rate: b.rate, burst: b.burst - 1 + b.queue, perClient: b.perClient}
	if b.policer() {
		s.nodelay = true
	} else {
		s.delay = b.burst - 1
	}
	e := s.export()
	if b.policer() {
		e.Notes = append(e.Notes, fmt.Sprintf(
			"nginx counts the excess beyond a key's first request: burst=%d nodelay lets %s through back to back and answers 503 past them.",
			s.burst, count(b.burst, "request")))
	} else {
		delay := ""
		if s.delay > 0 {
			delay = fmt.Sprintf("with delay=%d, ", s.delay)
		}
		e.Notes = append(e.Notes, fmt.Sprintf(
			"nginx counts the excess beyond a key's first request: %s%s through at once and the next %d wait their turn, paced at the rate; past them nginx answers 503.",
			delay, count(b.burst, "request goes"), b.queue))
	}
	e.Notes = append(e.Notes, "nginx reads a whole-millisecond clock, counts the excess in thousandths and drops keys idle for 60 s: rerun with the nginx-limit-req gate to see what the deployed setting does.")
	return e, nil
}

// nginxFromDual writes a dual token bucket as two limit_req zones, each
// with nodelay: the sustained bucket (rate, burst) in zone ratelab, the
// peak bucket (peak_rps, peak_burst) in zone ratelab_peak, both under the
// same constant key.
//
// Several limit_req directives in one block. ngx_http_limit_req_handler
// (src/http/modules/ngx_http_limit_req_module.c) looks the request up in
// each zone in order: every zone but the last only computes the key's
// excess (ngx_http_limit_req_lookup with account 0: it holds the node and
// changes neither its excess nor its time); the first zone whose excess
// would pass its burst stops the loop, the zones looked up before it only
// drop their hold, and the request is refused (503). Only when every zone
// passes does the last one store its excess (account 1) and
// ngx_http_limit_req_account store the excess of the others. So a request
// is charged to both zones or to neither: the dual token bucket's "a
// token from each, or none". With nodelay in both, none waits.
func nginxFromDual(pt *reading) (*Export, error) {
	zones := []struct {
		name  string
		rate  float64
		burst int64
	}{
		{nginxZone, pt.param(limiter.ParamRate), int64(pt.param(limiter.ParamBurst))},
		{nginxPeakZone, pt.param(limiter.ParamPeakRate), int64(pt.param(limiter.ParamPeakBurst))},
	}
	var b strings.Builder
	var notes []string
	b.WriteString("# In the http {} block:\n")
	for _, z := range zones {
		text, deployed := nginxRate(z.rate)
		fmt.Fprintf(&b, "limit_req_zone %s zone=%s:10m rate=%s;\n", nginxZone, z.name, text)
		if deployed != z.rate {
			notes = append(notes, fmt.Sprintf("nginx takes whole requests per second or per minute: %s requests/s (zone %s) is written rate=%s (%s requests/s).",
				num(z.rate), z.name, text, num(deployed)))
		}
		if held := float64(thousandths(deployed)) / 1000; held != deployed {
			notes = append(notes, fmt.Sprintf("nginx holds the rate in whole thousandths of a request per second, truncated: rate=%s (zone %s) runs at %s requests/s.",
				text, z.name, num(held)))
		}
	}
	b.WriteString("# Both in the same http {}, server {} or location {} block to limit:\n")
	for _, z := range zones {
		fmt.Fprintf(&b, "limit_req zone=%s", z.name)
		if z.burst > 1 {
			fmt.Fprintf(&b, " burst=%d", z.burst-1)
		}
		b.WriteString(" nodelay;\n")
	}
	notes = append(notes,
		fmt.Sprintf("Zone %s is the sustained bucket (%s back to back) and zone %s the peak bucket (%s back to back): nginx counts the excess beyond a key's first request, so burst=N nodelay is a bucket of N+1.",
			nginxZone, count(zones[0].burst, "request"), nginxPeakZone, count(zones[1].burst, "request")),
		"With several limit_req in one block nginx checks every zone before it charges any: a request refused by one zone is charged to none, and a request that passes is charged to both (ngx_http_limit_req_module.c: the lookup of every zone but the last stores nothing; the excess is stored only once all pass). That is the dual token bucket's a token from each, or none.",
		fmt.Sprintf("The key is the constant %q in both zones: one state for every request, as the point has.", nginxZone),
		"nginx reads a whole-millisecond clock, counts the excess in thousandths and drops keys idle for 60 s; the lab has no gate of two nginx zones to rerun (a chain of two nginx-limit-req gates would charge the first zone for requests the second refuses, which nginx does not).")
	return &Export{Text: b.String(), Notes: notes}, nil
}
