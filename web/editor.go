package web

import (
	"fmt"
	"net/http"

	"github.com/ratelab/ratelab/experiments"
)

// The config document editor: a config as JSON (the same document lab run
// --config and POST /api/runs take), to edit and run as a new sweep. It
// edits what the new-sweep form cannot express: chains.

// EditorPage is a config document in the editor.
type EditorPage struct {
	Title, Intro string
	Back, Config string
}

// editRun shows a stored run's config document in the editor.
func (s *Server) editRun(w http.ResponseWriter, r *http.Request) {
	run := s.runOr404(w, r)
	if run == nil {
		return
	}
	s.render(w, r, http.StatusOK, Editor(EditorPage{Title: "Edit " + runName(*run) + " as a config document", Back: "/runs/" + run.ID, Config: string(run.Config),
		Intro: "The new-sweep form cannot express chains: edit the document (the same JSON lab run --config and POST /api/runs take) and run it as a new sweep."}))
}

// runDocument queues a config document posted from the editor.
func (s *Server) runDocument(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxAPIBytes)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, r, http.StatusBadRequest, "The form could not be read", err.Error())
		return
	}
	cfg, err := experiments.DecodeConfig([]byte(r.PostForm.Get("config")))
	if err != nil {
		s.errorPage(w, r, http.StatusUnprocessableEntity, "This config cannot run", err.Error())
		return
	}
	run, err := s.runner.Submit(r.Context(), cfg, cfg.Name, "")
	if err != nil {
		switch status := submitStatus(w, err); status {
		case http.StatusTooManyRequests:
			s.errorPage(w, r, status, "The lab is busy", fmt.Sprintf("The queue of waiting sweeps is full: go back and try again in %d seconds.", RetryAfterSeconds))
		case http.StatusServiceUnavailable:
			s.errorPage(w, r, status, "The lab is shutting down", "The lab is shutting down and takes no new sweeps.")
		default:
			s.internalError(w, r, "queue the chain check", err)
		}
		return
	}
	http.Redirect(w, r, "/runs/"+run.ID, http.StatusSeeOther)
}
