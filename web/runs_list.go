package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/storage/runquery"
	"github.com/ratelab/ratelab/web/format"
)

// The run list (/runs): the query, tags, value columns and sort of its
// address (runs_query.go), tags and a note per run (/runs/{id}/labels),
// and deleting the ticked runs after a confirmation (/runs/delete).

// runsList is a list as its address asks: the runs of the page with
// their values, or why it cannot be shown. badPath names the parameter at
// fault ("q", "sort", ...; "" when nothing is), msg says what is wrong.
type runsList struct {
	data    RunsData
	status  int
	badPath string
	msg     string
	query   bool // the fault is the query's text
}

func (s *Server) readRunsList(ctx context.Context, v url.Values) (*runsList, error) {
	l := &runsList{status: http.StatusOK}
	view, path, msg := runsView(v)
	l.data.View = view
	if path != "" {
		l.status, l.badPath, l.msg = http.StatusBadRequest, path, msg
		view.Page = 1
		l.data.View = view
	}
	cols, err := s.store.ValueColumns(ctx)
	if err != nil {
		return nil, err
	}
	l.data.Columns = cols
	l.data.textColumn = map[string]bool{"seed": true} // a uint64: exact as text
	for _, c := range cols {
		if experiments.IsClassKey(c.Key) {
			continue // a class's value (a number); PointColumn would want the config
		}
		if pc := experiments.PointColumn(nil, c.Key, ""); pc != nil && pc.Format == experiments.Text {
			l.data.textColumn[c.Key] = true // limiter, type, load, server, policy, bound_note
		}
	}
	if msg := l.data.View.checkCols(cols); msg != "" && l.msg == "" {
		l.status, l.badPath, l.msg = http.StatusBadRequest, "cols", msg
	}
	page := l.data.View.Page
	// No list has a billion pages: the offset stays far from overflow.
	runs, total, err := s.store.ListBy(ctx, l.data.View.List, PageSize, (min(page, 1e9)-1)*PageSize)
	var qe *runquery.Error
	switch {
	case errors.As(err, &qe):
		l.status, l.badPath, l.msg, l.query = http.StatusBadRequest, "q", qe.Error(), true
		return l, nil
	case errors.Is(err, storage.ErrBadQuery):
		msg := strings.TrimPrefix(err.Error(), storage.ErrBadQuery.Error()+": ")
		path := "sort"
		switch {
		case strings.HasPrefix(msg, "status"):
			path = "status"
		case strings.Contains(msg, "tag"):
			path = "tag"
		}
		l.status, l.badPath, l.msg = http.StatusBadRequest, path, msg
		return l, nil
	case err != nil:
		return nil, err
	}
	ids := make([]string, len(runs))
	for i := range runs {
		ids[i] = runs[i].ID
	}
	if l.data.Values, err = s.store.Values(ctx, ids, l.data.View.Cols); err != nil {
		return nil, err
	}
	l.data.Runs, l.data.Total, l.data.Page = runs, total, page
	l.data.Last = max(1, (total+PageSize-1)/PageSize)
	if page > l.data.Last && l.status == http.StatusOK {
		l.status = http.StatusNotFound // the page says it is past the end
	}
	return l, nil
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	l, err := s.readRunsList(r.Context(), r.URL.Query())
	if err != nil {
		s.internalError(w, r, "list runs", err)
		return
	}
	d := l.data
	d.Deleted = format.Clip(r.URL.Query().Get("deleted"), 200)
	if l.query {
		d.QueryError = l.msg
	} else if l.msg != "" {
		d.Notice = "The list cannot be shown so: " + l.msg
	}
	if d.Page == 0 {
		d.Page, d.Last = 1, 1
	}
	s.render(w, r, l.status, RunsPage(d))
}

// joinCols is ?cols= of a list.
func joinCols(cols []string) string { return strings.Join(cols, ",") }

// clipNote is a note's first line, clipped for the list.
func clipNote(note string) string {
	line, _, more := strings.Cut(note, "\n")
	if utf8.RuneCountInString(line) > 120 {
		return format.Clip(line, 120)
	}
	if more {
		return line + " …"
	}
	return line
}

// nRuns is "1 run" or "3 runs".
func nRuns(n int) string {
	if n == 1 {
		return "1 run"
	}
	return strconv.Itoa(n) + " runs"
}

// labelsURL is a run's tags and note form, returning to back.
func labelsURL(id, back string) string {
	return "/runs/" + id + "/labels?back=" + url.QueryEscape(back)
}

// listBack is a return address that is a run list's or a run page's
// ("/runs" when it is neither), so the form never sends a browser
// elsewhere.
func listBack(back string) string {
	if back == "/runs" || strings.HasPrefix(back, "/runs?") && !strings.ContainsAny(back, "\\\r\n") {
		return back
	}
	if id, ok := strings.CutPrefix(back, "/runs/"); ok && storage.ValidID(id) {
		return back
	}
	return "/runs"
}

// labelsPage is a run's tags and note form.
func (s *Server) labelsPage(w http.ResponseWriter, r *http.Request) {
	run := s.headOr404(w, r)
	if run == nil {
		return
	}
	tags, note, err := s.store.Labels(r.Context(), run.ID)
	if err != nil {
		s.internalError(w, r, "read the run's tags", err)
		return
	}
	s.render(w, r, http.StatusOK, LabelsPage(LabelsData{Run: run, Tags: strings.Join(tags, " "), Note: note, Back: listBack(r.URL.Query().Get("back"))}))
}

// saveLabels stores a run's tags and note from its form: 303 back to the
// list, or the form again with each error at its input (422), the text
// as given.
func (s *Server) saveLabels(w http.ResponseWriter, r *http.Request) {
	run := s.headOr404(w, r)
	if run == nil {
		return
	}
	d := LabelsData{Run: run, Tags: r.PostFormValue("tags"), Note: r.PostFormValue("note"), Back: listBack(r.PostFormValue("back"))}
	tags, terr := storage.CleanTags(storage.SplitTags(d.Tags))
	note, nerr := storage.CheckNote(d.Note)
	if terr != nil || nerr != nil {
		if terr != nil {
			d.TagsError = labelMessage(terr)
		}
		if nerr != nil {
			d.NoteError = labelMessage(nerr)
		}
		s.render(w, r, http.StatusUnprocessableEntity, LabelsPage(d))
		return
	}
	err := s.store.SetLabels(r.Context(), run.ID, tags, note)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		s.runNotFound(w, r, run.ID)
		return
	case err != nil:
		s.internalError(w, r, "store the run's tags", err)
		return
	}
	s.pages.drop(run.ID) // its page shows them
	http.Redirect(w, r, d.Back, http.StatusSeeOther)
}

// labelMessage is a storage.ErrBadLabel error as said beside its input.
func labelMessage(err error) string {
	return strings.TrimPrefix(err.Error(), storage.ErrBadLabel.Error()+": ")
}

// maxBulkRuns is the most runs one delete asks about.
const maxBulkRuns = 200

// tickedRuns reads the ticked runs' ids (runs=, repeated or
// comma-separated): the finished runs, those still queued or running, and
// the ids that name no run; an error message for a list too long.
func (s *Server) tickedRuns(ctx context.Context, raw []string) (DeleteRunsData, string, error) {
	var d DeleteRunsData
	var ids []string
	for _, v := range raw {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) > maxBulkRuns {
		return d, fmt.Sprintf("%d runs ticked; delete at most %d at once.", len(ids), maxBulkRuns), nil
	}
	for _, id := range ids {
		if !storage.ValidID(id) {
			d.Missing = append(d.Missing, format.Clip(id, 20))
			continue
		}
		run, err := s.store.Head(ctx, id)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			d.Missing = append(d.Missing, id)
		case err != nil:
			return d, "", err
		case storage.Final(run.Status):
			d.Runs = append(d.Runs, *run)
		default:
			d.Running = append(d.Running, *run)
		}
	}
	return d, "", nil
}

// deleteRunsConfirm asks before deleting the ticked runs (GET
// /runs/delete?runs=a&runs=b, the list's "Delete selected runs").
func (s *Server) deleteRunsConfirm(w http.ResponseWriter, r *http.Request) {
	d, msg, err := s.tickedRuns(r.Context(), r.URL.Query()["runs"])
	if err != nil {
		s.internalError(w, r, "read the ticked runs", err)
		return
	}
	if msg != "" {
		s.errorPage(w, r, http.StatusBadRequest, "Too many runs", msg)
		return
	}
	status := http.StatusOK
	if len(d.Runs) == 0 {
		status = http.StatusBadRequest // nothing ticked, or nothing that can go
	}
	s.render(w, r, status, DeleteRunsPage(d))
}

// deleteRuns deletes the confirmed runs (POST /runs/delete, confirm=yes)
// all in one transaction, then answers 303 to the list, which names them.
// Without confirm it asks; a ticked run still queued or running is a 409,
// and none is deleted.
func (s *Server) deleteRuns(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, r, http.StatusBadRequest, "Bad form", err.Error())
		return
	}
	d, msg, err := s.tickedRuns(r.Context(), r.PostForm["runs"])
	if err != nil {
		s.internalError(w, r, "read the ticked runs", err)
		return
	}
	if msg != "" {
		s.errorPage(w, r, http.StatusBadRequest, "Too many runs", msg)
		return
	}
	if r.PostFormValue("confirm") != "yes" || len(d.Missing) > 0 {
		status := http.StatusOK
		if len(d.Missing) > 0 {
			status = http.StatusNotFound
		}
		s.render(w, r, status, DeleteRunsPage(d))
		return
	}
	if len(d.Running) > 0 {
		s.render(w, r, http.StatusConflict, DeleteRunsPage(d))
		return
	}
	if len(d.Runs) == 0 {
		http.Redirect(w, r, "/runs", http.StatusSeeOther)
		return
	}
	names, err := s.removeRuns(r.Context(), d.Runs)
	if errors.Is(err, storage.ErrNotFound) {
		s.errorPage(w, r, http.StatusNotFound, "Not deleted", "A ticked run was deleted meanwhile, so none was: tick them again. "+err.Error())
		return
	}
	if err != nil {
		s.internalError(w, r, "delete the runs", err)
		return
	}
	http.Redirect(w, r, "/runs?deleted="+url.QueryEscape(names), http.StatusSeeOther)
}
