package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
	"github.com/ratelab/ratelab/web/format"
)

// APIRun is a run as GET /api/runs/{id} returns it. Manifest is the run's
// manifest.json once it is done.
type APIRun struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Status        string          `json:"status"`
	PointsDone    int             `json:"points_done"`
	PointsTotal   int             `json:"points_total"`
	CreatedAt     time.Time       `json:"created_at"`
	FinishedAt    *time.Time      `json:"finished_at,omitempty"`
	Seed          uint64          `json:"seed"`
	EngineVersion string          `json:"engine_version"`
	Limiters      []string        `json:"limiters"`
	RerunOf       string          `json:"rerun_of,omitempty"`
	Error         string          `json:"error,omitempty"`
	URL           string          `json:"url"` // the run's page
	Files         []APIFile       `json:"files,omitempty"`
	Manifest      json.RawMessage `json:"manifest,omitempty"`
}

// APIFile is one output file of a done run.
type APIFile struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Bytes  int    `json:"bytes"`
	URL    string `json:"url"`
}

// apiCreateRun takes a config document (the same JSON as lab run --config)
// and queues it: 202 Accepted with Location /api/runs/{id}. Errors are
// problem documents: 415 unless the body is application/json; 413 past
// MaxAPIBytes or for a string (a trace) past form.MaxTraceBytes; 400 for a
// body that is not JSON text (a syntax error, not UTF-8); 422 for JSON that
// is not a config that can run (each error with its field's path); 429
// with Retry-After when the queue is full; 503 when the lab shuts down.
//
// The body is read as a stream: the document is decoded while it arrives
// and never held whole (see experiments.ReadConfig).
func (s *Server) apiCreateRun(w http.ResponseWriter, r *http.Request) {
	if msg := jsonBody(r); msg != "" {
		w.Header().Set("Accept-Post", "application/json")
		problem(w, r, http.StatusUnsupportedMediaType, msg, nil)
		return
	}
	release := s.admitBody(w, r, MaxAPIBytes, 1)
	if release == nil {
		return
	}
	defer release()
	body := http.MaxBytesReader(w, r.Body, MaxAPIBytes)
	cfg, err := experiments.ReadConfig(body, experiments.Limits{MaxBytes: MaxAPIBytes, MaxString: form.MaxTraceBytes})
	if err != nil {
		status, detail, errs := documentStatus(err)
		problem(w, r, status, detail, errs)
		return
	}
	// A trace has the form's limit here too, so every run can be edited
	// as a new sweep.
	if big := form.OversizeTraces(cfg.Workload.Parts); len(big) > 0 {
		problem(w, r, http.StatusRequestEntityTooLarge, "a trace is larger than the form's limit", big)
		return
	}
	run, err := s.runner.Submit(r.Context(), cfg, cfg.Name, "")
	if err != nil {
		switch status := submitStatus(w, err); status {
		case http.StatusTooManyRequests:
			problem(w, r, status, fmt.Sprintf("the queue of waiting sweeps is full: retry in %d seconds", RetryAfterSeconds), nil)
		case http.StatusServiceUnavailable:
			problem(w, r, status, "the lab is shutting down and takes no new sweeps", nil)
		case http.StatusUnprocessableEntity:
			var te *runner.TraceError
			errors.As(err, &te)
			problem(w, r, status, "the config names a trace file the lab does not have", te.Errs)
		default:
			s.log.Error("api: queue the sweep", "err", err)
			problem(w, r, status, "queue the sweep: "+err.Error(), nil)
		}
		return
	}
	w.Header().Set("Location", "/api/runs/"+run.ID)
	writeJSON(w, http.StatusAccepted, apiRun(run))
}

// jsonBody says why a request's body is not one the API reads ("" when it
// is): it must be application/json (charset utf-8 when one is named),
// without a content coding.
func jsonBody(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	switch {
	case ct == "":
		return "the request has no Content-Type: send the config document as application/json"
	case err != nil || mt != "application/json":
		return fmt.Sprintf("the Content-Type is %q: send the config document as application/json", format.Clip(ct, 80))
	case params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8"):
		return fmt.Sprintf("the charset is %q: a config document is UTF-8 (charset=utf-8, or none)", format.Clip(params["charset"], 40))
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return fmt.Sprintf("the Content-Encoding is %q: send the config document uncompressed", format.Clip(ce, 40))
	}
	return ""
}

// documentStatus is the status that refuses a config document, with a
// sentence on why and the field errors: 413 past a size limit, 400 for a
// body that is not JSON text or could not be read, 422 for a config that
// cannot run.
func documentStatus(err error) (int, string, field.List) {
	var tooLarge *http.MaxBytesError
	var doc *experiments.DocumentError
	var read *experiments.ReadError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %s, the limit", format.Bytes(int(tooLarge.Limit))), nil
	case errors.As(err, &doc) && doc.TooLarge:
		return http.StatusRequestEntityTooLarge, fieldsDetail("the config document is too large", doc.Errors), doc.Errors
	case errors.As(err, &doc):
		return http.StatusBadRequest, fieldsDetail("the body is not a JSON document", doc.Errors), doc.Errors
	case errors.As(err, &read):
		return http.StatusBadRequest, "the request body could not be read: " + read.Err.Error(), nil
	}
	errs := field.Errors(err)
	return http.StatusUnprocessableEntity, fieldsDetail("the config document cannot run", errs), errs
}

func apiRun(run *storage.Run) *APIRun {
	return &APIRun{
		ID: run.ID, Name: run.Name, Status: run.Status, PointsDone: run.PointsDone, PointsTotal: run.PointsTotal,
		CreatedAt: run.CreatedAt, FinishedAt: run.FinishedAt, Seed: run.Seed, EngineVersion: run.EngineVersion,
		Limiters: run.Limiters, RerunOf: run.RerunOf, Error: run.Error, URL: "/runs/" + run.ID,
	}
}

func (s *Server) apiGetRun(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	run, err := s.getRun(r, id)
	if errors.Is(err, storage.ErrNotFound) {
		problem(w, r, http.StatusNotFound, fmt.Sprintf("there is no run %q (a run id is 12 characters from a-z and 2-7, as in the Location that POST /api/runs answers)", format.Clip(id, 40)), nil)
		return
	}
	if err != nil {
		s.log.Error("api: read run", "run", id, "err", err)
		problem(w, r, http.StatusInternalServerError, "read the run: "+err.Error(), nil)
		return
	}
	out := apiRun(run)
	if storage.HasResults(run.Status) {
		files, err := s.store.Files(r.Context(), run.ID)
		if err != nil {
			problem(w, r, http.StatusInternalServerError, "read the run's files: "+err.Error(), nil)
			return
		}
		for _, f := range files {
			out.Files = append(out.Files, APIFile{Name: f.Name, SHA256: f.SHA256, Bytes: f.Bytes, URL: "/runs/" + run.ID + "/files/" + f.Name})
		}
		m, err := s.store.File(r.Context(), run.ID, experiments.FileManifest)
		if err != nil {
			problem(w, r, http.StatusInternalServerError, "read the manifest: "+err.Error(), nil)
			return
		}
		out.Manifest = m.Data
	}
	writeJSON(w, http.StatusOK, out)
}
