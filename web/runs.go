package web

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/ratelab/ratelab/experiments"
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
	id := chi.URLParam(r, "id")
	run, err := s.getRun(r, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		s.errorPage(w, r, http.StatusNotFound, "No such run", fmt.Sprintf("There is no run %q. Runs are listed at /runs.", format.Clip(id, 40)))
		return nil
	case err != nil:
		s.internalError(w, r, "read the run", err)
		return nil
	}
	return run
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	page, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	runs, total, err := s.store.List(r.Context(), PageSize, (page-1)*PageSize)
	if err != nil {
		s.internalError(w, r, "list runs", err)
		return
	}
	last := max(1, (total+PageSize-1)/PageSize)
	status := http.StatusOK
	if page > last {
		status = http.StatusNotFound
	}
	s.render(w, r, status, RunsPage(RunsData{Runs: runs, Total: total, Page: page, Last: last}))
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	run := s.runOr404(w, r)
	if run == nil {
		return
	}
	chosen := -1
	if p, err := strconv.Atoi(r.URL.Query().Get("point")); err == nil {
		chosen = p
	}
	d, err := s.runPageData(r, run, chosen)
	if err != nil {
		s.internalError(w, r, "read the run's results", err)
		return
	}
	s.render(w, r, http.StatusOK, RunPage(d))
}

// runFile sends one output file, byte for byte as stored.
func (s *Server) runFile(w http.ResponseWriter, r *http.Request) {
	run := s.runOr404(w, r)
	if run == nil {
		return
	}
	name := chi.URLParam(r, "name")
	f, err := s.store.File(r.Context(), run.ID, name)
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
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	h.Set("Content-Length", strconv.Itoa(len(f.Data)))
	h.Set("X-Checksum-Sha256", f.SHA256)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(f.Data)
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
	cfg, err := experiments.DecodeConfig(run.Config)
	if err != nil {
		s.errorPage(w, r, http.StatusUnprocessableEntity, "Cannot re-run", "The stored config no longer decodes: "+err.Error())
		return
	}
	next, err := s.runner.Submit(r.Context(), cfg, run.Name, run.ID)
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
