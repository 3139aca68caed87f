package web

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
)

// recentRuns is how many runs the home page lists.
const recentRuns = 12

// home shows the new-sweep form: empty, from a preset (?preset=NAME) or
// from a stored run (?from=ID), beside the recent runs.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	d := HomeData{Form: DefaultForm(), Presets: presets.All()}
	status := http.StatusOK
	q := r.URL.Query()
	switch {
	case q.Get("preset") != "":
		cfg, err := presets.Config(q.Get("preset"))
		if err != nil {
			status, d.Notice = http.StatusNotFound, err.Error()
			break
		}
		d.Form, d.Preset = FormFromConfig(cfg), q.Get("preset")
	case q.Get("from") != "":
		id := q.Get("from")
		run, err := s.getRun(r, id)
		if err != nil {
			status, d.Notice = http.StatusNotFound, fmt.Sprintf("no run %q to start from", clipText(id, 40))
			break
		}
		cfg, err := experiments.DecodeConfig(run.Config)
		if err != nil {
			status, d.Notice = http.StatusUnprocessableEntity, "the stored config of run "+id+" no longer decodes: "+err.Error()
			break
		}
		if hasChain(cfg) {
			// The form has no chains: edit the document instead.
			http.Redirect(w, r, "/calculus/edit/"+run.ID, http.StatusSeeOther)
			return
		}
		d.Form, d.From = FormFromConfig(cfg), id
	}
	s.homePage(w, r, status, d)
}

func (s *Server) homePage(w http.ResponseWriter, r *http.Request, status int, d HomeData) {
	if d.Presets == nil {
		d.Presets = presets.All()
	}
	runs, _, err := s.store.List(r.Context(), recentRuns, 0)
	if err != nil {
		s.log.Error("list recent runs", "err", err)
	}
	d.Recent = runs
	s.render(w, r, status, HomePage(d))
}

// submittedForm is a form post as read: its values, its uploaded traces,
// and the keys of uploads that were too large.
type submittedForm struct {
	values  formValues
	files   map[string][]byte
	tooBig  []string
	readErr error
}

// readForm reads an urlencoded or multipart form within MaxFormBytes. Each
// field and upload may hold at most MaxTraceBytes; a larger one is
// skipped and named in tooBig, and the rest of the form is still read.
func readForm(w http.ResponseWriter, r *http.Request) *submittedForm {
	sf := &submittedForm{values: formValues{}, files: map[string][]byte{}}
	r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		if err := r.ParseForm(); err != nil {
			sf.readErr = err
		}
		for k, vs := range r.PostForm {
			sf.values[k] = vs[len(vs)-1]
		}
		return sf
	}
	mr, err := r.MultipartReader()
	if err != nil {
		sf.readErr = err
		return sf
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return sf
		}
		if err != nil {
			sf.readErr = err
			return sf
		}
		name := part.FormName()
		data, err := io.ReadAll(io.LimitReader(part, MaxTraceBytes+1))
		if err == nil && len(data) > MaxTraceBytes {
			sf.tooBig = append(sf.tooBig, name)
			_, err = io.Copy(io.Discard, part)
			data = nil
		}
		if err != nil {
			sf.readErr = err
			return sf
		}
		if part.FileName() != "" {
			if len(data) > 0 {
				sf.files[name] = data
			}
			continue
		}
		if data != nil {
			sf.values[name] = string(data)
		}
	}
}

var (
	csvFileKey = regexp.MustCompile(`^parts\.(\d{1,4})\.csv_file$`)
	csvKeyRow  = regexp.MustCompile(`^parts\.(\d{1,4})\.csv$`)
)

// createRun takes the new-sweep form: it adds or removes rows, or checks the
// sweep and queues it. Bad input comes back as the same form with the
// errors beside their fields (422); a full queue gives 429 with
// Retry-After and the form as typed.
func (s *Server) createRun(w http.ResponseWriter, r *http.Request) {
	sf := readForm(w, r)
	// An uploaded trace replaces the pasted text of its part.
	uploadErrs := map[string]string{}
	for key, data := range sf.files {
		if m := csvFileKey.FindStringSubmatch(key); m != nil {
			sf.values["parts."+m[1]+".csv"] = string(data)
		}
	}
	for _, key := range sf.tooBig {
		csvKey := strings.TrimSuffix(key, "_file")
		if !strings.HasPrefix(key, "parts.") || !strings.HasSuffix(csvKey, ".csv") {
			uploadErrs[""] = fmt.Sprintf("the field %q is larger than %s", clipText(key, 60), byteSize(MaxTraceBytes))
			continue
		}
		uploadErrs[csvKey] = fmt.Sprintf("the trace is larger than %s, the limit; split it or lower its rate", byteSize(MaxTraceBytes))
		if _, ok := sf.values[csvKey]; !ok {
			sf.values[csvKey] = "" // keep the row even when its text was the big part
		}
	}
	// Row numbers of the post, in order: the form renumbers them 0..n-1.
	partRows := sf.values.indices("parts")
	f := formFromValues(sf.values)
	d := HomeData{Form: f}

	if sf.readErr != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(sf.readErr, &tooLarge) {
			d.Notice = fmt.Sprintf("The form is larger than %s, the limit (a trace may be at most %s). What was read before the limit is kept below.", byteSize(MaxFormBytes), byteSize(MaxTraceBytes))
			s.homePage(w, r, http.StatusRequestEntityTooLarge, d)
			return
		}
		d.Notice = "The form could not be read: " + sf.readErr.Error()
		s.homePage(w, r, http.StatusBadRequest, d)
		return
	}

	action := sf.values["action"]
	switch {
	case action == "add-part":
		f.Parts = append(f.Parts, PartForm{Type: workload.Constant, RateRPS: "50"})
		s.homePage(w, r, http.StatusOK, d)
		return
	case action == "add-limiter":
		f.Limiters = append(f.Limiters, LimiterForm{Type: limiter.TypeLeakyBucket, RateRPS: "100", Queue: "1, 2, 4, 8, 16, 32, 64"})
		s.homePage(w, r, http.StatusOK, d)
		return
	case strings.HasPrefix(action, "remove-part:"):
		if i, err := strconv.Atoi(strings.TrimPrefix(action, "remove-part:")); err == nil && i >= 0 && i < len(f.Parts) {
			f.Parts = slices.Delete(f.Parts, i, i+1)
		}
		s.homePage(w, r, http.StatusOK, d)
		return
	case strings.HasPrefix(action, "remove-limiter:"):
		if i, err := strconv.Atoi(strings.TrimPrefix(action, "remove-limiter:")); err == nil && i >= 0 && i < len(f.Limiters) {
			f.Limiters = slices.Delete(f.Limiters, i, i+1)
		}
		s.homePage(w, r, http.StatusOK, d)
		return
	case action == "refresh":
		s.homePage(w, r, http.StatusOK, d)
		return
	}

	_, cfg := f.Document()
	for key, msg := range uploadErrs {
		path := key
		// Map the post's row number to the form's.
		if m := csvKeyRow.FindStringSubmatch(key); m != nil {
			n, _ := strconv.Atoi(m[1])
			if i := slices.Index(partRows, n); i >= 0 {
				key = rowKey("parts", i, "csv")
				path = fmt.Sprintf("workload.parts[%d].csv", i)
				// The trace was not read, so the engine saw an empty one:
				// its "is empty" would contradict the size error.
				f.dropErrors(key)
			}
		}
		f.AddError(key, path, msg)
		cfg = nil
	}
	if cfg == nil {
		status := http.StatusUnprocessableEntity
		if len(uploadErrs) > 0 {
			status = http.StatusRequestEntityTooLarge
		}
		s.homePage(w, r, status, d)
		return
	}
	run, err := s.runner.Submit(r.Context(), cfg, cfg.Name, "")
	if err != nil {
		if errors.Is(err, runner.ErrQueueFull) {
			w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
			d.Notice = fmt.Sprintf("The lab is busy: the queue of waiting sweeps is full. Nothing was lost — submit again in %d seconds.", RetryAfterSeconds)
			s.homePage(w, r, http.StatusTooManyRequests, d)
			return
		}
		if errors.Is(err, runner.ErrClosed) {
			d.Notice = "The lab is shutting down and takes no new sweeps."
			s.homePage(w, r, http.StatusServiceUnavailable, d)
			return
		}
		s.internalError(w, r, "queue the sweep", err)
		return
	}
	http.Redirect(w, r, "/runs/"+run.ID, http.StatusSeeOther)
}

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
		s.errorPage(w, r, http.StatusNotFound, "No such run", fmt.Sprintf("There is no run %q. Runs are listed at /runs.", clipText(id, 40)))
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
		s.errorPage(w, r, http.StatusNotFound, "No such file", fmt.Sprintf("Run %s has no file %q (yet).", run.ID, clipText(name, 80)))
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
		status, notice := http.StatusInternalServerError, "The re-run could not be queued: "+err.Error()
		switch {
		case errors.Is(err, runner.ErrQueueFull):
			w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
			status, notice = http.StatusTooManyRequests, fmt.Sprintf("The queue of waiting sweeps is full; press Re-run again in %d seconds.", RetryAfterSeconds)
		case errors.Is(err, runner.ErrClosed):
			status, notice = http.StatusServiceUnavailable, "The lab is shutting down and takes no new sweeps."
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
