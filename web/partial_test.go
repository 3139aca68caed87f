package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

// TestPartialRunShown: a run kept partial shows "partial: k of n points"
// on its page (with its charts, table and files) and in /runs, with its
// size in the database; it compares and zips like a done run.
func TestPartialRunShown(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	ctx := context.Background()
	doc, cfg := form.Default().Document()
	cctx, cancel := context.WithCancel(ctx)
	res, err := sweep.Run(cctx, cfg, sweep.Options{Workers: 1, Progress: func(done, _ int) {
		if done == 2 {
			cancel()
		}
	}})
	cancel()
	if res == nil || res.Partial == nil {
		t.Fatalf("no partial result: %v", err)
	}
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	run := &storage.Run{Name: "cut short", Config: doc, Seed: cfg.Seed, EngineVersion: experiments.EngineVersion, PointsTotal: len(cfg.Points())}
	if err := l.store.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := l.store.Keep(ctx, run.ID, res, files, "cancelled by request after 2 points"); err != nil {
		t.Fatal(err)
	}
	stored, _ := l.store.Get(ctx, run.ID)
	want := partialText(*stored)
	page := l.get("/runs/" + run.ID)
	body := page.Body.String()
	for _, s := range []string{want, `id="run-size"`, "in the database", `id="results"`, `class="chart"`, `id="zip-download"`} {
		if !strings.Contains(body, s) {
			t.Errorf("partial run page lacks %s", s)
		}
	}
	if strings.Contains(body, "none of them are kept") {
		t.Error("the partial run page says none of its points are kept")
	}
	list := l.get("/runs").Body.String()
	if !strings.Contains(list, want) || !strings.Contains(list, storedSize(*stored)) {
		t.Errorf("/runs lacks %q or the size %q", want, storedSize(*stored))
	}
	if w := l.get("/runs?status=partial"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "cut short") {
		t.Errorf("/runs?status=partial: %d", w.Code)
	}
	done := l.doneRun()
	if w := l.get("/compare?runs=" + run.ID + "," + done); w.Code != http.StatusOK || strings.Contains(w.Body.String(), "compare-no-results") {
		t.Errorf("compare with a partial run: %d", w.Code)
	}
	if w := l.get("/runs/" + run.ID + "/files.zip"); w.Code != http.StatusOK {
		t.Errorf("zip of a partial run: %d", w.Code)
	}
}
