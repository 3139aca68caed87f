package web

import (
	"strings"
	"testing"
)

// TestRunPageCountsEveryPointsArrivals: a closed loop's requests are made
// as it runs, and a sweep over the offered rate has other arrivals at each
// point, so the run page counts the points' arrivals: a closed-loop run
// was headed "The workload produced no arrivals ..., so every measure
// below is 0" above a goodput of 100 req/s, and "(2 points, 0 arrivals)";
// a rate sweep named its first point's count alone.
func TestRunPageCountsEveryPointsArrivals(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	closed := doneRun(t, l, `{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[
		{"type":"users","group":"u","users":10,"think_ms":50,"timeout_ms":300}]},
		"server":{"workers":2,"service_ms":10,"deadline_ms":300},
		"limiters":[{"type":"token-bucket","rate_rps":[50,100],"burst":5}]}`)
	body := l.get("/runs/" + closed).Body.String()
	if strings.Contains(body, "produced no arrivals") || strings.Contains(body, " 0 arrivals") {
		t.Errorf("closed loop: the page says it had no arrivals")
	}
	if !strings.Contains(body, "arrivals a point)") {
		t.Errorf("closed loop: no per-point count of arrivals in %q", resultsHeading(body))
	}
	swept := doneRun(t, l, `{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[
		{"type":"constant","client":"api","rate_rps":[20,40]}]},
		"limiters":[{"type":"token-bucket","rate_rps":100,"burst":5}]}`)
	if h := resultsHeading(l.get("/runs/" + swept).Body.String()); !strings.Contains(h, "20 to 40 arrivals a point") {
		t.Errorf("rate sweep: %q, want 20 to 40 arrivals a point", h)
	}
	plain := doneRun(t, l, exportSweep)
	if h := resultsHeading(l.get("/runs/" + plain).Body.String()); !strings.Contains(h, ", 50 arrivals)") {
		t.Errorf("one load: %q, want its 50 arrivals", h)
	}
}

// resultsHeading is the results table's count: "(12 points, 5000 arrivals)".
func resultsHeading(body string) string {
	i := strings.Index(body, "Results <span")
	if i < 0 {
		return ""
	}
	j := strings.Index(body[i:], ")")
	return body[i : i+j+1]
}
