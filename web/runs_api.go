package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/format"
)

// APIRuns is GET /api/runs: one page of the run list as the page /runs
// shows it, with the same address (?q=, ?tag=, ?status=, ?sort=, ?dir=,
// ?cols=, ?page=: runs_query.go).
type APIRuns struct {
	Runs  []*APIRun `json:"runs"`
	Total int       `json:"total"` // runs the filters keep
	Page  int       `json:"page"`
	Pages int       `json:"pages"`
	// Columns are the value columns of Values; Available every column
	// some run has a value for, parameters first.
	Columns   []string         `json:"columns"`
	Available []APIValueColumn `json:"available_columns"`
}

// APIValueColumn is a value column and its kind ("param" or "metric").
type APIValueColumn struct {
	Key  string `json:"key"`
	Kind string `json:"kind"`
}

// APIValuesFrom is the point a run's values are of: its best overall
// setting's ("answer": the run has objectives) or its best point's
// ("best-point": highest goodput_rps, then lowest sojourn_p99_ms, then the
// earliest point).
type APIValuesFrom struct {
	Point int    `json:"point"`
	Basis string `json:"basis"`
}

func nonNilTags(tags []string) []string {
	if tags == nil {
		return []string{}
	}
	return tags
}

// apiListRuns answers GET /api/runs as the run list shows it: a bad
// query, page, sort, direction, status, tag or column is a 400 naming the
// parameter (the query's message gives the position in it).
func (s *Server) apiListRuns(w http.ResponseWriter, r *http.Request) {
	l, err := s.readRunsList(r.Context(), r.URL.Query())
	if err != nil {
		s.log.Error("api: list runs", "err", err)
		problem(w, r, http.StatusInternalServerError, "list the runs: "+err.Error(), nil)
		return
	}
	if l.msg != "" {
		problem(w, r, http.StatusBadRequest, l.msg, field.List{{Path: l.badPath, Msg: l.msg}})
		return
	}
	d := l.data
	out := APIRuns{Runs: make([]*APIRun, len(d.Runs)), Total: d.Total, Page: d.Page, Pages: d.Last, Columns: d.View.Cols, Available: []APIValueColumn{}}
	if out.Columns == nil {
		out.Columns = []string{}
	}
	for _, c := range d.Columns {
		out.Available = append(out.Available, APIValueColumn{Key: c.Key, Kind: c.Kind})
	}
	ids := make([]string, len(d.Runs))
	for i := range d.Runs {
		ids[i] = d.Runs[i].ID
	}
	sums, err := s.store.Summaries(r.Context(), ids)
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "list the runs: "+err.Error(), nil)
		return
	}
	for i := range d.Runs {
		run := apiRun(&d.Runs[i])
		if sum, ok := sums[run.ID]; ok && sum.Point >= 0 {
			run.ValuesFrom = &APIValuesFrom{Point: sum.Point, Basis: sum.Basis}
		}
		for key, v := range d.Values[run.ID] {
			if run.Values == nil {
				run.Values = map[string]any{}
			}
			if v.HasNum && !d.textColumn[key] {
				run.Values[key] = v.Num
			} else {
				run.Values[key] = v.Text
			}
		}
		out.Runs[i] = run
	}
	writeJSON(w, http.StatusOK, out)
}

// APILabels is PATCH /api/runs/{id}'s body: the run's tags and note, each
// replaced when given (absent: kept).
type APILabels struct {
	Tags *[]string `json:"tags"`
	Note *string   `json:"note"`
}

// maxLabelsBody is the largest PATCH body read.
const maxLabelsBody = 64 << 10

// apiPatchRun sets a run's tags and note and answers the run as GET
// /api/runs/{id} would, without its files and manifest.
func (s *Server) apiPatchRun(w http.ResponseWriter, r *http.Request) {
	run := s.apiRunOr404(w, r)
	if run == nil {
		return
	}
	if msg := jsonBody(r); msg != "" {
		problem(w, r, http.StatusUnsupportedMediaType, msg, nil)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxLabelsBody+1))
	if err != nil {
		problem(w, r, http.StatusBadRequest, "read the body: "+err.Error(), nil)
		return
	}
	if len(body) > maxLabelsBody {
		problem(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is past %d bytes", maxLabelsBody), nil)
		return
	}
	var in APILabels
	if err := json.Unmarshal(body, &in); err != nil {
		problem(w, r, http.StatusBadRequest, "the body is no JSON object of tags and note: "+err.Error(), nil)
		return
	}
	tags, note, err := s.store.Labels(r.Context(), run.ID)
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "read the run's tags: "+err.Error(), nil)
		return
	}
	var errs field.List
	if in.Tags != nil {
		if tags, err = storage.CleanTags(*in.Tags); err != nil {
			errs = append(errs, field.Error{Path: "tags", Msg: labelMessage(err)})
		}
	}
	if in.Note != nil {
		if note, err = storage.CheckNote(*in.Note); err != nil {
			errs = append(errs, field.Error{Path: "note", Msg: labelMessage(err)})
		}
	}
	if len(errs) > 0 {
		problem(w, r, http.StatusUnprocessableEntity, errs[0].Msg, errs)
		return
	}
	if err := s.store.SetLabels(r.Context(), run.ID, tags, note); err != nil {
		problem(w, r, http.StatusInternalServerError, "store the run's tags: "+err.Error(), nil)
		return
	}
	s.pages.drop(run.ID) // its page shows them
	out := apiRun(run)
	out.Tags, out.Note = nonNilTags(tags), note
	writeJSON(w, http.StatusOK, out)
}

// apiDeleteRun is DELETE /api/runs/{id}: a finished run goes with its
// results, files, tags and note (and an uploaded log no other run reads),
// as its page's delete does; 204. A queued or running run is a 409
// problem (cancel it first: POST /runs/{id}/cancel), no run a 404.
func (s *Server) apiDeleteRun(w http.ResponseWriter, r *http.Request) {
	run := s.apiRunOr404(w, r)
	if run == nil {
		return
	}
	if !storage.Final(run.Status) {
		problem(w, r, http.StatusConflict, fmt.Sprintf("the run is still %s: a queued or running run is not deleted; cancel it first (POST /runs/%s/cancel)", run.Status, run.ID), nil)
		return
	}
	if _, err := s.removeRuns(r.Context(), []storage.Run{*run}); errors.Is(err, storage.ErrNotFound) {
		problem(w, r, http.StatusNotFound, fmt.Sprintf("there is no run %q", run.ID), nil)
		return
	} else if err != nil {
		s.log.Error("api: delete run", "run", run.ID, "err", err)
		problem(w, r, http.StatusInternalServerError, "delete the run: "+err.Error(), nil)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// apiRunOr404 reads the {id} run, or answers a 404 (or 500) problem and
// is nil.
func (s *Server) apiRunOr404(w http.ResponseWriter, r *http.Request) *storage.Run {
	id := chi.URLParam(r, "id")
	run, err := s.getRun(r, id)
	if errors.Is(err, storage.ErrNotFound) {
		problem(w, r, http.StatusNotFound, fmt.Sprintf("there is no run %q", format.Clip(id, 40)), nil)
		return nil
	}
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "read the run: "+err.Error(), nil)
		return nil
	}
	return run
}
