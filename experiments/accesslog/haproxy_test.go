package accesslog_test

import (
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/accesslog"
)

// HAProxy's documented httplog example (configuration.txt, "HTTP log
// format"), as rsyslog writes it to a file, as HAProxy sends it to a
// syslog server (RFC 3164 and RFC 5424 headers) and raw (log stdout
// format raw); and the line of a request with no response (Tr -1).
func TestHAProxyHTTPLog(t *testing.T) {
	t.Parallel()
	msg := `10.0.1.2:33317 [06/Feb/2009:12:14:14.655] http-in static/srv1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 {1wt.eu} {} "GET /index.html HTTP/1.1"`
	def := "frontend http-in\n  option httplog\n  capture request header Host len 20\n  capture response header Content-Length len 10\n  default_backend static\n"
	for _, tc := range []struct {
		name, prefix string
	}{
		{"file", "Feb  6 12:14:14 localhost haproxy[14389]: "},
		{"rfc3164", "<134>Feb  6 12:14:14 haproxy[14389]: "},
		{"rfc5424", "<134>1 2009-02-06T12:14:14.655000+00:00 localhost haproxy 14389 - - "},
		{"raw", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := tc.prefix + msg + "\n" + tc.prefix + `2001:db8::7:33318 [06/Feb/2009:12:14:15.001] http-in static/<NOSRV> 5/-1/-1/-1/5 503 212 - - SC-- 1/1/0/0/0 0/0 {} {} "POST /api/x?k=1 HTTP/1.1"` + "\n"
			reqs, st, rd := serverRead(t, "haproxy", def, log, "$remote_addr", "$http_host", "$request_method $uri")
			if len(reqs) != 2 || st.Bad != 0 || st.Approximate {
				t.Fatalf("%+v %+v", reqs, st)
			}
			r := reqs[0]
			if r.StartMS != 1233922454655 || r.Status != 200 || r.ServiceMS != 69 {
				t.Errorf("%+v", r)
			}
			for i, want := range []string{"10.0.1.2", "1wt.eu", "GET /index.html"} {
				if got := rd.Key(i).Name(r.Keys[i]); got != want {
					t.Errorf("key %d: %q, want %q", i, got, want)
				}
			}
			r = reqs[1]
			if r.StartMS != 1233922455001 || r.Status != 503 || !math.IsNaN(r.ServiceMS) || rd.Key(0).Name(r.Keys[0]) != "2001:db8::7" || r.Keys[1] != -1 || rd.Key(2).Name(r.Keys[2]) != "POST /api/x" {
				t.Errorf("%+v", r)
			}
		})
	}
}

// HAProxy's dates have no zone: the reader's Location says which.
func TestHAProxyLocation(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	f, err := accesslog.ServerFormat("haproxy", "")
	if err != nil {
		t.Fatal(err)
	}
	log := `10.0.1.2:33317 [06/Feb/2009:12:14:14.655] fe be/s1 0/0/0/1/1 200 2 - - ---- 1/1/1/1/0 0/0 "GET / HTTP/1.1"` + "\n"
	rd, err := accesslog.NewReader(strings.NewReader(log), accesslog.Options{Format: f, Location: paris})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rd.Next()
	if err != nil || r.StartMS != 1233918854655 {
		t.Fatalf("%v %+v", err, r)
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Fatal(err)
	}
}

// The log-format string turned into the reader's variables.
func TestHAProxyVariables(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ def, want string }{
		{"", `${client_port} [${start_local_ms}] ${haproxy_ft} ${haproxy_b}/${haproxy_s} ${haproxy_TR}/${haproxy_Tw}/${haproxy_Tc}/${upstream_service_time_ms}/${haproxy_Ta} ${status} ${haproxy_B} ${haproxy_CC} ${haproxy_CS} ${haproxy_tsc} ${haproxy_ac}/${haproxy_fc}/${haproxy_bc}/${haproxy_sc}/${haproxy_rc} ${haproxy_sq}/${haproxy_bq} "${request}"`},
		{`log-format "%ci [%t]   %ST %{+Q}hr\ %[src,ipmask(24)] 100%%"`, `${remote_addr} [${start_local_ms}] ${status} ${haproxy_fetch_src_ipmask_24_} 100%`},
		{"capture request header X-Api-Key len 32\nlog-format '%t %hr %hs %ST'", `${start_local_ms} {${http_x_api_key}} ${status}`},
		{"%trg %t %ST", `${time_local} ${start_local_ms} ${status}`},
		{"%trg %t %tr", `${time_local} ${haproxy_t} ${start_local_ms}`},
	} {
		f, err := accesslog.ServerFormat("haproxy", tc.def)
		if err != nil {
			t.Errorf("%q: %v", tc.def, err)
			continue
		}
		if f.Definition != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.def, f.Definition, tc.want)
		}
	}
	for _, def := range []string{"option httplog clf", "option tcplog", "declare capture request len 10", `log-format "%ci $x %ST %t"`, `%{+X}ST %t`, "%ci%ST %t"} {
		if _, err := accesslog.ServerFormat("haproxy", def); err == nil {
			t.Errorf("%q read", def)
		}
	}
}
