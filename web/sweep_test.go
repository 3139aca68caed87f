package web

import (
	"net/http"
	"strings"
	"testing"
)

// sweptDoc sweeps a workload rate with a limiter at one setting, with
// replications: the sweep charts put the rate on their x axis, draw the
// intervals, and the run keeps replications.csv.
const sweptWebDoc = `{"version":1,"seed":5,"replications":3,
 "workload":{"duration_ms":3000,"parts":[{"type":"poisson","rate_rps":[40,80,120]}]},
 "server":{"workers":1,"service_ms":8},
 "limiters":[{"type":"token-bucket","rate_rps":100,"burst":10}]}`

func TestSweptWorkloadFieldChartAxis(t *testing.T) {
	l := newLab(t, true, 4)
	w := l.postJSON("/api/runs", []byte(sweptWebDoc))
	if w.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	l.wait(id)
	body := l.get("/runs/" + id).Body.String()
	i := strings.Index(body, `id="chart-goodput"`)
	if i < 0 {
		t.Fatalf("no goodput chart:\n%s", body)
	}
	chart := body[i:min(len(body), i+20000)]
	if !strings.Contains(chart, "workload.parts[0].rate_rps (req/s)") {
		t.Errorf("the goodput chart's x axis is not the swept rate:\n%.3000s", chart)
	}
	if !strings.Contains(chart, "95% CI") {
		t.Errorf("the goodput chart draws no intervals")
	}
	csv := l.get("/runs/" + id + "/files/results.csv").Body.String()
	head := strings.SplitN(csv, "\n", 2)[0]
	if !strings.Contains(head, "workload.parts[0].rate_rps") || !strings.Contains(head, "goodput_rps,goodput_rps_ci95") {
		t.Errorf("results.csv header: %s", head)
	}
	rw := l.get("/runs/" + id + "/files/replications.csv")
	if rw.Code != http.StatusOK || strings.Count(rw.Body.String(), "\n") != 1+3*3 {
		t.Errorf("replications.csv: %d\n%s", rw.Code, rw.Body)
	}
}

// With replications the answer panel judges an objective on its interval's
// pessimistic end and says so.
func TestAnswerWithIntervals(t *testing.T) {
	l := newLab(t, true, 4)
	doc := strings.Replace(sweptWebDoc, `"limiters"`, `"objectives":[{"metric":"sojourn_p99_ms","op":"<=","value":500}],"limiters"`, 1)
	w := l.postJSON("/api/runs", []byte(doc))
	if w.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	l.wait(id)
	body := l.get("/runs/" + id).Body.String()
	if !strings.Contains(body, "end of the 95% interval; mean ") {
		t.Errorf("the answer does not name the interval")
	}
}
