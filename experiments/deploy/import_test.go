package deploy_test

import (
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// specJSON is a spec's canonical text without its name.
func specJSON(t *testing.T, s *limiter.Spec) string {
	t.Helper()
	c := *s
	c.Params, c.Options = maps.Clone(s.Params), maps.Clone(s.Options)
	c.Name = ""
	c.Normalize()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestImportInvertsExport: for every sample point a format the lab
// imports exports, the import of the export's text is the gate the export
// names: its rerun, or the point itself when the export is exact. nginx's
// dual token bucket (no rerun) imports as its two zones.
func TestImportInvertsExport(t *testing.T) {
	t.Parallel()
	for _, format := range deploy.ImportFormats() {
		n := 0
		for _, p := range samplePoints() {
			e, err := deploy.Render(format, p)
			var ne *deploy.NotExpressible
			if errors.As(err, &ne) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
			im, err := deploy.Import(format, e.Text, deploy.ImportOptions{})
			if err != nil {
				t.Errorf("%s: import: %v\n%s", label(e), err, e.Text)
				continue
			}
			want := []*limiter.Spec{e.Rerun}
			switch {
			case e.Exact:
				s := *p.Spec
				s.Params = map[string]limiter.Values{}
				for k, v := range p.Params {
					s.Params[k] = limiter.Values{v}
				}
				if s.Option(limiter.OptionNodelay) == "on" {
					s.SetValues(limiter.ParamNginxDelay, limiter.Values{0}) // delay= is not written with nodelay
				}
				want = []*limiter.Spec{&s}
			case e.Rerun == nil:
				want = nil // checked below
			}
			if want == nil {
				if format != "nginx" || p.Spec.Type != limiter.TypeDualTokenBucket || len(im.Stages) != 2 {
					t.Errorf("%s: no rerun, imported %d stages", label(e), len(im.Stages))
					continue
				}
				for i, pr := range [][2]string{{"rate_rps", "burst"}, {"peak_rps", "peak_burst"}} {
					got := im.Stages[i].Spec
					if got.ValuesOf("rate_rps")[0] != p.Params[pr[0]] || got.ValuesOf("burst")[0] != p.Params[pr[1]]-1 || got.Option("nodelay") != "on" {
						t.Errorf("%s: stage %d %s", label(e), i, specJSON(t, got))
					}
				}
				continue
			}
			if len(im.Stages) != 1 {
				t.Errorf("%s: %d stages", label(e), len(im.Stages))
				continue
			}
			got := im.Stages[0].Spec
			if got.Type == limiter.TypeXTimeRatePerKey && want[0].Type == limiter.TypeXTimeRate {
				// Traefik: a limiter per source, the export's rerun being
				// its one source's: compare that source's limiter.
				one := &limiter.Spec{Type: limiter.TypeXTimeRate, Params: maps.Clone(got.Params), Options: got.Options}
				delete(one.Params, limiter.ParamIdle)
				got = one
			}
			if got, w := specJSON(t, got), specJSON(t, want[0]); got != w {
				t.Errorf("%s: import(export) = %s\nthe export names %s\n%s", label(e), got, w, e.Text)
			}
		}
		if n < 3 {
			t.Errorf("%s: only %d sample points export", format, n)
		}
	}
}

const importConf = `
http {
  limit_req_zone $binary_remote_addr zone=perip:10m rate=10r/s;
  limit_req_zone $http_x_api_key zone=perkey:10m rate=600r/m;
  limit_req_zone $server_name zone=all:1m rate=100r/s;
  limit_req_status 429;
  include mime.types;
  server {
    listen 80;
    location /api/ {
      limit_req zone=perip burst=20 delay=5;
      limit_req zone=perkey burst=5 nodelay;
      proxy_pass http://backend;
    }
    location = /login {
      limit_req zone=all;
      limit_req_status 503;
    }
  }
}`

func TestImportNginx(t *testing.T) {
	t.Parallel()
	if _, err := deploy.Import("nginx", importConf, deploy.ImportOptions{}); err == nil || !strings.Contains(err.Error(), "location /api/ (line 10), location = /login (line 15)") {
		t.Errorf("two limited locations: %v", err)
	}
	im, err := deploy.Import("nginx", importConf, deploy.ImportOptions{Location: "/api/"})
	if err != nil {
		t.Fatal(err)
	}
	if im.Status != 429 || len(im.Stages) != 2 || im.Stages[0].Key != "$binary_remote_addr" || im.Stages[1].Key != "$http_x_api_key" {
		t.Fatalf("%+v", im)
	}
	if got := specJSON(t, im.Stages[0].Spec); got != `{"type":"nginx-limit-req","rate_rps":[10],"burst":[20],"delay":[5],"nodelay":"off","key":"client"}` {
		t.Errorf("stage 1 %s", got)
	}
	if got := specJSON(t, im.Stages[1].Spec); got != `{"type":"nginx-limit-req","rate_rps":[10],"burst":[5],"delay":[0],"nodelay":"on","key":"client"}` {
		t.Errorf("stage 2 %s", got)
	}
	if !strings.Contains(strings.Join(im.Notes, "\n"), "include mime.types is not followed") {
		t.Errorf("notes %q", im.Notes)
	}
	im, err = deploy.Import("nginx", importConf, deploy.ImportOptions{Location: "= /login"})
	if err != nil || im.Status != 503 || im.Stages[0].Spec.Option("key") != "client" {
		t.Errorf("login: %+v %v", im, err)
	}
}

// Directives the lab does not model are refused by name, with what the
// lab will and won't do.
func TestImportNginxRefusesUnmodelled(t *testing.T) {
	t.Parallel()
	zone := "limit_req_zone $binary_remote_addr zone=z:1m rate=5r/s;\n"
	for _, c := range []struct{ conf, want string }{
		{zone + "server { location / { limit_req zone=z; limit_req_dry_run on; } }", "limit_req_dry_run on: nginx refuses nothing in dry run"},
		{zone + "limit_req_dry_run on; server { location / { limit_req zone=z; } }", "limit_req_dry_run on"},
		{zone + "server { location / { limit_req zone=z; limit_conn addr 10; } }", "limit_conn: it limits concurrent connections"},
		{zone + "server { location / { limit_req zone=z; return 200 ok; } }", "return: in location / (line 2) it answers in the rewrite phase, before limit_req"},
		{zone + "server { return 301 https://x; location / { limit_req zone=z; } }", "return: in server"},
		{zone + "server { location / { limit_req zone=z; if ($bad) { return 403; } } }", "return: in the if block"},
		{"limit_req_zone $a zone=z:1m rate=5r/s sync;\nlimit_req zone=z;", "NGINX Plus"},
		{zone + "limit_req zone=y;", `no limit_req_zone declares "y"`},
		{zone + "limit_req zone=z burst=2 nodelay delay=1;", "conflicts"},
		{"limit_req_zone $a zone=z:1m rate=0r/s;\nlimit_req zone=z;", "invalid rate"},
		{zone + "limit_req zone=z; limit_req zone=z burst=3;", "twice in one block"},
		{zone + "location / { limit_req zone=z; ", "not closed"},
		{zone, "no limit_req"},
	} {
		_, err := deploy.Import("nginx", c.conf, deploy.ImportOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.conf, err, c.want)
		}
	}
	var um *deploy.Unmodelled
	_, err := deploy.Import("nginx", zone+"limit_req zone=z; limit_conn a 1;", deploy.ImportOptions{})
	if !errors.As(err, &um) || um.Directive != "limit_conn" {
		t.Errorf("limit_conn: %v is not *Unmodelled", err)
	}
}

const traefikConf = `http:
  middlewares:
    api-limit:
      rateLimit:
        average: 30   # per minute below
        period: 1m
        burst: 5
        sourceCriterion:
          requestHeaderName: X-Api-Key
    other:
      headers:
        customRequestHeaders:
          X-Test: "1"
`

func TestImportTraefik(t *testing.T) {
	t.Parallel()
	im, err := deploy.Import("traefik", traefikConf, deploy.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := im.Stages[0]
	if im.Status != 429 || st.Key != "$http_x_api_key" || st.Name != "api-limit" {
		t.Errorf("%+v", im)
	}
	// 30/min = 0.5/s: maxDelay 500 ms, ttl 1 + int(1/0.5) = 3 s.
	if got := specJSON(t, st.Spec); got != `{"type":"x-time-rate-per-key","rate_rps":[0.5],"burst":[5],"max_wait_ms":[500],"idle_s":[3],"mode":"reserve"}` {
		t.Errorf("spec %s", got)
	}
	for _, c := range []struct{ conf, want string }{
		{strings.Replace(traefikConf, "requestHeaderName: X-Api-Key", "ipStrategy:\n            depth: 2", 1), "sourceCriterion.ipStrategy.depth"},
		{strings.Replace(traefikConf, "average: 30", "average: 0", 1), "limit nothing"},
		{strings.Replace(traefikConf, "burst: 5", "burst: 5\n        redis:\n          endpoints: x", 1), "rateLimit.redis"},
		{strings.Replace(traefikConf, "period: 1m", "period: soon", 1), "rateLimit.period"},
		{"http:\n  middlewares:\n    a:\n      headers: {}\n", "flow collections"},
		{"http:\n  routers: x\n", "no http.middlewares"},
	} {
		if _, err := deploy.Import("traefik", c.conf, deploy.ImportOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.conf, err, c.want)
		}
	}
	// The default criterion is the client address; several middlewares
	// need a name.
	two := strings.Replace(traefikConf, "        sourceCriterion:\n          requestHeaderName: X-Api-Key\n", "", 1) +
		"    b:\n      rateLimit:\n        average: 100\n"
	if _, err := deploy.Import("traefik", two, deploy.ImportOptions{}); err == nil || !strings.Contains(err.Error(), "api-limit, b") {
		t.Errorf("two: %v", err)
	}
	im, err = deploy.Import("traefik", two, deploy.ImportOptions{Location: "b"})
	if err != nil || im.Stages[0].Key != "$remote_addr" || specJSON(t, im.Stages[0].Spec) != `{"type":"x-time-rate-per-key","rate_rps":[100],"burst":[1],"max_wait_ms":[5],"idle_s":[2],"mode":"reserve"}` {
		t.Errorf("b: %v %+v", err, im)
	}
}

const envoyConf = `static_resources:
  listeners:
  - name: listener_0
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          http_filters:
          - name: envoy.filters.http.local_ratelimit
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
              stat_prefix: http_local_rate_limiter
              token_bucket:
                max_tokens: 10000
                tokens_per_fill: 1000
                fill_interval: 1s
              filter_enabled:
                runtime_key: local_rate_limit_enabled
                default_value:
                  numerator: 100
                  denominator: HUNDRED
              filter_enforced:
                runtime_key: local_rate_limit_enforced
                default_value:
                  numerator: 100
                  denominator: HUNDRED
          - name: envoy.filters.http.router
`

func TestImportEnvoy(t *testing.T) {
	t.Parallel()
	im, err := deploy.Import("envoy", envoyConf, deploy.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := specJSON(t, im.Stages[0].Spec); im.Status != 429 || got != `{"type":"envoy-local-ratelimit","max_tokens":[10000],"tokens_per_fill":[1000],"fill_interval_ms":[1000],"descriptor":"none","token_bucket":"atomic"}` {
		t.Errorf("%d %s", im.Status, got)
	}
	for _, c := range []struct{ conf, want string }{
		{strings.Replace(envoyConf, "numerator: 100\n                  denominator: HUNDRED\n              filter_enforced", "numerator: 50\n                  denominator: HUNDRED\n              filter_enforced", 1), "filter_enabled 50/HUNDRED"},
		{strings.Replace(envoyConf, "              stat_prefix:", "              descriptors:\n              - entries: x\n              stat_prefix:", 1), "descriptors"},
		{strings.Replace(envoyConf, "local_ratelimit\n", "ratelimit\n", 1), "no http filter named"},
	} {
		if _, err := deploy.Import("envoy", c.conf, deploy.ImportOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}
