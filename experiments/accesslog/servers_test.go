package accesslog_test

import (
	"math"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/accesslog"
)

func serverRead(t *testing.T, server, def, log string, keys ...string) ([]accesslog.Request, accesslog.Stats, *accesslog.Reader) {
	t.Helper()
	f, err := accesslog.ServerFormat(server, def)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := accesslog.NewReader(strings.NewReader(log), accesslog.Options{Format: f, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	var out []accesslog.Request
	for {
		r, err := rd.Next()
		if err != nil {
			break
		}
		out = append(out, *r)
	}
	return out, rd.Stats(), rd
}

// Envoy's documented default-format line.
func TestEnvoyDefault(t *testing.T) {
	t.Parallel()
	log := `[2016-04-15T20:17:00.310Z] "POST /api/v1/locations HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80"` + "\n"
	reqs, st, rd := serverRead(t, "envoy", "", log, "$http_x_forwarded_for", "$request_method $uri", "$host")
	if len(reqs) != 1 || st.Bad != 0 || st.Approximate {
		t.Fatalf("%+v %+v", reqs, st)
	}
	r := reqs[0]
	if r.StartMS != 1460751420310 || r.Status != 204 || r.ServiceMS != 100 {
		t.Errorf("%+v", r)
	}
	for i, want := range []string{"10.0.35.28", "POST /api/v1/locations", "locations"} {
		if got := rd.Key(i).Name(r.Keys[i]); got != want {
			t.Errorf("key %d: %q, want %q", i, got, want)
		}
	}
}

// Envoy's JSON access log (json_format), as its docs write one.
func TestEnvoyJSON(t *testing.T) {
	t.Parallel()
	def := `{"start_time": "%START_TIME%", "method": "%REQ(:METHOD)%", "path": "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%", "response_code": "%RESPONSE_CODE%", "duration": "%DURATION%", "client": "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%", "upstream_service_time": "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%"}`
	log := `{"start_time":"2022-08-01T10:00:00.123Z","method":"GET","path":"/ping","response_code":429,"duration":1,"client":"172.18.0.1","upstream_service_time":null}` + "\n"
	reqs, st, rd := serverRead(t, "envoy", def, log, "$remote_addr")
	if len(reqs) != 1 || st.Bad != 0 {
		t.Fatalf("%+v %+v", reqs, st)
	}
	if r := reqs[0]; r.StartMS != 1659348000123 || r.Status != 429 || !math.IsNaN(r.ServiceMS) || rd.Key(0).Name(r.Keys[0]) != "172.18.0.1" {
		t.Errorf("%+v", r)
	}
	if _, err := accesslog.ServerFormat("envoy", "[%START_TIME(%s)%]"); err == nil {
		t.Error("START_TIME with a format read")
	}
}

// The AWS documentation's example ALB entry (HTTP).
func TestALB(t *testing.T) {
	t.Parallel()
	log := `http 2018-07-02T22:23:00.186641Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 200 200 34 366 "GET http://www.example.com:80/ HTTP/1.1" "curl/7.46.0" - - arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 "Root=1-58337262-36d228ad5d99923122bbe354" "-" "-" 0 2018-07-02T22:22:48.364000Z "forward" "-" "-" "10.0.0.1:80" "200" "-" "-"
https 2018-07-02T22:23:00.186641Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.40:2817 - -1 -1 -1 502 - 34 366 "GET https://www.example.com:443/ HTTP/1.1" "curl/7.46.0" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 "Root=1-58337262-36d228ad5d99923122bbe354" "www.example.com" "arn:aws:acm:us-east-2:123456789012:certificate/12345678-1234-1234-1234-123456789012" 1 2018-07-02T22:22:48.364500Z "forward" "-" "-" "-" "-" "-" "-"
`
	reqs, st, rd := serverRead(t, "alb", "", log, "$binary_remote_addr", "$uri")
	if len(reqs) != 2 || st.Bad != 0 {
		t.Fatalf("%+v %+v", reqs, st)
	}
	if r := reqs[0]; r.StartMS != 1530570168364 || r.Status != 200 || r.ServiceMS != 1 || rd.Key(0).Name(r.Keys[0]) != "192.168.131.39" || rd.Key(1).Name(r.Keys[1]) != "/" {
		t.Errorf("%+v", r)
	}
	if r := reqs[1]; r.StartMS != 1530570168364.5 || r.Status != 502 || !math.IsNaN(r.ServiceMS) {
		t.Errorf("%+v", r)
	}
}

// Every server the lab reads has its definition's help.
func TestLogFormatHelp(t *testing.T) {
	t.Parallel()
	for _, server := range accesslog.Servers() {
		if accesslog.LogFormatHelp(server) == "" {
			t.Errorf("%s: no help", server)
		}
	}
}
