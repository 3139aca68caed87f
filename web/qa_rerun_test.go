package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/storage"
)

// TestRerunAcrossEngineVersions: a re-run of a run stored by another engine
// version says so beside the comparison: manifest.json records the engine
// version and cannot match ("1 of 5 files differ" read as a failed
// reproducibility check).
func TestRerunAcrossEngineVersions(t *testing.T) {
	l := newLab(t, true, 4)
	ctx := context.Background()
	doc, cfg := DefaultForm().Document()
	if cfg == nil {
		t.Fatal("default form does not decode")
	}
	res, err := experiments.Run(ctx, cfg, experiments.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	orig := &storage.Run{Name: "old engine", Config: doc, Seed: cfg.Seed, EngineVersion: "0.9.0",
		Limiters: []string{"token-bucket"}, PointsTotal: len(cfg.Points())}
	if err := l.store.Create(ctx, orig); err != nil {
		t.Fatal(err)
	}
	if err := l.store.Complete(ctx, orig.ID, res, files); err != nil {
		t.Fatal(err)
	}
	w := l.postForm("/runs/"+orig.ID+"/rerun", nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("rerun: %d", w.Code)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/runs/")
	if run := l.wait(id); run.Status != storage.StatusDone {
		t.Fatalf("rerun %s: %s", run.Status, run.Error)
	}
	body := l.get("/runs/" + id).Body.String()
	if !strings.Contains(body, "engine-note") || !strings.Contains(body, "0.9.0") || !strings.Contains(body, experiments.EngineVersion) {
		t.Error("the re-run check does not say the engine changed")
	}
	// Same engine: no note.
	w = l.postForm("/runs/"+id+"/rerun", nil)
	id2 := strings.TrimPrefix(w.Header().Get("Location"), "/runs/")
	l.wait(id2)
	if body := l.get("/runs/" + id2).Body.String(); strings.Contains(body, "engine-note") {
		t.Error("an engine note between runs of the same engine")
	}
}
