package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
	"github.com/ratelab/ratelab/web/format"
)

// recentRuns is how many runs the home page lists.
const recentRuns = 12

// home shows the new-sweep form: empty, from a preset (?preset=NAME) or
// from a stored run (?from=ID), beside the recent runs. A run with a chain
// limiter, which the form cannot show, goes to the document editor.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	d := HomeData{Form: form.Default(), Presets: presets.All()}
	status := http.StatusOK
	q := r.URL.Query()
	switch {
	case q.Get("preset") != "":
		cfg, err := presets.Config(q.Get("preset"))
		if err != nil {
			status, d.Notice = http.StatusNotFound, err.Error()
			break
		}
		d.Form, d.Preset = form.FromConfig(cfg), q.Get("preset")
	case q.Get("from") != "":
		id := q.Get("from")
		run, err := s.getRun(r, id)
		if err != nil {
			status, d.Notice = http.StatusNotFound, fmt.Sprintf("no run %q to start from", format.Clip(id, 40))
			break
		}
		if run.Kind == storage.KindShadow { // a log replay's form (shadow.go)
			http.Redirect(w, r, "/shadow?from="+run.ID, http.StatusSeeOther)
			return
		}
		cfg, err := document.DecodeConfig(run.Config)
		if err != nil {
			status, d.Notice = http.StatusUnprocessableEntity, "the stored config of run "+id+" no longer decodes: "+err.Error()
			break
		}
		if form.HasChain(cfg) {
			http.Redirect(w, r, "/calculus/edit/"+run.ID, http.StatusSeeOther)
			return
		}
		d.Form, d.From = form.FromConfig(cfg), id
	}
	s.homePage(w, r, status, d)
}

// homePage renders the new-sweep page with the recent runs.
func (s *Server) homePage(w http.ResponseWriter, r *http.Request, status int, d HomeData) {
	if d.Presets == nil {
		d.Presets = presets.All()
	}
	runs, _, err := s.store.List(r.Context(), recentRuns, 0)
	if err != nil {
		s.log.Error("list recent runs", "err", err)
	}
	d.Recent = runs
	if d.Form != nil {
		d.Form.Traces = s.runner.TraceNames()
		if !d.Form.HasErrors() {
			d.Form.CountText = d.Form.Count().Text // the live count as served; app.js keeps it live
		}
	}
	s.render(w, r, status, HomePage(d))
}

// createRun takes the new-sweep form: it adds or removes rows, or checks the
// sweep and queues it. Bad input comes back as the same form with the
// errors beside their fields (422, or 413 for a trace past the limit); a
// full queue gives 429 with Retry-After and the form as typed.
func (s *Server) createRun(w http.ResponseWriter, r *http.Request) {
	release := s.admitBody(w, r, form.MaxFormBytes, formWeight)
	if release == nil {
		return
	}
	defer release()
	post := form.Read(w, r)
	d := HomeData{Form: post.Form}
	if s.refusedBody(w, r, post.ReadErr) {
		return
	}
	if post.ReadErr != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(post.ReadErr, &tooLarge) {
			d.Notice = fmt.Sprintf("The form is larger than %s, the limit (a trace may be at most %s). What was read before the limit is kept below.",
				format.Bytes(form.MaxFormBytes), format.Bytes(form.MaxTraceBytes))
			s.homePage(w, r, http.StatusRequestEntityTooLarge, d)
			return
		}
		d.Notice = "The form could not be read: " + post.ReadErr.Error()
		s.homePage(w, r, http.StatusBadRequest, d)
		return
	}
	if post.Edit() {
		s.homePage(w, r, http.StatusOK, d)
		return
	}
	cfg, tooLarge := post.Config()
	if cfg == nil {
		status := http.StatusUnprocessableEntity
		if tooLarge {
			status = http.StatusRequestEntityTooLarge
		}
		s.homePage(w, r, status, d)
		return
	}
	run, err := s.runner.Submit(r.Context(), cfg, cfg.Name, "")
	if err != nil {
		switch status := submitStatus(w, err); status {
		case http.StatusTooManyRequests:
			d.Notice = fmt.Sprintf("The lab is busy: the queue of waiting sweeps is full. Nothing was lost — submit again in %d seconds.", RetryAfterSeconds)
			s.homePage(w, r, status, d)
		case http.StatusServiceUnavailable:
			d.Notice = "The lab is shutting down and takes no new sweeps."
			s.homePage(w, r, status, d)
		case http.StatusUnprocessableEntity:
			d.Notice = err.Error()
			s.homePage(w, r, status, d)
		default:
			s.internalError(w, r, "queue the sweep", err)
		}
		return
	}
	http.Redirect(w, r, "/runs/"+run.ID, http.StatusSeeOther)
}
