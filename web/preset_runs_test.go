package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/storage"
)

// presetRuns is the package's one run of each preset, in a lab of its own
// that the tests reading preset runs share (TestBrowserPresetPages,
// TestPresetPagesOpenOnAnswer; they only read them): each preset runs
// once, when a test first asks for it, instead of once per test.
// TestMain closes it.
var presetRuns struct {
	once  sync.Once
	lab   *lab
	close func() error
	dir   string
	err   error

	mu   sync.Mutex
	runs map[string]*presetRun
}

// presetRun is one preset's run in presetRuns.
type presetRun struct {
	once sync.Once
	id   string
	err  error
}

// presetLab returns the shared lab of presetRuns, its wait reporting to t.
func presetLab(t *testing.T) *lab {
	t.Helper()
	p := &presetRuns
	p.once.Do(func() {
		if p.dir, p.err = os.MkdirTemp("", "ratelab-presets-"); p.err != nil {
			return
		}
		p.lab, p.close, p.err = openLab(filepath.Join(p.dir, "lab.db"), true, 8, Options{})
	})
	if p.err != nil {
		t.Fatalf("the shared preset lab: %v", p.err)
	}
	l := *p.lab
	l.t = t
	return &l
}

// presetRunID returns the id of preset name's done run in presetLab,
// running it on first use.
func presetRunID(t *testing.T, name string) string {
	t.Helper()
	l := presetLab(t)
	p := &presetRuns
	p.mu.Lock()
	if p.runs == nil {
		p.runs = map[string]*presetRun{}
	}
	r := p.runs[name]
	if r == nil {
		r = &presetRun{}
		p.runs[name] = r
	}
	p.mu.Unlock()
	r.once.Do(func() { r.id, r.err = runPreset(l, name) })
	if r.err != nil {
		t.Fatalf("preset %s: %v", name, r.err)
	}
	return r.id
}

// runPreset posts preset name's document to the API as a user would and
// waits for the run to be done.
func runPreset(l *lab, name string) (string, error) {
	p, err := presets.Get(name)
	if err != nil {
		return "", err
	}
	w := l.postJSON("/api/runs", p.JSON)
	if w.Code != http.StatusAccepted {
		return "", fmt.Errorf("POST /api/runs: %d %s", w.Code, w.Body)
	}
	var run APIRun
	if err := json.Unmarshal(w.Body.Bytes(), &run); err != nil {
		return "", err
	}
	r, err := pollFinal(l.store, run.ID, 60*time.Second)
	if err != nil {
		return "", err
	}
	if r.Status != storage.StatusDone {
		return "", fmt.Errorf("run %s: %s %s", run.ID, r.Status, r.Error)
	}
	return run.ID, nil
}

// closePresetRuns closes presetRuns' lab and removes its folder (TestMain).
func closePresetRuns() error {
	p := &presetRuns
	if p.close == nil {
		return nil
	}
	err := p.close()
	os.RemoveAll(p.dir)
	return err
}
