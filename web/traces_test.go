package web

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

// With a trace directory (lab serve --traces), the new-sweep form offers
// its files by name in a trace part, the API runs a config naming one,
// and refuses (422, with the field's path) a name the lab does not have.
func TestTraceDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := storage.Open(ctx, filepath.Join(t.TempDir(), "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	files := map[string]string{"day.csv": "0,a\n5,b\n7,a\n", "night.csv.gz": "0,z\n"}
	rn := runner.New(st, runner.Options{Workers: 1, Queue: 4, Logger: log, EngineWorkers: 1,
		Traces: func(name string) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(files[name])), nil
		},
		TraceNames: func() ([]string, error) { return []string{"day.csv", "night.csv.gz"}, nil },
	})
	rn.Start()
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		rn.Shutdown(sctx)
		st.Close()
	})
	l := &lab{t: t, store: st, runner: rn, srv: New(st, rn, Options{Logger: log, Done: done})}

	doc := func(name string) []byte {
		return []byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"trace","file":"` + name + `"}]},
			"limiters":[{"type":"token-bucket","rate_rps":10,"burst":[1,2]}]}`)
	}
	w := l.postJSON("/api/runs", doc("secret.csv"))
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "workload.parts[0].file") {
		t.Fatalf("unknown trace: %d %s", w.Code, w.Body.String())
	}
	w = l.postJSON("/api/runs", doc("day.csv"))
	if w.Code != http.StatusAccepted {
		t.Fatalf("known trace: %d %s", w.Code, w.Body.String())
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	if run := l.wait(created.ID); run.Status != storage.StatusDone {
		t.Fatalf("run %s: %s %s", created.ID, run.Status, run.Error)
	}

	page := l.get("/?from=" + created.ID).Body.String()
	for _, want := range []string{`<option value="day.csv" selected>`, `<option value="night.csv.gz">`, "none: the CSV below"} {
		if !strings.Contains(page, want) {
			t.Errorf("the form lacks %s", want)
		}
	}

	// the form's submission of an unknown name comes back with the reason
	stored, err := st.Get(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := document.DecodeConfig(stored.Config)
	if err != nil {
		t.Fatal(err)
	}
	v := formValuesOf(form.FromConfig(cfg))
	if v.Get("parts.0.file") != "day.csv" {
		t.Fatalf("the form posts file %q", v.Get("parts.0.file"))
	}
	v.Set("parts.0.file", "gone.csv")
	w = l.postForm("/runs", v)
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "is not one of the lab") {
		t.Errorf("form with an unknown trace: %d", w.Code)
	}
}
