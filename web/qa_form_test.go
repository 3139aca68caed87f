package web

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFormTypedZeroIsNotTheDefault: a typed 0 where the config document
// reads 0 as "the default" is refused beside its input; it used to run the
// default silently (workers 0 ran 1 worker, deadline 0 ran 200 ms).
func TestFormTypedZeroIsNotTheDefault(t *testing.T) {
	l := newLab(t, false, 4)
	for _, key := range []string{"server.workers", "server.service_ms", "server.deadline_ms",
		"metrics.rolling_window_ms", "metrics.fairness_window_ms", "parts.0.weight"} {
		t.Run(key, func(t *testing.T) {
			v := formValuesOf(DefaultForm())
			v.Set(key, "0")
			w := l.postForm("/runs", v)
			if w.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", w.Code)
			}
			block := inputBlock(t, w.Body.String(), key)
			if !strings.Contains(block, "field-error") || !strings.Contains(block, "leave it empty for the default") {
				t.Errorf("no error beside %s:\n%s", key, block)
			}
			if !strings.Contains(block, `value="0"`) {
				t.Errorf("the typed 0 was not kept:\n%s", block)
			}
		})
	}
	if _, total, err := l.store.List(context.Background(), 10, 0); err != nil || total != 0 {
		t.Errorf("typed zeros stored %d runs (%v)", total, err)
	}
	// Empty still means the default.
	v := formValuesOf(DefaultForm())
	v.Set("server.deadline_ms", "")
	if w := l.postForm("/runs", v); w.Code != http.StatusSeeOther {
		t.Errorf("empty deadline: %d, want 303", w.Code)
	}
}

// TestFormListItemNamed: an engine error about one item of a list input
// says which item, since the input holds the whole list.
func TestFormListItemNamed(t *testing.T) {
	l := newLab(t, false, 4)
	for _, tc := range []struct {
		set       map[string]string
		key, want string
	}{
		{map[string]string{"limiters.0.burst": "1, 2, -4"}, "limiters.0.burst", "value 3 (-4): must be at least 1"},
		{map[string]string{"parts.0.type": "demand-curve", "parts.0.segments": "20,1000\n-600,200"}, "parts.0.segments", "segment 2 (-600,200): must be"},
		{map[string]string{"parts.0.type": "bursts", "parts.0.bursts": "100,5\n-5,3"}, "parts.0.bursts", "burst 2 (-5,3): must be"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			v := formValuesOf(DefaultForm())
			for k, val := range tc.set {
				v.Set(k, val)
			}
			w := l.postForm("/runs", v)
			if w.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", w.Code)
			}
			if block := inputBlock(t, w.Body.String(), tc.key); !strings.Contains(block, htmlEscape(tc.want)) {
				t.Errorf("want %q beside %s:\n%s", tc.want, tc.key, block)
			}
		})
	}
}

// TestOversizeTraceOnlySizeError: a trace past the limit gets the size
// error alone (not also "is empty", which the engine said of the unread
// trace), under its config path in the summary.
func TestOversizeTraceOnlySizeError(t *testing.T) {
	l := newLab(t, false, 4)
	v := formValuesOf(DefaultForm())
	v.Set("parts.0.type", "trace")
	big := bytes.Repeat([]byte("1,a\n"), MaxTraceBytes/4+1)
	w := l.do(multipartForm(t, v, "parts.0.csv_file", big))
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", w.Code)
	}
	body := w.Body.String()
	if strings.Contains(body, "is empty") {
		t.Error(`an oversize trace is also reported as "is empty"`)
	}
	if !strings.Contains(body, "workload.parts[0].csv") {
		t.Error("the summary does not name the trace's config path")
	}
	if block := inputBlock(t, body, "parts.0.csv_file"); !strings.Contains(block, "larger than 10.0 MB") {
		t.Errorf("no size error at the trace:\n%s", block)
	}
}

// TestHeadRequests: HEAD answers like GET without a body (it was 405), so
// `curl -I` on a download shows its size and sha256.
func TestHeadRequests(t *testing.T) {
	l := newLab(t, true, 4)
	id := runIDFrom(t, l.postForm("/runs", formValuesOf(DefaultForm())))
	l.wait(id)
	for _, path := range []string{"/", "/runs", "/runs/" + id, "/runs/" + id + "/files/results.csv", "/api/runs/" + id, "/calculus"} {
		w := l.do(httptest.NewRequest(http.MethodHead, path, nil))
		if w.Code != http.StatusOK {
			t.Errorf("HEAD %s: %d", path, w.Code)
		}
	}
	w := l.do(httptest.NewRequest(http.MethodHead, "/runs/"+id+"/files/results.csv", nil))
	if w.Header().Get("X-Checksum-Sha256") == "" || w.Header().Get("Content-Disposition") == "" {
		t.Errorf("HEAD of a download lacks its headers: %v", w.Header())
	}
}

// TestCalculusHops: the chain of servers is optional (an empty list failed
// the whole page with 422 although the single-server answer needs none),
// and a service time that is not a number says so.
func TestCalculusHops(t *testing.T) {
	l := newLab(t, false, 4)
	w := l.get("/calculus?server_rps=100&latency_ms=10&budget_ms=210&rate_rps=80&burst=20&hops=")
	if w.Code != http.StatusOK {
		t.Errorf("empty chain: %d, want 200", w.Code)
	}
	if body := w.Body.String(); !strings.Contains(body, "b = R·(D − T) = 20") || strings.Contains(body, "at least one server") {
		t.Error("empty chain: no single-server answer, or an error for the optional chain")
	}
	w = l.get("/calculus?server_rps=100&latency_ms=10&budget_ms=210&rate_rps=80&burst=20&hops=2,x")
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), htmlEscape(`service_ms "x" is not a number`)) {
		t.Errorf("hops 2,x: %d, no not-a-number message", w.Code)
	}
}

// TestAPITraceLimit: the API refuses a trace past the form's 10 MB limit
// with 413 and the part's path (it ran it, and the run could then not be
// edited as a new sweep).
func TestAPITraceLimit(t *testing.T) {
	l := newLab(t, false, 4)
	csv := strings.Repeat("1,a\n", MaxTraceBytes/4+1)
	doc := `{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"poisson","rate_rps":5},{"type":"trace","csv":"` +
		strings.ReplaceAll(csv, "\n", `\n`) + `"}]},"limiters":[{"type":"none"}]}`
	w := l.postJSON("/api/runs", []byte(doc))
	if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), `"workload.parts[1].csv"`) {
		t.Errorf("trace past the limit: %d %s", w.Code, w.Body.String())
	}
	if _, total, err := l.store.List(context.Background(), 10, 0); err != nil || total != 0 {
		t.Errorf("stored %d runs (%v)", total, err)
	}
}

// TestRunWithoutArrivalsSaysSo: a run whose workload produced no arrivals
// (Poisson 90 req/s in a 1 ms window) says so above its all-zero charts.
func TestRunWithoutArrivalsSaysSo(t *testing.T) {
	l := newLab(t, true, 4)
	v := formValuesOf(DefaultForm())
	v.Set("duration_ms", "1")
	id := runIDFrom(t, l.postForm("/runs", v))
	if run := l.wait(id); run.Status != "done" {
		t.Fatalf("run %s: %s", run.Status, run.Error)
	}
	body := l.get("/runs/" + id).Body.String()
	if !strings.Contains(body, "0 arrivals") {
		t.Skip("the workload produced arrivals after all")
	}
	if !strings.Contains(body, "produced no arrivals") {
		t.Error("a run without arrivals shows zero charts without a word why")
	}
}
