package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

// sweptDoc sweeps a workload rate with a limiter at one setting, with
// replications: the sweep charts put the rate on their x axis, draw the
// intervals, and the run keeps replications.csv.
const sweptWebDoc = `{"version":1,"seed":5,"replications":3,
 "workload":{"duration_ms":3000,"parts":[{"type":"poisson","rate_rps":[40,80,120]}]},
 "server":{"workers":1,"service_ms":8},
 "limiters":[{"type":"token-bucket","rate_rps":100,"burst":10}]}`

func TestSweptWorkloadFieldChartAxis(t *testing.T) {
	t.Parallel()
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
	// The time series, read back from storage, are the runs' means over
	// a shaded band (the band travels in the series blob).
	if i := strings.Index(body, `id="chart-series"`); i < 0 || !strings.Contains(body[i:min(len(body), i+40000)], "mean of 3 runs, shaded: its 95% interval") ||
		!strings.Contains(body[i:min(len(body), i+40000)], "&#34;stack&#34;:&#34;band ") {
		t.Errorf("the stored run's time series has no band")
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
	t.Parallel()
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

// The door bound and the service distribution's settings take lists in
// the form, like the other sweepable server fields: a posted list runs
// one point per value (the product of the lists), and a bad value comes
// back on its input with the list as typed.
func TestFormSweepsBoundAndDistribution(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	cfg, err := document.DecodeConfig([]byte(`{"version":1,"seed":2,
 "workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":150}]},
 "server":{"workers":1,"service_ms":8,"door":"tail-drop"},
 "limiters":[{"type":"token-bucket","rate_rps":120,"burst":10}]}`))
	if err != nil {
		t.Fatal(err)
	}
	v := formValuesOf(form.FromConfig(cfg))
	v.Set(form.BoundKey, "5, 10, 20")
	v.Set("server.service", "lognormal")
	v.Set("server.service_p50_ms", "4..6 step 2")
	v.Set("server.service_p99_ms", "40")
	id := runIDFrom(t, l.postForm("/runs", v))
	if run := l.wait(id); run.Status != storage.StatusDone {
		t.Fatalf("run: %s %s", run.Status, run.Error)
	}
	res, err := l.store.Result(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 3*2 {
		t.Errorf("%d points, want 3 bounds × 2 medians", len(res.Points))
	}
	csv := l.get("/runs/" + id + "/files/results.csv").Body.String()
	rows := strings.Split(strings.TrimSpace(csv), "\n")
	if head := rows[0]; !strings.Contains(head, "server.bound") || !strings.Contains(head, "server.service_p50_ms") || len(rows) != 1+6 {
		t.Errorf("results.csv: %d rows, header %s", len(rows), head)
	}
	// The run's config back in the form (re-run / edit) shows the lists.
	back := form.FromConfig(res.Config)
	if back.Setting(form.BoundKey) != "5, 10, 20" || back.Setting("server.service_p50_ms") != "4, 6" {
		t.Errorf("form from the run: bound %q p50 %q", back.Setting(form.BoundKey), back.Setting("server.service_p50_ms"))
	}

	// Bad values: the engine's message on the input, naming the value, and
	// the typed list re-rendered.
	for key, c := range map[string]struct{ text, msg string }{
		form.BoundKey:           {"5, -1", "value 2 (-1): must be between 1 and"},
		"server.service_p50_ms": {"4, 0", "value 2 (0): "},
		"server.service_p99_ms": {"40, 2", "value 2 (2): "},
	} {
		bad := formValuesOf(form.FromConfig(cfg))
		bad.Set("server.service", "lognormal")
		bad.Set("server.service_p50_ms", "4")
		bad.Set("server.service_p99_ms", "40")
		bad.Set(key, c.text)
		w := l.postForm("/runs", bad)
		if w.Code != http.StatusUnprocessableEntity {
			t.Fatalf("%s %q: status %d", key, c.text, w.Code)
		}
		block := inputBlock(t, w.Body.String(), key)
		if !strings.Contains(block, htmlEscape(c.msg)) || !strings.Contains(block, `value="`+c.text+`"`) {
			t.Errorf("%s %q: the input's block:\n%s", key, c.text, block)
		}
	}
	bad := formValuesOf(form.FromConfig(cfg))
	bad.Set(form.BoundKey, "5..x")
	if w := l.postForm("/runs", bad); w.Code != http.StatusUnprocessableEntity || !strings.Contains(inputBlock(t, w.Body.String(), form.BoundKey), "field-error") {
		t.Errorf("a bad range of bounds: %d", w.Code)
	}
}
