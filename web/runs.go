package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/format"
)

// The run pages: the list of runs, a run's permalink, its downloads, and
// cancelling or re-running it.

// getRun reads a run by the id in a URL, refusing malformed ids.
func (s *Server) getRun(r *http.Request, id string) (*storage.Run, error) {
	if !storage.ValidID(id) {
		return nil, storage.ErrNotFound
	}
	return s.store.Get(r.Context(), id)
}

// runOr404 reads the {id} run or answers 404 (or 500).
func (s *Server) runOr404(w http.ResponseWriter, r *http.Request) *storage.Run {
	return s.findRun(w, r, s.store.Get)
}

// headOr404 is runOr404 without the run's config (Run.Config is nil).
func (s *Server) headOr404(w http.ResponseWriter, r *http.Request) *storage.Run {
	return s.findRun(w, r, s.store.Head)
}

func (s *Server) findRun(w http.ResponseWriter, r *http.Request, read func(context.Context, string) (*storage.Run, error)) *storage.Run {
	id := chi.URLParam(r, "id")
	var (
		run *storage.Run
		err error
	)
	if storage.ValidID(id) {
		run, err = read(r.Context(), id)
	} else {
		err = storage.ErrNotFound
	}
	switch {
	case errors.Is(err, storage.ErrNotFound):
		if storage.ValidID(id) {
			s.pages.drop(id) // a deleted run's pages go at once
		}
		s.runNotFound(w, r, id)
		return nil
	case err != nil:
		s.internalError(w, r, "read the run", err)
		return nil
	}
	return run
}

func (s *Server) runNotFound(w http.ResponseWriter, r *http.Request, id string) {
	s.errorPage(w, r, http.StatusNotFound, "No such run", fmt.Sprintf("There is no run %q. Runs are listed at /runs.", format.Clip(id, 40)))
}

// runPage is a run's permalink. A finished run's page comes from the page
// cache (pagecache.go), rendered once and revalidated by ETag; a queued
// or running run's page is rendered on every request.
// viewParamError says what is wrong with a run page's point or format
// ("" when nothing is): a point is a whole number from 0, a format one of
// the deploy formats; either may be left out (or empty).
func viewParamError(v url.Values) string {
	if p := v.Get("point"); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 0 {
			return fmt.Sprintf("?point=%s is not a point: give a whole number from 0 (the results table's point column)", format.Clip(p, 40))
		}
	}
	if f := v.Get("format"); f != "" && deployFormatKey(f) == "" {
		return fmt.Sprintf("?format=%s is not a deploy format: one of %s", format.Clip(f, 40), strings.Join(deploy.Names(), ", "))
	}
	return ""
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	chosen := -1 // the default point
	if msg := viewParamError(r.URL.Query()); msg != "" {
		s.errorPage(w, r, http.StatusBadRequest, "Bad address", msg)
		return
	}
	if p, err := strconv.Atoi(r.URL.Query().Get("point")); err == nil && p >= 0 {
		chosen = p
	}
	// Checked a moment ago, and no run deleted since: no database at all.
	gen, now := s.store.Deletions(), time.Now()
	q := pageQuery(r)
	q.Point = 0 // the key's point field holds the point, resolved against the run below
	key := pageKey{id: chi.URLParam(r, "id"), point: chosen, format: deployFormatKey(r.URL.Query().Get("format")), view: q, engine: experiments.EngineVersion}
	if e := s.pages.fresh(key, gen, now); e != nil {
		s.servePage(w, r, e)
		return
	}
	run := s.headOr404(w, r)
	if run == nil {
		return
	}
	if run.Kind == storage.KindShadow {
		s.shadowRunPage(w, r) // shadow.go
		return
	}
	if chosen >= run.PointsTotal && run.PointsTotal > 0 {
		s.errorPage(w, r, http.StatusBadRequest, "Bad address",
			fmt.Sprintf("?point=%d: this run has points 0 to %d", chosen, run.PointsTotal-1))
		return
	}
	if !storage.Final(run.Status) {
		full := s.runOr404(w, r)
		if full == nil {
			return
		}
		d, err := s.runPageData(r, full, chosen)
		if err != nil {
			s.internalError(w, r, "read the run's results", err)
			return
		}
		s.render(w, r, http.StatusOK, RunPage(d))
		return
	}
	key.point = chosen
	if e := s.pages.get(key); e != nil {
		if e.stamp == runStamp(run) {
			s.pages.confirm(e, gen, now)
			s.servePage(w, r, e)
			return
		}
		s.pages.remove(e)
	}
	e, err := s.pages.do(r.Context(), key, func() (*pageEntry, error) {
		e, err := s.renderFinished(r, run.ID, chosen)
		if e != nil {
			e.gen, e.checked = gen, now // read before the render began
		}
		return e, err
	})
	switch {
	case errors.Is(err, errBusy):
		s.overloaded(w, r)
	case errors.Is(err, storage.ErrNotFound):
		s.runNotFound(w, r, run.ID)
	case err != nil:
		s.internalError(w, r, "render the run's page", err)
	default:
		s.servePage(w, r, e)
	}
}

// renderFinished renders a finished run's page for the page cache. The
// render of a done run (its whole result in memory) is a heavy request.
// It runs to its end even if the request that started it goes away,
// since other requests may wait for it.
func (s *Server) renderFinished(r *http.Request, id string, chosen int) (*pageEntry, error) {
	ctx := context.WithoutCancel(r.Context())
	run, err := s.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if storage.HasResults(run.Status) {
		if !s.heavy.enter(ctx) {
			return nil, errBusy
		}
		defer s.heavy.leave()
	}
	cacheable := storage.Final(run.Status)
	if run.RerunOf != "" {
		// The comparison with the original changes until it finishes.
		orig, err := s.store.Head(ctx, run.RerunOf)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return nil, err
		case !storage.Final(orig.Status):
			cacheable = false
		}
	}
	d, err := s.runPageData(r.WithContext(ctx), run, chosen)
	if err != nil {
		return nil, fmt.Errorf("read the run's results: %w", err)
	}
	var buf bytes.Buffer
	if err := RunPage(d).Render(ctx, &buf); err != nil {
		return nil, err
	}
	body := buf.Bytes()
	return &pageEntry{body: body, etag: etagOf(body), stamp: runStamp(run), cacheable: cacheable}, nil
}

// servePage sends a rendered page with its ETag; a GET or HEAD whose
// If-None-Match names it gets 304 Not Modified. Browsers revalidate on
// every view (no-cache), so a deleted run is never shown from their cache.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request, e *pageEntry) {
	h := w.Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", e.etag)
	if etagMatch(r.Header.Get("If-None-Match"), e.etag) {
		w.WriteHeader(http.StatusNotModified) // compressResponses names the client's encoding
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	body := e.body
	if acceptsGzip(r.Header.Get("Accept-Encoding")) && len(body) >= minCompressBytes {
		body = e.gzip() // compressed once, kept with the page
		h.Set("Content-Encoding", "gzip")
		h.Set("ETag", gzipETag(e.etag))
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// etagMatch reports whether an If-None-Match header names etag (weak
// comparison, as RFC 9110 wants for If-None-Match) or is "*".
func etagMatch(header, etag string) bool {
	for header != "" {
		var tag string
		tag, header, _ = strings.Cut(header, ",")
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}

// runFile sends one output file, byte for byte as stored, read from the
// store a chunk at a time (storage.ChunkBytes), so a download holds one
// chunk in memory however large the file.
func (s *Server) runFile(w http.ResponseWriter, r *http.Request) {
	run := s.headOr404(w, r)
	if run == nil {
		return
	}
	name := chi.URLParam(r, "name")
	f, err := s.store.OpenFile(r.Context(), run.ID, name)
	if errors.Is(err, storage.ErrNotFound) {
		s.errorPage(w, r, http.StatusNotFound, "No such file", fmt.Sprintf("Run %s has no file %q (yet).", run.ID, format.Clip(name, 80)))
		return
	}
	if err != nil {
		s.internalError(w, r, "read the file", err)
		return
	}
	ctype := "text/csv; charset=utf-8"
	if strings.HasSuffix(f.Name, ".json") {
		ctype = "application/json"
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", attachment(DownloadName(run.ID, f.Name)))
	h.Set("Content-Length", strconv.Itoa(f.Bytes))
	h.Set("X-Checksum-Sha256", f.SHA256)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	// Past the headers an error can only cut the body short, which the
	// client sees against Content-Length.
	if _, err := io.Copy(w, f); err != nil && r.Context().Err() == nil {
		s.log.Warn("download ended early", "run", run.ID, "file", f.Name, "err", err)
	}
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	run := s.runOr404(w, r)
	if run == nil {
		return
	}
	s.runner.Cancel(run.ID)
	http.Redirect(w, r, "/runs/"+run.ID, http.StatusSeeOther)
}

// rerunRun runs a stored config again; the new run's page compares every
// file's sha256 with the original's.
func (s *Server) rerunRun(w http.ResponseWriter, r *http.Request) {
	run := s.runOr404(w, r)
	if run == nil {
		return
	}
	if run.Kind == storage.KindShadow {
		s.rerunShadow(w, r, run) // shadow.go
		return
	}
	cfg, err := document.DecodeConfig(run.Config)
	if err != nil {
		s.errorPage(w, r, http.StatusUnprocessableEntity, "Cannot re-run", "The stored config no longer decodes: "+err.Error())
		return
	}
	next, err := s.runner.Submit(r.Context(), cfg, rerunName(*run), run.ID)
	if err != nil {
		status := submitStatus(w, err)
		notice := "The re-run could not be queued: " + err.Error()
		switch status {
		case http.StatusTooManyRequests:
			notice = fmt.Sprintf("The queue of waiting sweeps is full; press Re-run again in %d seconds.", RetryAfterSeconds)
		case http.StatusServiceUnavailable:
			notice = "The lab is shutting down and takes no new sweeps."
		default:
			s.log.Error("queue re-run", "run", run.ID, "err", err)
		}
		d, derr := s.runPageData(r, run, -1)
		if derr != nil {
			s.internalError(w, r, "read the run's results", derr)
			return
		}
		d.Notice = notice
		s.render(w, r, status, RunPage(d))
		return
	}
	http.Redirect(w, r, "/runs/"+next.ID, http.StatusSeeOther)
}

// rerunName names a re-run after its original, "re-run of NAME", so the
// run list tells them apart; a re-run of a re-run keeps the one prefix.
func rerunName(run storage.Run) string {
	name := runName(run)
	if strings.HasPrefix(name, "re-run of ") {
		return name
	}
	return "re-run of " + name
}
