package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/field"
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

// APIErrors is every error answer of the API: each error with the path of
// the config field at fault ("" when it is not about one field).
type APIErrors struct {
	Errors field.List `json:"errors"`
}

func apiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, APIErrors{Errors: field.List{{Msg: msg}}})
}

// apiCreateRun takes a config document (the same JSON as lab run --config)
// and queues it: 202 Accepted with Location /api/runs/{id}; 400 with field
// errors; 413 past MaxAPIBytes; 429 with Retry-After when the queue is
// full.
func (s *Server) apiCreateRun(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxAPIBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the config document is larger than %d bytes", MaxAPIBytes))
			return
		}
		apiError(w, http.StatusBadRequest, "read the request body: "+err.Error())
		return
	}
	cfg, err := experiments.DecodeConfig(body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, APIErrors{Errors: field.Errors(err)})
		return
	}
	// A trace has the form's limit here too, so every run can be edited
	// as a new sweep.
	if big := form.OversizeTraces(cfg.Workload.Parts); len(big) > 0 {
		writeJSON(w, http.StatusRequestEntityTooLarge, APIErrors{Errors: big})
		return
	}
	run, err := s.runner.Submit(r.Context(), cfg, cfg.Name, "")
	if err != nil {
		switch status := submitStatus(w, err); status {
		case http.StatusTooManyRequests:
			apiError(w, status, "the queue of waiting sweeps is full; retry later")
		case http.StatusServiceUnavailable:
			apiError(w, status, "the lab is shutting down")
		default:
			s.log.Error("api: queue the sweep", "err", err)
			apiError(w, status, "queue the sweep: "+err.Error())
		}
		return
	}
	w.Header().Set("Location", "/api/runs/"+run.ID)
	writeJSON(w, http.StatusAccepted, apiRun(run))
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
		apiError(w, http.StatusNotFound, fmt.Sprintf("no run %q", format.Clip(id, 40)))
		return
	}
	if err != nil {
		s.log.Error("api: read run", "run", id, "err", err)
		apiError(w, http.StatusInternalServerError, "read the run: "+err.Error())
		return
	}
	out := apiRun(run)
	if run.Status == storage.StatusDone {
		files, err := s.store.Files(r.Context(), run.ID)
		if err != nil {
			apiError(w, http.StatusInternalServerError, "read the run's files: "+err.Error())
			return
		}
		for _, f := range files {
			out.Files = append(out.Files, APIFile{Name: f.Name, SHA256: f.SHA256, Bytes: f.Bytes, URL: "/runs/" + run.ID + "/files/" + f.Name})
		}
		m, err := s.store.File(r.Context(), run.ID, experiments.FileManifest)
		if err != nil {
			apiError(w, http.StatusInternalServerError, "read the manifest: "+err.Error())
			return
		}
		out.Manifest = m.Data
	}
	writeJSON(w, http.StatusOK, out)
}
