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
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
	"github.com/ratelab/ratelab/web/format"
)

// APIRun is a run as GET /api/runs/{id} returns it. Manifest is the run's
// manifest.json once it is done.
type APIRun struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	Status        string     `json:"status"`
	PointsDone    int        `json:"points_done"`
	PointsTotal   int        `json:"points_total"`
	CreatedAt     time.Time  `json:"created_at"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
	Seed          uint64     `json:"seed"`
	EngineVersion string     `json:"engine_version"`
	Limiters      []string   `json:"limiters"`
	RerunOf       string     `json:"rerun_of,omitempty"`
	Error         string     `json:"error,omitempty"`
	URL           string     `json:"url"` // the run's page
	// Tags and Note are written after the run (PATCH /api/runs/{id}, the
	// run list's tags/note form).
	Tags []string `json:"tags"`
	Note string   `json:"note"`
	// Values are the run's values of the list's columns (GET /api/runs'
	// ?cols=): a number, or text (limiter, type); ValuesFrom says which
	// point they are of and why (runs_api.go).
	Values     map[string]any  `json:"values,omitempty"`
	ValuesFrom *APIValuesFrom  `json:"values_from,omitempty"`
	Files      []APIFile       `json:"files,omitempty"`
	Manifest   json.RawMessage `json:"manifest,omitempty"`
	// Answer is the run's answer to its config's objectives
	// (experiments/decide), once it has results; absent without objectives.
	Answer *APIAnswer `json:"answer,omitempty"`
}

// APIAnswer is the engine's answer to a run's objectives as data (the
// rule: experiments/decide, docs/web.md): every setting over its
// scenarios, the recommended setting per limiter and the best overall.
// Objectives and scenarios are named as the results' columns and
// settings.csv name them; settings, choices and the best point into
// Settings.
type APIAnswer struct {
	Objectives          []string `json:"objectives"` // "sojourn_p99_ms <= 150"
	GoodputTolerancePct float64  `json:"goodput_tolerance_pct"`
	// ScenarioAxes are the axes read as scenarios (decision.scenarios;
	// seeds and replications always are); Scenarios name each scenario
	// ("load bursty, seed 3"; "" for a sweep's only one).
	ScenarioAxes []string `json:"scenario_axes"`
	Scenarios    []string `json:"scenarios"`
	// Feasible counts the settings meeting every objective in every
	// scenario; BestOverall is the best of them, null when none does;
	// Closest is the closest setting when none does (null otherwise, or
	// when no setting has a point in every scenario).
	Feasible    int         `json:"feasible"`
	BestOverall *int        `json:"best_overall"`
	Closest     *int        `json:"closest"`
	Recommended []APIChoice `json:"recommended"` // per limiter, in the config's order
	// MeetAlone counts per objective the settings meeting it; Conflict
	// names two objectives no setting meets together though each alone is
	// met (when none meets every objective).
	MeetAlone []int        `json:"meet_alone"`
	Conflict  []string     `json:"conflict,omitempty"`
	Settings  []APISetting `json:"settings"`
}

// APIChoice is one limiter's answer.
type APIChoice struct {
	Limiter  string `json:"limiter"`
	Type     string `json:"type"`
	Settings int    `json:"settings"`
	Feasible int    `json:"feasible"`
	// Setting is the recommended setting (the closest when Feasible is 0:
	// Closest true), null when none has a point in every scenario; Point
	// its point in its binding scenario (for a closest setting, where its
	// most violated objective is worst; the page's Deploy and Over time
	// open on it).
	Setting  *int     `json:"setting"`
	Closest  bool     `json:"closest"`
	Point    *int     `json:"point"`
	Conflict []string `json:"conflict,omitempty"`
}

// APISetting is one setting over its scenarios.
type APISetting struct {
	Limiter string             `json:"limiter"`
	Type    string             `json:"type"`
	Params  map[string]float64 `json:"params"`
	// Parts are its axes beyond the limiter: a server or policy chosen.
	Parts []APIPart `json:"parts,omitempty"`
	// Points are its point per scenario (null where it has none: a
	// cancelled run's missing points; such a setting is never recommended).
	Points          []*int   `json:"points"`
	Complete        bool     `json:"complete"`
	MeetsAll        bool     `json:"meets_all"`
	WorstGoodputRPS float64  `json:"worst_goodput_rps"`
	Margin          *float64 `json:"margin"` // null: no objective with a target other than 0
	Binding         string   `json:"binding_objective,omitempty"`
	BindingScenario *int     `json:"binding_scenario"`
	// Recommended and BestOverall only for a setting meeting every
	// objective; Closest: the limiter's closest setting when none of its
	// settings does, ClosestOverall the sweep's when none does.
	Recommended    bool `json:"recommended"`
	BestOverall    bool `json:"best_overall"`
	Closest        bool `json:"closest"`
	ClosestOverall bool `json:"closest_overall"`
	// Unmeasured counts the objectives without a value in some scenario,
	// Missed the most objectives missed in one scenario, Violation the
	// sum of the relative violations at the worst values: what ranks the
	// closest setting, in that order.
	Unmeasured int          `json:"unmeasured"`
	Missed     int          `json:"missed"`
	Violation  float64      `json:"violation"`
	Outcomes   []APIOutcome `json:"objectives"`
	Guarantee  APIGuarantee `json:"guarantee"`
}

// APIPart is one axis of a setting beyond its limiter.
type APIPart struct {
	Axis  string `json:"axis"`
	Value string `json:"value"`
}

// APIOutcome is one objective over a setting's scenarios: its worst value
// (null without one) in Scenario, its margin there (relative; absolute for
// a target of 0) and whether it passes in every scenario.
type APIOutcome struct {
	Objective string   `json:"objective"`
	Worst     *float64 `json:"worst"`
	Margin    float64  `json:"margin"`
	Pass      bool     `json:"pass"`
	Scenario  *int     `json:"scenario"`
	Met       int      `json:"scenarios_met"`
}

// APIGuarantee is a setting's network-calculus bound beside its worst
// measured end-to-end time (over its scenarios and replications).
type APIGuarantee struct {
	Bounded    bool    `json:"bounded"`
	BoundMS    float64 `json:"bound_ms,omitempty"`
	MeasuredMS float64 `json:"measured_ms"`
	Label      string  `json:"label"` // "worst measured over 8 scenarios"
	Note       string  `json:"note,omitempty"`
}

// apiAnswer shapes the engine's answer for the API (nil without one).
func apiAnswer(a *decide.Answer) *APIAnswer {
	if a == nil {
		return nil
	}
	idx := func(i int) *int {
		if i < 0 {
			return nil
		}
		return &i
	}
	conflict := func(c *decide.Conflict) []string {
		if c == nil {
			return nil
		}
		return []string{a.Objectives[c.A].String(), a.Objectives[c.B].String()}
	}
	out := &APIAnswer{GoodputTolerancePct: a.TolerancePct, ScenarioAxes: a.ScenarioAxes, Feasible: a.Feasible,
		MeetAlone: a.MeetAlone, Conflict: conflict(a.Conflict),
		Objectives: []string{}, Scenarios: []string{}, Recommended: []APIChoice{}, Settings: []APISetting{}}
	if a.Feasible > 0 {
		out.BestOverall = idx(a.Best)
	} else {
		out.Closest = idx(a.Best)
	}
	if out.ScenarioAxes == nil {
		out.ScenarioAxes = []string{}
	}
	for _, o := range a.Objectives {
		out.Objectives = append(out.Objectives, o.String())
	}
	for i := range a.Scenarios {
		out.Scenarios = append(out.Scenarios, a.Scenarios[i].Name())
	}
	for _, ch := range a.Choices {
		c := APIChoice{Limiter: ch.Limiter, Type: string(ch.Type), Settings: ch.Settings, Feasible: ch.Feasible,
			Setting: idx(ch.Setting), Conflict: conflict(ch.Conflict)}
		if ch.Setting >= 0 {
			c.Point = idx(ch.Point)
			c.Closest = a.Settings[ch.Setting].Closest
		}
		out.Recommended = append(out.Recommended, c)
	}
	for i := range a.Settings {
		s := &a.Settings[i]
		as := APISetting{Limiter: s.Limiter, Type: string(s.Type), Params: s.Params, Complete: s.Complete, MeetsAll: s.MeetsAll,
			WorstGoodputRPS: s.WorstGoodputRPS, Recommended: s.Recommended, BestOverall: s.BestOverall,
			Closest: s.Closest, ClosestOverall: s.ClosestOverall, Unmeasured: s.Unmeasured, Missed: s.Missed, Violation: s.Violation,
			BindingScenario: idx(s.BindingScenario),
			Guarantee: APIGuarantee{Bounded: s.Guarantee.Bounded, BoundMS: s.Guarantee.BoundMS, MeasuredMS: s.Guarantee.MeasuredMS,
				Label: s.Guarantee.Label(), Note: s.Guarantee.Note}}
		if as.Params == nil {
			as.Params = map[string]float64{}
		}
		for _, p := range s.Parts {
			as.Parts = append(as.Parts, APIPart{Axis: p.Axis, Value: p.Value})
		}
		for _, p := range s.Points {
			as.Points = append(as.Points, idx(p))
		}
		if s.HasMargin {
			m := s.Margin
			as.Margin = &m
		}
		if s.Binding >= 0 {
			as.Binding = a.Objectives[s.Binding].String()
		}
		for _, o := range s.Outcomes {
			ao := APIOutcome{Objective: o.Objective.String(), Margin: o.Slack, Pass: s.Complete && o.Pass, Scenario: idx(o.Scenario), Met: o.Met}
			if o.HasValue {
				v := o.Measured
				ao.Worst = &v
			}
			as.Outcomes = append(as.Outcomes, ao)
		}
		out.Settings = append(out.Settings, as)
	}
	return out
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
	cfg, err := document.ReadConfig(body, document.Limits{MaxBytes: MaxAPIBytes, MaxString: form.MaxTraceBytes})
	if s.refusedBody(w, r, err) {
		return
	}
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
	// The answer's write deadline counts from here: a body that took long
	// to arrive (the server's write timeout runs from its headers) must
	// not cost the client its 202 (it would retry, and queue the run twice).
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(submitAnswerTime))
	var (
		key string
		run *storage.Run
	)
	if k, msg := idempotencyKey(r); msg != "" {
		problem(w, r, http.StatusBadRequest, msg, field.List{{Path: IdempotencyHeader, Msg: msg}})
		return
	} else if k != "" {
		key = clientID(r) + "\x00" + k
		id, status := s.idem.begin(key, cfg.SHA256(), time.Now())
		switch status {
		case http.StatusConflict:
			problem(w, r, status, "a request with this Idempotency-Key is still being handled: retry when it has been answered", field.List{{Path: IdempotencyHeader, Msg: "is in use by a request not yet answered"}})
			return
		case http.StatusUnprocessableEntity:
			problem(w, r, status, "this Idempotency-Key came with another config document: a key names one submission", field.List{{Path: IdempotencyHeader, Msg: "was used for another config document"}})
			return
		}
		if id != "" {
			first, err := s.store.Head(r.Context(), id)
			if err == nil {
				w.Header().Set("Location", "/api/runs/"+first.ID)
				w.Header().Set("Idempotent-Replayed", "true")
				writeJSON(w, http.StatusAccepted, apiRun(first))
				return
			}
			// The first run was deleted since: queue this one.
			s.idem.end(key, "")
			s.idem.begin(key, cfg.SHA256(), time.Now())
		}
		queued := ""
		defer func() { s.idem.end(key, queued) }() // also if Submit panics
		defer func() {
			if run != nil {
				queued = run.ID
			}
		}()
	}
	run, err = s.runner.Submit(r.Context(), cfg, cfg.Name, "")
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

// submitAnswerTime is how long a submission's answer may take to write,
// from the moment its document is read.
const submitAnswerTime = 30 * time.Second

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
	var doc *document.Error
	var read *document.ReadError
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
		Tags: nonNilTags(run.Tags), Note: run.Note,
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
	if out.Tags, _, err = s.store.Labels(r.Context(), run.ID); err != nil {
		problem(w, r, http.StatusInternalServerError, "read the run's tags: "+err.Error(), nil)
		return
	}
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
		if len(run.Config) > 0 && hasObjectives(run.Config) {
			res, err := s.store.Measures(r.Context(), run.ID)
			if err != nil {
				problem(w, r, http.StatusInternalServerError, "read the run's results: "+err.Error(), nil)
				return
			}
			out.Answer = apiAnswer(decide.Decide(res))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// hasObjectives reports whether a stored config document lists objectives
// (its answer is then worth reading the run's measures for).
func hasObjectives(config []byte) bool {
	var doc struct {
		Objectives []json.RawMessage `json:"objectives"`
	}
	return json.Unmarshal(config, &doc) == nil && len(doc.Objectives) > 0
}
