package accesslog_test

import (
	"math"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/accesslog"
)

// k6's JSON output as its documentation shows it (the Metric and Point
// lines of "JSON format"), with the http_reqs point k6 writes with each
// request's http_req_duration (the same time and tags), a request whose
// duration point is missing, and one with a script's own tag.
func TestK6JSON(t *testing.T) {
	t.Parallel()
	log := `{"type":"Metric","data":{"type":"gauge","contains":"default","tainted":null,"thresholds":[],"submetrics":null},"metric":"vus"}
{"type":"Point","data":{"time":"2017-05-09T14:34:45.625742514+02:00","value":5,"tags":null},"metric":"vus"}
{"type":"Metric","data":{"type":"counter","contains":"default","tainted":null,"thresholds":[],"submetrics":null},"metric":"http_reqs"}
{"type":"Metric","data":{"type":"trend","contains":"time","tainted":null,"thresholds":["avg<1000"],"submetrics":null},"metric":"http_req_duration"}
{"type":"Point","data":{"time":"2017-05-09T14:34:45.239531499+02:00","value":1,"tags":{"group":"::my group::json","method":"GET","status":"200","url":"https://httpbin.test.k6.io/get"}},"metric":"http_reqs"}
{"type":"Point","data":{"time":"2017-05-09T14:34:45.239531499+02:00","value":459.865729,"tags":{"group":"::my group::json","method":"GET","status":"200","url":"https://httpbin.test.k6.io/get"}},"metric":"http_req_duration"}
{"type":"Point","data":{"time":"2017-05-09T14:34:45.239531499+02:00","value":0.044,"tags":{"group":"::my group::json","method":"GET","status":"200","url":"https://httpbin.test.k6.io/get"}},"metric":"http_req_blocked"}
{"type":"Point","data":{"time":"2017-05-09T12:34:45.5Z","value":1,"tags":{"expected_response":"false","method":"POST","name":"login","proto":"HTTP/1.1","scenario":"default","status":"429","tenant":"acme","url":"https://example.com/login?x=1"}},"metric":"http_reqs"}
{"type":"Point","data":{"time":"2017-05-09T12:34:45.5Z","value":1,"tags":{"expected_response":"false","method":"POST","name":"login","status":"429"}},"metric":"http_req_failed"}
`
	reqs, st, rd := serverRead(t, "k6", "tenant", log, "$request_method $uri", "$tag_group", "$tag_tenant", "$tag_name")
	if len(reqs) != 2 || st.Bad != 0 || st.Skipped != 7 || st.Lines != 9 || st.Approximate {
		t.Fatalf("%+v %+v", reqs, st)
	}
	end := float64(time.Date(2017, 5, 9, 12, 34, 45, 239531499, time.UTC).UnixNano()) / 1e6
	r := reqs[0]
	if math.Abs(r.StartMS-(end-459.865729)) > 1e-6 || r.ServiceMS != 459.865729 || r.Status != 200 {
		t.Errorf("%+v, want start %.6f", r, end-459.865729)
	}
	for i, want := range []string{"GET /get", "::my group::json", "", ""} {
		if got := rd.Key(i).Name(r.Keys[i]); got != want {
			t.Errorf("key %d: %q, want %q", i, got, want)
		}
	}
	r = reqs[1]
	if r.StartMS != end-239.531499+500 || !math.IsNaN(r.ServiceMS) || r.Status != 429 {
		t.Errorf("%+v", r)
	}
	for i, want := range []string{"POST /login", "", "acme", "login"} {
		if got := rd.Key(i).Name(r.Keys[i]); got != want {
			t.Errorf("key %d: %q, want %q", i, got, want)
		}
	}
	if _, err := accesslog.ServerFormat("k6", `a"b`); err == nil {
		t.Error("a tag with a quote read")
	}
	if _, err := accesslog.ServerFormat("k6", "name"); err == nil {
		t.Error("a tag twice read")
	}
}
