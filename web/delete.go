package web

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/ratelab/ratelab/storage"
)

// Deleting a run from the run list: GET /runs/{id}/delete asks, POST
// /runs/{id}/delete with confirm=yes deletes (a POST without it asks
// again). A queued or running run is not deleted: cancel it first.

// deleteConfirm is the question: the run, what goes with it, and the
// button that deletes.
func (s *Server) deleteConfirm(w http.ResponseWriter, r *http.Request) {
	run := s.headOr404(w, r)
	if run == nil {
		return
	}
	s.render(w, r, http.StatusOK, DeletePage(run))
}

// deleteRun deletes a finished run with its results and files, then
// answers 303 to the run list, which says so.
func (s *Server) deleteRun(w http.ResponseWriter, r *http.Request) {
	run := s.headOr404(w, r)
	if run == nil {
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		http.Redirect(w, r, "/runs/"+run.ID+"/delete", http.StatusSeeOther)
		return
	}
	if !storage.Final(run.Status) {
		s.errorPage(w, r, http.StatusConflict, "The run is still "+run.Status,
			"A queued or running sweep is not deleted: cancel it on its page first, then delete it.")
		return
	}
	err := s.store.Delete(r.Context(), run.ID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		s.runNotFound(w, r, run.ID)
		return
	case err != nil:
		s.internalError(w, r, "delete the run", err)
		return
	}
	s.pages.drop(run.ID)
	http.Redirect(w, r, "/runs?deleted="+url.QueryEscape(runName(*run)), http.StatusSeeOther)
}
