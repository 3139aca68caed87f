package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/static"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
	"github.com/ratelab/ratelab/web/format"
	"golang.org/x/net/html"
)

type lab struct {
	t      *testing.T
	path   string // the database file
	store  *storage.Store
	runner *runner.Runner
	srv    *Server
}

// newLab opens a real SQLite file in a temporary folder. With start false
// the runner takes submissions but never runs them (a queue that stays
// full, runs that stay queued).
func newLab(t *testing.T, start bool, queue int) *lab {
	t.Helper()
	return newLabWith(t, start, queue, Options{})
}

// newLabWith is newLab with Options (Logger and Done are set here).
func newLabWith(t *testing.T, start bool, queue int, opt Options) *lab {
	t.Helper()
	l, closeLab, err := openLab(filepath.Join(t.TempDir(), "lab.db"), start, queue, opt)
	if err != nil {
		t.Fatal(err)
	}
	l.t = t
	t.Cleanup(func() {
		if err := closeLab(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// openLab opens a lab on the SQLite file at path, without a test (its t
// is nil: set it before calling wait); closeLab stops its runner and
// closes its store.
func openLab(path string, start bool, queue int, opt Options) (l *lab, closeLab func() error, err error) {
	ctx := context.Background()
	st, err := storage.Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rn := runner.New(st, runner.Options{Workers: 1, Queue: queue, Logger: log, EngineWorkers: 2})
	if start {
		rn.Start()
	}
	done := make(chan struct{})
	closeLab = func() error {
		close(done)
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var errs []error
		if err := rn.Shutdown(sctx); err != nil {
			errs = append(errs, fmt.Errorf("runner shutdown: %w", err))
		}
		if err := st.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close store: %w", err))
		}
		return errors.Join(errs...)
	}
	opt.Logger, opt.Done = log, done
	return &lab{path: path, store: st, runner: rn, srv: New(st, rn, opt)}, closeLab, nil
}

func (l *lab) do(req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	l.srv.ServeHTTP(w, req)
	return w
}

func (l *lab) get(path string) *httptest.ResponseRecorder {
	return l.do(httptest.NewRequest(http.MethodGet, path, nil))
}

func (l *lab) postForm(path string, v url.Values) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return l.do(req)
}

func (l *lab) postJSON(path string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return l.do(req)
}

// wait polls the store until the run reaches a final status.
func (l *lab) wait(id string) *storage.Run {
	l.t.Helper()
	run, err := pollFinal(l.store, id, 60*time.Second)
	if err != nil {
		l.t.Fatal(err)
	}
	return run
}

// pollFinal polls the store until the run reaches a final status, for at
// most limit.
func pollFinal(st *storage.Store, id string, limit time.Duration) (*storage.Run, error) {
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		run, err := st.Get(context.Background(), id)
		if err != nil {
			return nil, err
		}
		if storage.Final(run.Status) {
			return run, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("run %s still %s after %v", id, run.Status, limit)
		}
	}
}

// formValuesOf encodes a form the way the browser posts it, with the
// Run button pressed.
func formValuesOf(f *form.Sweep) url.Values {
	v := f.Values()
	v.Set("action", "run")
	return v
}

func presetValues(t *testing.T, name string) (url.Values, *experiments.Config) {
	t.Helper()
	cfg, err := presets.Config(name)
	if err != nil {
		t.Fatal(err)
	}
	return formValuesOf(form.FromConfig(cfg)), cfg
}

func runIDFrom(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	if w.Code != http.StatusSeeOther {
		t.Fatalf("status %d, want 303; body:\n%s", w.Code, format.Clip(w.Body.String(), 3000))
	}
	loc := w.Header().Get("Location")
	id, ok := strings.CutPrefix(loc, "/runs/")
	if !ok || !storage.ValidID(id) {
		t.Fatalf("Location %q is not a run permalink", loc)
	}
	return id
}

// inputBlock returns the HTML of the field wrapper around an input key.
func inputBlock(t *testing.T, body, key string) string {
	t.Helper()
	id := form.InputID(key)
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no input %s in the page", id)
	}
	start := strings.LastIndex(body[:i], `<div class="field`)
	end := strings.Index(body[i:], "</div>")
	return body[start : i+end]
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;").Replace(s)
}

func must(f *form.Sweep) []byte {
	doc, cfg := f.Document()
	if cfg == nil {
		panic(fmt.Sprint(f.Problems))
	}
	return doc
}

// checkScripts parses a page and fails on any script other than app.js (at
// its hashed URL), any inline script text, and any on* event attribute.
func checkScripts(t *testing.T, path, body string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(body))
	scripts := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Fatalf("%s: %v", path, z.Err())
			}
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		for _, a := range tok.Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				t.Errorf("%s: <%s> has an event handler attribute %s", path, tok.Data, a.Key)
			}
		}
		if tok.Data != "script" {
			continue
		}
		scripts++
		src := ""
		for _, a := range tok.Attr {
			if a.Key == "src" {
				src = a.Val
			}
		}
		if src != static.URL("app.js") {
			t.Errorf("%s: unexpected script (src %q)", path, src)
		}
		if z.Next() == html.TextToken && strings.TrimSpace(string(z.Text())) != "" {
			t.Errorf("%s: a script with inline text", path)
		}
	}
	if scripts != 1 {
		t.Errorf("%s: %d scripts, want 1 (app.js, which loads echarts where there are charts)", path, scripts)
	}
}

// multipartForm builds a multipart post of v plus one file.
func multipartForm(t *testing.T, v url.Values, fileKey string, data []byte) *http.Request {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k := range v {
		if err := mw.WriteField(k, v.Get(k)); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := mw.CreateFormFile(fileKey, "trace.csv")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/runs", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return req
}
