package deploy_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// pt builds a point of typ with options (the rest at their defaults).
func pt(typ limiter.Type, p limiter.Params, options ...string) *deploy.Point {
	s := &limiter.Spec{Type: typ}
	for i := 0; i+1 < len(options); i += 2 {
		s.SetOption(options[i], options[i+1])
	}
	for name, v := range p {
		s.SetValues(name, limiter.Values{v})
	}
	s.Normalize()
	for name, vs := range s.Params {
		if _, ok := p[name]; !ok {
			p[name] = vs[0] // a default
		}
	}
	return &deploy.Point{Spec: s, Params: p}
}

// samplePoints are points of every type a format expresses, at settings
// that round and at settings that do not: the validation tests deploy
// every one in every format that takes it.
func samplePoints() []*deploy.Point {
	return []*deploy.Point{
		pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 100, "burst": 20}),
		pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 33.33, "burst": 5}),
		pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 0.5, "burst": 1}),
		pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 1234.567891, "burst": 1000}),
		pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 0.001, "burst": 3}),
		pt(limiter.TypeGCRA, limiter.Params{"rate_rps": 250, "burst": 10}),
		pt(limiter.TypeLeakyBucket, limiter.Params{"rate_rps": 50, "queue": 10}),
		pt(limiter.TypeLeakyBucket, limiter.Params{"rate_rps": 7, "queue": 1}),
		pt(limiter.TypeXTimeRate, limiter.Params{"rate_rps": 100, "burst": 20, "max_wait_ms": 0}),
		pt(limiter.TypeXTimeRate, limiter.Params{"rate_rps": 100, "burst": 20, "max_wait_ms": 5}, "mode", "reserve"),
		pt(limiter.TypeXTimeRate, limiter.Params{"rate_rps": 2.5, "burst": 3, "max_wait_ms": 1000}, "mode", "reserve"),
		pt(limiter.TypeXTimeRate, limiter.Params{"rate_rps": 0, "burst": 5, "max_wait_ms": 0}),
		pt(limiter.TypeRedisRate, limiter.Params{"limit": 100, "period_ms": 1000, "burst": 100}),
		pt(limiter.TypeRedisRate, limiter.Params{"limit": 10, "period_ms": 60000, "burst": 2}),
		pt(limiter.TypeUberRateLimit, limiter.Params{"limit": 100, "period_ms": 1000, "slack": 10}),
		pt(limiter.TypeUberRateLimit, limiter.Params{"limit": 3, "period_ms": 1500, "slack": 0}),
		pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 5, "burst": 4, "delay": 0}),
		pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 5, "burst": 4, "delay": 2}),
		pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 2.5, "burst": 0, "delay": 0}, "nodelay", "on"),
		pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 0.02, "burst": 10, "delay": 0}, "nodelay", "on", "key", "client"),
		pt(limiter.TypeEnvoyLocalRateLimit, limiter.Params{"max_tokens": 100, "tokens_per_fill": 10, "fill_interval_ms": 100}),
		pt(limiter.TypeEnvoyLocalRateLimit, limiter.Params{"max_tokens": 5, "tokens_per_fill": 1, "fill_interval_ms": 50}, "token_bucket", "atomic"),
		pt(limiter.TypeEnvoyLocalRateLimit, limiter.Params{"max_tokens": 5, "tokens_per_fill": 1, "fill_interval_ms": 50}, "descriptor", "client"),
		pt(limiter.TypeGuavaSmoothBursty, limiter.Params{"rate_rps": 100, "max_burst_ms": 1000, "timeout_ms": 100}),
		pt(limiter.TypeGuavaSmoothBursty, limiter.Params{"rate_rps": 0.5, "max_burst_ms": 500, "timeout_ms": 0}),
		pt(limiter.TypeGuavaSmoothWarmingUp, limiter.Params{"rate_rps": 100, "warmup_ms": 1000, "timeout_ms": 100}),
		pt(limiter.TypeResilience4j, limiter.Params{"limit_for_period": 10, "limit_refresh_period_ms": 100, "timeout_ms": 100}),
		pt(limiter.TypeResilience4j, limiter.Params{"limit_for_period": 50, "limit_refresh_period_ms": 0.0005, "timeout_ms": 5000}),
		pt(limiter.TypeFixedWindow, limiter.Params{"limit": 100, "window_ms": 1000}),
		pt(limiter.TypeFixedWindow, limiter.Params{"limit": 3, "window_ms": 10.5}),
		pt(limiter.TypeSlidingLog, limiter.Params{"limit": 100, "window_ms": 1000}),
		pt(limiter.TypeDualTokenBucket, limiter.Params{"rate_rps": 100, "burst": 100, "peak_rps": 200, "peak_burst": 1}),
		pt(limiter.TypePerClient, limiter.Params{"rate_rps": 100, "burst": 100}),
		named(hostileName, pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 100, "burst": 20})),
		named(hostileName, pt(limiter.TypeUberRateLimit, limiter.Params{"limit": 100, "period_ms": 1000, "slack": 10})),
		named(hostileName, pt(limiter.TypeGuavaSmoothBursty, limiter.Params{"rate_rps": 100, "max_burst_ms": 1000, "timeout_ms": 100})),
		named(hostileName, pt(limiter.TypeResilience4j, limiter.Params{"limit_for_period": 10, "limit_refresh_period_ms": 100, "timeout_ms": 100})),
	}
}

// hostileName is a limiter name as a config stored before names had to be
// one line of printable text could hold it: line breaks of every kind
// (CR, LF, NEL, U+2028), a NUL, and Java's \u000a escape (printable text,
// which javac would turn into a line break before it looks for comments),
// each followed by a line no format parses. A sample point of every
// format carries it, so each format's own check (nginx -t, the Envoy
// proto decoder, go build and vet, javac, strict YAML) parses the result:
// printed raw, the rest of the name would be a live directive.
const hostileName = "tb\ninjected directive;\r\ninjected directive;\x00\u0085\u2028 \\u000a injected directive; */ } server { listen 80; }"

// named is the point with its limiter named.
func named(name string, p *deploy.Point) *deploy.Point {
	p.Spec.Name = name
	return p
}

// TestHostileNamesStayInComments: a name adds no line to any export, and
// no control character; the header line carries it escaped.
func TestHostileNamesStayInComments(t *testing.T) {
	plain := pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 100, "burst": 20})
	hostile := named(hostileName, pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 100, "burst": 20}))
	n := 0
	for _, f := range deploy.Formats() {
		want, err := f.Export(plain)
		if err != nil {
			continue
		}
		got, err := f.Export(hostile)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		n++
		if a, b := strings.Count(want.Text, "\n"), strings.Count(got.Text, "\n"); a != b {
			t.Errorf("%s: the name added %d lines:\n%s", f.Name, b-a, got.Text)
		}
		for i, r := range got.Text {
			if r != '\n' && r != '\t' && !unicode.IsPrint(r) {
				t.Errorf("%s: %U at byte %d", f.Name, r, i)
			}
		}
		if strings.Contains(got.Text, `\u000a`) && !strings.Contains(got.Text, `\\u000a`) {
			t.Errorf("%s: a Java unicode escape left live:\n%s", f.Name, got.Text)
		}
		header, _, _ := strings.Cut(got.Text, "\n")
		if !strings.Contains(header, "tb[U+000A]injected directive;[U+000D][U+000A]") {
			t.Errorf("%s: header %q", f.Name, header)
		}
	}
	if n < 5 {
		t.Fatalf("only %d formats export a token bucket", n)
	}
}

// exports deploys every sample point in the format, failing on anything
// but success or *NotExpressible.
func exports(t *testing.T, format string) []*deploy.Export {
	t.Helper()
	var out []*deploy.Export
	for _, p := range samplePoints() {
		e, err := deploy.Render(format, p)
		var ne *deploy.NotExpressible
		switch {
		case errors.As(err, &ne):
			continue
		case err != nil:
			t.Fatalf("%s %v: %v", p.Spec.Type, p.Params, err)
		}
		out = append(out, e)
	}
	if len(out) < 3 {
		t.Fatalf("%s: only %d sample points deploy", format, len(out))
	}
	return out
}

// TestExportLeavesThePointAlone: a spec without its options set is
// exported with the defaults, and stays without them.
func TestExportLeavesThePointAlone(t *testing.T) {
	t.Parallel()
	s := &limiter.Spec{Type: limiter.TypeNginxLimitReq}
	p := limiter.Params{"rate_rps": 5, "burst": 4, "delay": 0}
	for name, v := range p {
		s.SetValues(name, limiter.Values{v})
	}
	e, err := deploy.Render("nginx", &deploy.Point{Spec: s, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.Text, "limit_req zone=ratelab burst=4;") || len(s.Options) != 0 {
		t.Errorf("text %q, options left %v", e.Text, s.Options)
	}
}

func TestFormatsTable(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	for _, f := range deploy.Formats() {
		if names[f.Name] {
			t.Errorf("format %q twice", f.Name)
		}
		names[f.Name] = true
		if f.Label == "" || f.Ext == "" || f.File == "" || f.Doc == "" || f.Comment == "" {
			t.Errorf("format %q: a field is empty: %+v", f.Name, f)
		}
		if !strings.HasSuffix(f.File, "."+f.Ext) {
			t.Errorf("format %q: file %q does not end in .%s", f.Name, f.File, f.Ext)
		}
		seen := map[limiter.Type]bool{}
		for _, from := range f.From {
			if _, ok := limiter.Lookup(from.Type); !ok {
				t.Errorf("format %q expresses unregistered type %q", f.Name, from.Type)
			}
			if seen[from.Type] {
				t.Errorf("format %q lists %q twice", f.Name, from.Type)
			}
			seen[from.Type] = true
		}
		if g, ok := deploy.Lookup(f.Name); !ok || g.Name != f.Name {
			t.Errorf("Lookup(%q) = %v, %v", f.Name, g, ok)
		}
	}
	if _, err := deploy.Render("yaml", samplePoints()[0]); !errors.Is(err, deploy.ErrUnknownFormat) {
		t.Errorf("unknown format: %v", err)
	}
}

// TestMapping is the mapping table: each case a point, a format, what the
// text must say and the rerun (or none, or no export).
func TestMapping(t *testing.T) {
	t.Parallel()
	type rerun struct {
		typ     limiter.Type
		params  limiter.Params
		options map[string]string
	}
	cases := []struct {
		name   string
		point  *deploy.Point
		format string
		text   []string // substrings of the text
		notes  []string // substrings of some note
		rerun  *rerun   // nil: none expected
		exact  bool
		cannot string // substring of the NotExpressible reason
	}{
		{name: "token bucket as nginx: burst b-1 nodelay",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 100, "burst": 20}), format: "nginx",
			text:  []string{"limit_req_zone ratelab zone=ratelab:10m rate=100r/s;", "limit_req zone=ratelab burst=19 nodelay;"},
			notes: []string{"burst=19 nodelay lets 20 requests"},
			rerun: &rerun{limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 100, "burst": 19, "delay": 0}, map[string]string{"nodelay": "on", "key": "zone"}}},
		{name: "nginx rounds to whole requests per minute",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 33.33, "burst": 5}), format: "nginx",
			text:  []string{"rate=2000r/m;", "burst=4 nodelay;"},
			notes: []string{"33.33 requests/s is written rate=2000r/m", "runs at 33.333 requests/s"},
			rerun: &rerun{limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 2000.0 / 60, "burst": 4, "delay": 0}, map[string]string{"nodelay": "on", "key": "zone"}}},
		{name: "token bucket of 1 as nginx: no burst=0",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 0.5, "burst": 1}), format: "nginx",
			text:  []string{"rate=30r/m;", "limit_req zone=ratelab nodelay;"},
			rerun: &rerun{limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 0.5, "burst": 0, "delay": 0}, map[string]string{"nodelay": "on", "key": "zone"}}},
		{name: "leaky bucket as nginx: burst queue-1, no nodelay",
			point: pt(limiter.TypeLeakyBucket, limiter.Params{"rate_rps": 50, "queue": 10}), format: "nginx",
			text:  []string{"rate=50r/s;", "limit_req zone=ratelab burst=9;"},
			rerun: &rerun{limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 50, "burst": 9, "delay": 0}, map[string]string{"nodelay": "off", "key": "zone"}}},
		{name: "x/time/rate reserve as nginx: delay",
			point: pt(limiter.TypeXTimeRate, limiter.Params{"rate_rps": 2.5, "burst": 3, "max_wait_ms": 1000}, "mode", "reserve"), format: "nginx",
			text:  []string{"rate=150r/m;", "burst=4 delay=2;"},
			rerun: &rerun{limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 2.5, "burst": 4, "delay": 2}, map[string]string{"nodelay": "off", "key": "zone"}}},
		{name: "nginx gate as nginx is exact",
			point: pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 5, "burst": 4, "delay": 2}), format: "nginx",
			text: []string{"rate=5r/s;", "limit_req zone=ratelab burst=4 delay=2;"}, exact: true},
		{name: "nginx gate per client",
			point: pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 2.5, "burst": 0, "delay": 0}, "nodelay", "on", "key", "client"), format: "nginx",
			text: []string{"limit_req_zone $binary_remote_addr zone=ratelab:10m rate=150r/m;", "limit_req zone=ratelab nodelay;"}, exact: true},
		{name: "nginx gate below 1r/m is rounded up",
			point: pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 0.02, "burst": 10, "delay": 0}, "nodelay", "on"), format: "nginx",
			text:  []string{"rate=1r/m;"},
			notes: []string{"0.02 requests/s is written rate=1r/m", "runs at 0.016 requests/s"},
			rerun: &rerun{limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 1.0 / 60, "burst": 10, "delay": 0}, map[string]string{"nodelay": "on", "key": "zone"}}},
		{name: "dual token bucket as nginx: two zones, both nodelay",
			point: pt(limiter.TypeDualTokenBucket, limiter.Params{"rate_rps": 100, "burst": 100, "peak_rps": 200, "peak_burst": 1}), format: "nginx",
			text: []string{"limit_req_zone ratelab zone=ratelab:10m rate=100r/s;", "limit_req_zone ratelab zone=ratelab_peak:10m rate=200r/s;",
				"limit_req zone=ratelab burst=99 nodelay;\nlimit_req zone=ratelab_peak nodelay;\n"},
			notes: []string{"charged to none", "100 requests back to back", "1 request back to back", "no gate of two nginx zones"}},
		{name: "dual token bucket as nginx: rates rounded per zone",
			point: pt(limiter.TypeDualTokenBucket, limiter.Params{"rate_rps": 0.5, "burst": 3, "peak_rps": 33.33, "peak_burst": 2}), format: "nginx",
			text:  []string{"zone=ratelab:10m rate=30r/m;", "zone=ratelab_peak:10m rate=2000r/m;", "limit_req zone=ratelab burst=2 nodelay;", "limit_req zone=ratelab_peak burst=1 nodelay;"},
			notes: []string{"33.33 requests/s (zone ratelab_peak) is written rate=2000r/m"}},
		{name: "dual token bucket is no Envoy setting",
			point: pt(limiter.TypeDualTokenBucket, limiter.Params{"rate_rps": 100, "burst": 100, "peak_rps": 200, "peak_burst": 1}), format: "envoy", cannot: "expresses"},
		{name: "fixed window of limit 0 is no Envoy setting",
			point: pt(limiter.TypeFixedWindow, limiter.Params{"limit": 0, "window_ms": 1000}), format: "envoy", cannot: "a limit of 0 refuses every request, and Envoy's max_tokens must be at least 1"},
		{name: "fixed window of limit 0 is no Resilience4j setting",
			point: pt(limiter.TypeFixedWindow, limiter.Params{"limit": 0, "window_ms": 1000}), format: "resilience4j", cannot: "a limit of 0 refuses every request, and Resilience4j's limitForPeriod must be at least 1"},
		{name: "fixed window is no nginx setting",
			point: pt(limiter.TypeFixedWindow, limiter.Params{"limit": 100, "window_ms": 1000}), format: "nginx", cannot: "nginx limit_req expresses"},

		{name: "token bucket as Envoy: smallest whole fill of at least 50 ms",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 100, "burst": 20}), format: "envoy",
			text:  []string{"max_tokens: 20", "tokens_per_fill: 5", "fill_interval: 0.05s", "numerator: 100", "denominator: HUNDRED"},
			rerun: &rerun{limiter.TypeEnvoyLocalRateLimit, limiter.Params{"max_tokens": 20, "tokens_per_fill": 5, "fill_interval_ms": 50}, map[string]string{"descriptor": "none", "token_bucket": "atomic"}}},
		{name: "Envoy: a rate that needs a long fill is rounded within 1 s",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 33.33, "burst": 5}), format: "envoy",
			text:  []string{"tokens_per_fill: 2", "fill_interval: 0.06s"},
			notes: []string{"33.33 requests/s is written 2 tokens every 60 ms"},
			rerun: &rerun{limiter.TypeEnvoyLocalRateLimit, limiter.Params{"max_tokens": 5, "tokens_per_fill": 2, "fill_interval_ms": 60}, map[string]string{"descriptor": "none", "token_bucket": "atomic"}}},
		{name: "Envoy: slow rate, one token per fill",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 0.5, "burst": 1}), format: "envoy",
			text:  []string{"tokens_per_fill: 1", "fill_interval: 2s"},
			rerun: &rerun{limiter.TypeEnvoyLocalRateLimit, limiter.Params{"max_tokens": 1, "tokens_per_fill": 1, "fill_interval_ms": 2000}, map[string]string{"descriptor": "none", "token_bucket": "atomic"}}},
		{name: "Envoy gate, timer bucket: rerun with current Envoy's",
			point: pt(limiter.TypeEnvoyLocalRateLimit, limiter.Params{"max_tokens": 100, "tokens_per_fill": 10, "fill_interval_ms": 100}), format: "envoy",
			text:  []string{"max_tokens: 100", "tokens_per_fill: 10", "fill_interval: 0.1s"},
			notes: []string{"such an Envoy runs it exactly"},
			rerun: &rerun{limiter.TypeEnvoyLocalRateLimit, limiter.Params{"max_tokens": 100, "tokens_per_fill": 10, "fill_interval_ms": 100}, map[string]string{"descriptor": "none", "token_bucket": "atomic"}}},
		{name: "Envoy gate, atomic bucket: exact",
			point: pt(limiter.TypeEnvoyLocalRateLimit, limiter.Params{"max_tokens": 5, "tokens_per_fill": 1, "fill_interval_ms": 50}, "token_bucket", "atomic"), format: "envoy",
			text: []string{"fill_interval: 0.05s"}, exact: true},
		{name: "Envoy per client is not written",
			point: pt(limiter.TypeEnvoyLocalRateLimit, limiter.Params{"max_tokens": 5, "tokens_per_fill": 1, "fill_interval_ms": 50}, "descriptor", "client"), format: "envoy",
			cannot: "wildcard descriptors"},
		{name: "Envoy never delays: no leaky bucket",
			point: pt(limiter.TypeLeakyBucket, limiter.Params{"rate_rps": 50, "queue": 10}), format: "envoy", cannot: "never delays"},
		{name: "fixed window as Envoy: the window is the fill; under 50 ms rounded up",
			point: pt(limiter.TypeFixedWindow, limiter.Params{"limit": 3, "window_ms": 10.5}), format: "envoy",
			text:  []string{"max_tokens: 3", "tokens_per_fill: 3", "fill_interval: 0.05s"},
			notes: []string{"the window of 10.5 ms is written 50 ms", "the fixed window"},
			rerun: &rerun{limiter.TypeEnvoyLocalRateLimit, limiter.Params{"max_tokens": 3, "tokens_per_fill": 3, "fill_interval_ms": 50}, map[string]string{"descriptor": "none", "token_bucket": "atomic"}}},

		{name: "token bucket as x/time/rate: NewLimiter(r, b) and Allow",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 100, "burst": 20}), format: "go-x-time-rate",
			text:  []string{"rate.NewLimiter(rate.Limit(100), 20)", "lim.Allow()"},
			rerun: &rerun{limiter.TypeXTimeRate, limiter.Params{"rate_rps": 100, "burst": 20, "max_wait_ms": 0}, map[string]string{"mode": "allow"}}},
		{name: "leaky bucket as x/time/rate: burst 1, waits (queue-1)/rate",
			point: pt(limiter.TypeLeakyBucket, limiter.Params{"rate_rps": 50, "queue": 10}), format: "go-x-time-rate",
			text:  []string{"rate.NewLimiter(rate.Limit(50), 1)", "const MaxWait = 180 * time.Millisecond", "r.Cancel()"},
			rerun: &rerun{limiter.TypeXTimeRate, limiter.Params{"rate_rps": 50, "burst": 1, "max_wait_ms": 180}, map[string]string{"mode": "reserve"}}},
		{name: "x/time/rate gate: exact",
			point: pt(limiter.TypeXTimeRate, limiter.Params{"rate_rps": 0, "burst": 5, "max_wait_ms": 0}), format: "go-x-time-rate",
			text: []string{"rate.NewLimiter(rate.Limit(0), 5)"}, exact: true},
		{name: "nginx burst without nodelay as x/time/rate: a bucket of 1 and a queue of burst",
			point: pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 10, "burst": 10, "delay": 0}), format: "go-x-time-rate",
			text:  []string{"rate.NewLimiter(rate.Limit(10), 1)"},
			notes: []string{"burst=10 without nodelay or delay is read as a bucket of 1 (passing at once) and 10 more requests that wait their turn"},
			rerun: &rerun{limiter.TypeXTimeRate, limiter.Params{"rate_rps": 10, "burst": 1, "max_wait_ms": 1000}, map[string]string{"mode": "reserve"}}},
		{name: "nginx burst with delay as x/time/rate: a bucket of delay+1",
			point: pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 5, "burst": 4, "delay": 2}), format: "go-x-time-rate",
			text:  []string{"rate.NewLimiter(rate.Limit(5), 3)"},
			notes: []string{"burst=4 delay=2 is read as a bucket of 3 (passing at once) and 2 more requests that wait their turn"},
			rerun: &rerun{limiter.TypeXTimeRate, limiter.Params{"rate_rps": 5, "burst": 3, "max_wait_ms": 400}, map[string]string{"mode": "reserve"}}},
		{name: "nginx burst with delay one short of burst: 1 more request",
			point: pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 5, "burst": 4, "delay": 3}), format: "go-x-time-rate",
			notes: []string{"burst=4 delay=3 is read as a bucket of 4 (passing at once) and 1 more request that waits its turn"},
			rerun: &rerun{limiter.TypeXTimeRate, limiter.Params{"rate_rps": 5, "burst": 4, "max_wait_ms": 200}, map[string]string{"mode": "reserve"}}},
		{name: "nginx burst with delay at burst: all at once",
			point: pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 5, "burst": 4, "delay": 4}), format: "go-x-time-rate",
			text:  []string{"rate.NewLimiter(rate.Limit(5), 5)"},
			notes: []string{"burst=4 delay=4 is read as a bucket of 5: all pass at once"},
			rerun: &rerun{limiter.TypeXTimeRate, limiter.Params{"rate_rps": 5, "burst": 5, "max_wait_ms": 0}, map[string]string{"mode": "allow"}}},
		{name: "nginx burst nodelay as x/time/rate: a bucket of burst+1",
			point: pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 10, "burst": 10, "delay": 0}, "nodelay", "on"), format: "go-x-time-rate",
			text:  []string{"rate.NewLimiter(rate.Limit(10), 11)"},
			notes: []string{"burst=10 nodelay is read as a bucket of 11: all pass at once"},
			rerun: &rerun{limiter.TypeXTimeRate, limiter.Params{"rate_rps": 10, "burst": 11, "max_wait_ms": 0}, map[string]string{"mode": "allow"}}},
		{name: "per-client nginx point has no Go limiter",
			point: pt(limiter.TypeNginxLimitReq, limiter.Params{"rate_rps": 5, "burst": 4, "delay": 0}, "nodelay", "on", "key", "client"), format: "go-x-time-rate",
			cannot: "one bucket per client"},

		{name: "token bucket as redis_rate",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 0.5, "burst": 1}), format: "go-redis-rate",
			text:  []string{"redis_rate.Limit{Rate: 30, Burst: 1, Period: time.Minute}"},
			rerun: &rerun{limiter.TypeRedisRate, limiter.Params{"limit": 30, "burst": 1, "period_ms": 60000}, nil}},
		{name: "redis_rate gate: exact",
			point: pt(limiter.TypeRedisRate, limiter.Params{"limit": 10, "period_ms": 60000, "burst": 2}), format: "go-redis-rate",
			text: []string{"redis_rate.Limit{Rate: 10, Burst: 2, Period: time.Minute}"}, exact: true},
		{name: "x/time/rate burst 0 has no bucket",
			point: pt(limiter.TypeXTimeRate, limiter.Params{"rate_rps": 10, "burst": 0, "max_wait_ms": 0}), format: "go-redis-rate", cannot: "burst 0"},

		{name: "leaky bucket as go.uber.org/ratelimit: no slack, no queue",
			point: pt(limiter.TypeLeakyBucket, limiter.Params{"rate_rps": 50, "queue": 10}), format: "go-uber-ratelimit",
			text:  []string{"ratelimit.New(50, ratelimit.Per(time.Second), ratelimit.WithoutSlack)", "lim.Take()"},
			notes: []string{"Take never refuses"},
			rerun: &rerun{limiter.TypeUberRateLimit, limiter.Params{"limit": 50, "period_ms": 1000, "slack": 0}, nil}},
		{name: "uber gate: exact",
			point: pt(limiter.TypeUberRateLimit, limiter.Params{"limit": 3, "period_ms": 1500, "slack": 0}), format: "go-uber-ratelimit",
			text: []string{"ratelimit.New(3, ratelimit.Per(1500*time.Millisecond), ratelimit.WithoutSlack)"}, exact: true},
		{name: "a policer never takes Take",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 100, "burst": 20}), format: "go-uber-ratelimit", cannot: "expresses uber-ratelimit, leaky-bucket"},

		{name: "token bucket as Guava: burst fixed at a second",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 100, "burst": 20}), format: "guava",
			text:  []string{"RateLimiter.create(100.0)", "tryAcquire(1, 0L, TimeUnit.MICROSECONDS)"},
			notes: []string{"fixes the burst at one second", "starts with no stored permits"},
			rerun: &rerun{limiter.TypeGuavaSmoothBursty, limiter.Params{"rate_rps": 100, "max_burst_ms": 1000, "timeout_ms": 0}, nil}},
		{name: "Guava bursty gate, 1 s: exact",
			point: pt(limiter.TypeGuavaSmoothBursty, limiter.Params{"rate_rps": 100, "max_burst_ms": 1000, "timeout_ms": 100}), format: "guava",
			text: []string{"RateLimiter.create(100.0)", "tryAcquire(1, 100000L, TimeUnit.MICROSECONDS)"}, exact: true},
		{name: "Guava bursty gate, other max burst: one second",
			point: pt(limiter.TypeGuavaSmoothBursty, limiter.Params{"rate_rps": 0.5, "max_burst_ms": 500, "timeout_ms": 0}), format: "guava",
			text:  []string{"RateLimiter.create(0.5)"},
			notes: []string{"no maxBurstSeconds"},
			rerun: &rerun{limiter.TypeGuavaSmoothBursty, limiter.Params{"rate_rps": 0.5, "max_burst_ms": 1000, "timeout_ms": 0}, nil}},
		{name: "Guava warming up gate: exact",
			point: pt(limiter.TypeGuavaSmoothWarmingUp, limiter.Params{"rate_rps": 100, "warmup_ms": 1000, "timeout_ms": 100}), format: "guava",
			text: []string{"RateLimiter.create(100.0, 1000000L, TimeUnit.MICROSECONDS)"}, exact: true},

		{name: "token bucket as Resilience4j: b permissions every b/r",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 100, "burst": 20}), format: "resilience4j",
			text:  []string{"limitForPeriod: 20", "limitRefreshPeriod: 200ms", "timeoutDuration: 0s"},
			notes: []string{"up to 40 requests can pass around a cycle boundary"},
			rerun: &rerun{limiter.TypeResilience4j, limiter.Params{"limit_for_period": 20, "limit_refresh_period_ms": 200, "timeout_ms": 0}, nil}},
		{name: "fixed window as Resilience4j",
			point: pt(limiter.TypeFixedWindow, limiter.Params{"limit": 100, "window_ms": 1000}), format: "resilience4j",
			text:  []string{"limitForPeriod: 100", "limitRefreshPeriod: 1s", "timeoutDuration: 0s"},
			rerun: &rerun{limiter.TypeResilience4j, limiter.Params{"limit_for_period": 100, "limit_refresh_period_ms": 1000, "timeout_ms": 0}, nil}},
		{name: "Resilience4j gate at its defaults: exact, in ns",
			point: pt(limiter.TypeResilience4j, limiter.Params{"limit_for_period": 50, "limit_refresh_period_ms": 0.0005, "timeout_ms": 5000}), format: "resilience4j",
			text: []string{"limitForPeriod: 50", "limitRefreshPeriod: 500ns", "timeoutDuration: 5s"}, exact: true},
		{name: "sliding log is no Resilience4j setting",
			point: pt(limiter.TypeSlidingLog, limiter.Params{"limit": 100, "window_ms": 1000}), format: "resilience4j", cannot: "expresses"},

		{name: "token bucket as Traefik: x/time/rate waiting up to maxDelay",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 100, "burst": 20}), format: "traefik",
			text:  []string{"average: 100", "period: 1s", "burst: 20", "requestHost: true"},
			notes: []string{"maxDelay = 1/(2 × whole rate) = 5 ms"},
			rerun: &rerun{limiter.TypeXTimeRate, limiter.Params{"rate_rps": 100, "burst": 20, "max_wait_ms": 5}, map[string]string{"mode": "reserve"}}},
		{name: "Traefik below 1/s: maxDelay 500 ms",
			point: pt(limiter.TypeTokenBucket, limiter.Params{"rate_rps": 0.5, "burst": 1}), format: "traefik",
			text:  []string{"average: 30", "period: 1m", "burst: 1"},
			rerun: &rerun{limiter.TypeXTimeRate, limiter.Params{"rate_rps": 0.5, "burst": 1, "max_wait_ms": 500}, map[string]string{"mode": "reserve"}}},
		{name: "Traefik: maxDelay from the whole rate",
			point: pt(limiter.TypeXTimeRate, limiter.Params{"rate_rps": 2.5, "burst": 3, "max_wait_ms": 1000}, "mode", "reserve"), format: "traefik",
			text:  []string{"average: 150", "period: 1m", "burst: 3"},
			rerun: &rerun{limiter.TypeXTimeRate, limiter.Params{"rate_rps": 2.5, "burst": 3, "max_wait_ms": 250}, map[string]string{"mode": "reserve"}}},
		{name: "x/time/rate reserve at Traefik's maxDelay is Traefik exactly",
			point: pt(limiter.TypeXTimeRate, limiter.Params{"rate_rps": 100, "burst": 20, "max_wait_ms": 5}, "mode", "reserve"), format: "traefik",
			text: []string{"average: 100"}, exact: true},
		{name: "Traefik takes no x/time/rate of rate 0",
			point: pt(limiter.TypeXTimeRate, limiter.Params{"rate_rps": 0, "burst": 5, "max_wait_ms": 0}), format: "traefik", cannot: "no rate to deploy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := deploy.Render(c.format, c.point)
			if c.cannot != "" {
				var ne *deploy.NotExpressible
				if !errors.As(err, &ne) || !strings.Contains(ne.Reason, c.cannot) {
					t.Fatalf("got %v, want NotExpressible containing %q", err, c.cannot)
				}
				if ne.Format != c.format || ne.Type != c.point.Spec.Type {
					t.Errorf("NotExpressible names %s/%s", ne.Format, ne.Type)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range c.text {
				if !strings.Contains(e.Text, s) {
					t.Errorf("text lacks %q:\n%s", s, e.Text)
				}
			}
			for _, s := range c.notes {
				if !slices.ContainsFunc(e.Notes, func(n string) bool { return strings.Contains(n, s) }) {
					t.Errorf("no note says %q: %q", s, e.Notes)
				}
			}
			if e.Exact != c.exact {
				t.Errorf("exact %v, want %v", e.Exact, c.exact)
			}
			switch {
			case c.rerun == nil && e.Rerun != nil:
				t.Errorf("rerun %v, want none", e.Rerun)
			case c.rerun != nil && e.Rerun == nil:
				t.Errorf("no rerun, want %s", c.rerun.typ)
			case c.rerun != nil:
				if e.Rerun.Type != c.rerun.typ {
					t.Errorf("rerun type %s, want %s", e.Rerun.Type, c.rerun.typ)
				}
				for name, v := range c.rerun.params {
					if got := e.Rerun.ValuesOf(name); len(got) != 1 || got[0] != v {
						t.Errorf("rerun %s = %v, want %v", name, got, v)
					}
				}
				for name, v := range c.rerun.options {
					if got := e.Rerun.Option(name); got != v {
						t.Errorf("rerun %s = %q, want %q", name, got, v)
					}
				}
			}
			if !strings.HasPrefix(e.Text, e.Format.Comment+"ratelab export: ") {
				t.Errorf("text does not start with its header:\n%s", e.Text)
			}
		})
	}
}

// TestEveryRerunIsAValidGate deploys every sample point in every format:
// the rerun validates, is named, and differs from the point (else the
// export is exact).
func TestEveryRerunIsAValidGate(t *testing.T) {
	t.Parallel()
	for _, p := range samplePoints() {
		for _, a := range deploy.Availability(p) {
			if a.Err != nil {
				continue
			}
			e, _ := a.Format.Export(p)
			if e.Rerun == nil {
				continue
			}
			if errs := e.Rerun.Validate("rerun"); len(errs) > 0 {
				t.Errorf("%s as %s: rerun %v", p.Spec.Type, a.Format.Name, errs)
			}
			if e.Rerun.Name == "" || len(e.Rerun.Name) > limiter.MaxNameLen {
				t.Errorf("%s as %s: rerun name %q", p.Spec.Type, a.Format.Name, e.Rerun.Name)
			}
			if e.Exact {
				t.Errorf("%s as %s: exact with a rerun", p.Spec.Type, a.Format.Name)
			}
		}
	}
}

func TestPointOfAndRerunConfig(t *testing.T) {
	t.Parallel()
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 1,
		"workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 50}]},
		"server": {"workers": 1, "service_ms": 1},
		"limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": [5, 20]},
		             {"type": "nginx-limit-req", "name": "token-bucket as nginx", "rate_rps": 1, "burst": 1, "delay": 0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.PointOf(cfg, 3); err == nil || !strings.Contains(err.Error(), "points 0 to 2") {
		t.Errorf("point 3: %v", err)
	}
	p, err := deploy.PointOf(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.Type != limiter.TypeTokenBucket || p.Params["burst"] != 20 {
		t.Fatalf("point 1 = %s %v", p.Spec.Type, p.Params)
	}
	e, err := deploy.Render("nginx", p)
	if err != nil {
		t.Fatal(err)
	}
	next, err := deploy.RerunConfig(cfg, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Limiters) != 3 {
		t.Fatalf("%d limiters", len(next.Limiters))
	}
	added := next.Limiters[2]
	if added.Type != limiter.TypeNginxLimitReq || added.Name != "token-bucket as nginx (2)" {
		t.Errorf("added %s %q", added.Type, added.Name)
	}
	if got := next.Points()[3].Params; got["burst"] != 19 || got["rate_rps"] != 100 {
		t.Errorf("added point %v", got)
	}
	// The original config is untouched.
	if len(cfg.Limiters) != 2 {
		t.Errorf("cfg changed: %d limiters", len(cfg.Limiters))
	}
	if _, err := deploy.RerunConfig(cfg, &deploy.Export{}); err == nil {
		t.Error("rerun of an exact export")
	}
}

// TestRerunReproducesTheReading checks a reading the formats rely on with
// the gates themselves: a leaky bucket (r, queue) takes the decisions of
// x/time/rate with burst 1 waiting up to (queue-1)/r (the export of a
// leaky bucket as Go), on random whole-ms arrivals, releasing within the
// nanosecond.
func TestRerunReproducesTheReading(t *testing.T) {
	t.Parallel()
	leaky := pt(limiter.TypeLeakyBucket, limiter.Params{"rate_rps": 50, "queue": 4})
	e, err := deploy.Render("go-x-time-rate", leaky)
	if err != nil {
		t.Fatal(err)
	}
	rerunPoint := e.Rerun.Points()[0]
	seed := uint64(1)
	next := func() uint64 { seed = seed*6364136223846793005 + 1442695040888963407; return seed >> 33 }
	for run := range 50 {
		a, err := limiter.New(leaky.Spec, leaky.Params, []float64{1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := limiter.New(e.Rerun, rerunPoint, []float64{1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t0 := 0.0
		for i := range 400 {
			t0 += float64(next() % 30)
			ra, oka := a.Offer(t0, 0)
			rb, okb := b.Offer(t0, 0)
			if oka != okb || (oka && math.Abs(ra-rb) > 1e-5) { // x/time/rate's waits are whole ns
				t.Fatalf("run %d arrival %d at %g: leaky %v %g, x/time/rate %v %g", run, i, t0, oka, ra, okb, rb)
			}
		}
	}
}

// label names an export in failures.
func label(e *deploy.Export) string {
	first, _, _ := strings.Cut(e.Text, "\n")
	return fmt.Sprintf("%s (%s)", e.Format.Name, first)
}
