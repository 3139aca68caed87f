package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

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
	name, err := s.removeRuns(r.Context(), []storage.Run{*run})
	switch {
	case errors.Is(err, storage.ErrNotFound):
		s.runNotFound(w, r, run.ID)
		return
	case err != nil:
		s.internalError(w, r, "delete the run", err)
		return
	}
	http.Redirect(w, r, "/runs?deleted="+url.QueryEscape(name), http.StatusSeeOther)
}

// removeRuns deletes finished runs with their results, files, tags and
// values, all in one transaction (storage.DeleteRuns: all go, or none),
// drops their cached pages, removes the uploaded logs they replayed that
// no other run reads (removeUnreadLogs), and names them for the list's notice ("NAME",
// "3 runs: A, B, C"). The one delete of a run and of the ticked runs
// (runs_list.go).
func (s *Server) removeRuns(ctx context.Context, runs []storage.Run) (string, error) {
	ids := make([]string, len(runs))
	names := make([]string, len(runs))
	for i := range runs {
		ids[i], names[i] = runs[i].ID, runName(runs[i])
	}
	logs, err := s.store.LogsOf(ctx, ids)
	if err != nil {
		return "", err
	}
	if err := s.store.DeleteRuns(ctx, ids); err != nil {
		return "", err
	}
	for _, id := range ids {
		s.pages.drop(id)
	}
	s.removeUnreadLogs(ctx, logs)
	if len(runs) == 1 {
		return names[0], nil
	}
	return nRuns(len(runs)) + ": " + strings.Join(names, ", "), nil
}

// removeUnreadLogs removes those of logs (the logs of deleted replays)
// that no stored run reads any more: an uploaded log goes with the last
// run that replays it (a re-run reads its run's log), a --traces file
// stays (runner.Logs.Remove). The runs are deleted whatever happens here:
// a failure is logged, and lab serve's next start removes what is left.
func (s *Server) removeUnreadLogs(ctx context.Context, logs []string) {
	store := s.runner.Logs()
	if len(logs) == 0 || store == nil {
		return
	}
	read, err := s.store.LogsRead(ctx)
	if err != nil {
		s.log.Warn("deleted runs' logs kept", "err", err)
		return
	}
	for _, name := range logs {
		if read[name] {
			continue
		}
		if err := store.Remove(name); err != nil {
			s.log.Warn("deleted run's log kept", "log", name, "err", err)
		}
	}
}
