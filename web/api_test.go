package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

func TestAPI(t *testing.T) {
	l := newLab(t, true, 4)
	w := l.postJSON("/api/runs", []byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},"limiters":[{"type":"token-bucket","rate_rps":10,"burst":[0]}]}`))
	var e APIErrors
	if w.Code != http.StatusBadRequest || json.Unmarshal(w.Body.Bytes(), &e) != nil || len(e.Errors) == 0 || e.Errors[0].Path != "limiters[0].burst" {
		t.Errorf("bad config: %d %s", w.Code, w.Body)
	}
	if w := l.postJSON("/api/runs", []byte(`{`)); w.Code != http.StatusBadRequest {
		t.Errorf("broken JSON: %d", w.Code)
	}
	big := bytes.Repeat([]byte(" "), MaxAPIBytes+1)
	if w := l.postJSON("/api/runs", big); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("too large: %d", w.Code)
	}
	w = l.postJSON("/api/runs", []byte(`{"version":1,"name":"api","workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},"limiters":[{"type":"token-bucket","rate_rps":10,"burst":[1,5]}]}`))
	if w.Code != http.StatusAccepted {
		t.Fatalf("good config: %d %s", w.Code, w.Body)
	}
	loc := w.Header().Get("Location")
	id, _ := strings.CutPrefix(loc, "/api/runs/")
	if !storage.ValidID(id) {
		t.Fatalf("Location %q", loc)
	}
	l.wait(id)
	var got APIRun
	if err := json.Unmarshal(l.get(loc).Body.Bytes(), &got); err != nil || got.Status != "done" || got.PointsDone != 2 || got.PointsTotal != 2 {
		t.Errorf("GET %s: %+v %v", loc, got, err)
	}
	var manifest map[string]any
	if err := json.Unmarshal(got.Manifest, &manifest); err != nil {
		t.Errorf("manifest: %v", err)
	}
	if w := l.get("/api/runs/aaaaaaaaaaaa"); w.Code != http.StatusNotFound {
		t.Errorf("unknown run: %d", w.Code)
	}
}

// TestAPITraceLimit: the API refuses a trace past the form's 10 MB limit
// with 413 and the part's path (it ran it, and the run could then not be
// edited as a new sweep).
func TestAPITraceLimit(t *testing.T) {
	l := newLab(t, false, 4)
	csv := strings.Repeat("1,a\n", form.MaxTraceBytes/4+1)
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
