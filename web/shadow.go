package web

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/accesslog"
	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/shadow"
	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/charts"
	"github.com/ratelab/ratelab/web/format"
)

// DefaultMaxUploadBytes is the largest log a "Replay a log" upload may be
// (lab serve --max-upload-mb): 2 GiB.
const DefaultMaxUploadBytes int64 = 2 << 30

// maxShadowFieldBytes bounds each field of the form but the log (the
// config pasted or uploaded, the log format, the objectives).
const maxShadowFieldBytes = 1 << 20

// uploadReadTimeout is how long an upload may take (lab serve's read
// timeout is for pages and documents).
const uploadReadTimeout = 2 * time.Hour

// ShadowForm is the "Replay a log" form: its values by input name (the
// replay document's keys, shadow.Spec), the errors at each input, the
// logs it offers and the uploaded log it keeps across a refusal.
type ShadowForm struct {
	Values map[string]string
	Errors map[string][]string
	// Logs are the lab's log files (lab serve --traces), by name.
	Logs []string
	// Upload is the log uploaded with a refused post ("upload/..."), kept
	// so the user need not send it again; UploadName its file's name.
	Upload, UploadName string
	// MaxUpload is the upload cap in bytes.
	MaxUpload int64
	Notice    string
	// BadLines are the first bad lines of a refused log.
	BadLines []string
}

// shadowKeys are the form's inputs besides the files, in the document's
// order.
var shadowKeys = []string{"name", "log", "format", "log_format", "log_tz", "config", "config_format", "location", "key",
	"route", "status", "from", "to", "reorder_window_ms", "max_bad_pct", "objectives"}

// Val is an input's value.
func (f *ShadowForm) Val(key string) string { return f.Values[key] }

// Err are an input's errors.
func (f *ShadowForm) Err(key string) []string { return f.Errors[key] }

func (f *ShadowForm) add(key, format string, args ...any) {
	if f.Errors == nil {
		f.Errors = map[string][]string{}
	}
	f.Errors[key] = append(f.Errors[key], fmt.Sprintf(format, args...))
}

// HasErrors reports whether any input has an error.
func (f *ShadowForm) HasErrors() bool { return len(f.Errors) > 0 || f.Notice != "" }

// newShadowForm is the form with its defaults.
func (s *Server) newShadowForm() *ShadowForm {
	f := &ShadowForm{Values: map[string]string{"format": "nginx", "reorder_window_ms": format.Num(accesslog.DefaultWindowMS),
		"max_bad_pct": format.Num(shadow.DefaultMaxBadPct), "objectives": experiments.FormatObjectives(shadow.DefaultObjectives())},
		MaxUpload: s.maxUpload}
	f.Logs = s.runner.TraceNames()
	return f
}

// shadowPage is the "Replay a log" form.
// ?from=ID fills it from a stored shadow run.
func (s *Server) shadowPage(w http.ResponseWriter, r *http.Request) {
	f := s.newShadowForm()
	status := http.StatusOK
	if id := r.URL.Query().Get("from"); id != "" {
		run, err := s.getRun(r, id)
		var sp *shadow.Spec
		if err == nil && run.Kind == storage.KindShadow {
			sp, err = shadow.DecodeSpec(run.Config)
		}
		switch {
		case err != nil || sp == nil:
			status, f.Notice = http.StatusNotFound, fmt.Sprintf("no log replay %q to start from", format.Clip(id, 40))
		default:
			f.Values = map[string]string{"name": run.Name, "log": sp.Log, "format": sp.Format, "log_format": sp.LogFormat, "log_tz": sp.LogTZ, "config": sp.Config,
				"config_format": sp.ConfigFormat, "location": sp.Location, "key": sp.Key, "route": sp.Route, "status": sp.Status,
				"from": sp.From, "to": sp.To, "reorder_window_ms": format.Num(sp.ReorderWindowMS), "max_bad_pct": format.Num(sp.MaxBadPct),
				"objectives": experiments.FormatObjectives(sp.Objectives)}
			if strings.HasPrefix(sp.Log, "upload/") {
				f.Upload, f.UploadName, f.Values["log"] = sp.Log, path.Base(sp.Log), ""
			}
		}
	}
	s.render(w, r, status, ShadowFormPage(f))
}

// createShadow takes the form: the log streamed to a file (an upload,
// multipart read part by part, never held in memory, at most
// MaxUploadBytes: more is 413), every field checked with its error at its
// input (422, the form again with the values given), the log's first
// lines checked for bad lines (422, naming them), then the run queued.
func (s *Server) createShadow(w http.ResponseWriter, r *http.Request) {
	f := s.newShadowForm()
	f.Values = map[string]string{}
	logs := s.runner.Logs()
	if logs == nil {
		f.Notice = "This lab replays no logs."
		s.render(w, r, http.StatusServiceUnavailable, ShadowFormPage(f))
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(uploadReadTimeout))
	mr, err := r.MultipartReader()
	if err != nil {
		f.Notice = "The form must be posted as multipart/form-data: " + err.Error()
		s.render(w, r, http.StatusBadRequest, ShadowFormPage(f))
		return
	}
	var abort func() // removes the upload of a refused post
	defer func() {
		if abort != nil {
			abort()
		}
	}()
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Notice = "The form could not be read: " + err.Error()
			s.render(w, r, http.StatusBadRequest, ShadowFormPage(f))
			return
		}
		key := part.FormName()
		switch {
		case key == "log_file" && part.FileName() != "":
			name, status, err := s.receiveUpload(logs, part, &abort)
			if err != nil {
				f.add("log_file", "%v", err)
				if status == http.StatusRequestEntityTooLarge {
					// the rest of the body is not read: the connection closes
					w.Header().Set("Connection", "close")
				}
				s.render(w, r, status, ShadowFormPage(f))
				return
			}
			f.Upload, f.UploadName = name, part.FileName()
		case key == "config_file" && part.FileName() != "":
			b, err := io.ReadAll(io.LimitReader(part, maxShadowFieldBytes+1))
			switch {
			case err != nil:
				f.add("config", "the config file could not be read: %v", err)
			case len(b) > maxShadowFieldBytes:
				f.add("config", "the config file is larger than %s", format.Bytes(maxShadowFieldBytes))
			default:
				f.Values["config"] = string(b) // an uploaded config replaces the pasted one
				f.Values["config_uploaded"] = "1"
			}
		case key == "log_upload":
			b, _ := io.ReadAll(io.LimitReader(part, 300))
			if v := string(b); strings.HasPrefix(v, "upload/") && logs.Exists(v) && f.Upload == "" {
				f.Upload = v
			}
		case key == "log_upload_name":
			b, _ := io.ReadAll(io.LimitReader(part, 300))
			if f.UploadName == "" {
				f.UploadName = string(b)
			}
		case key == "config" && f.Values["config_uploaded"] == "1":
			io.Copy(io.Discard, io.LimitReader(part, maxShadowFieldBytes))
		default:
			b, err := io.ReadAll(io.LimitReader(part, maxShadowFieldBytes+1))
			if err != nil {
				f.Notice = "The form could not be read: " + err.Error()
				s.render(w, r, http.StatusBadRequest, ShadowFormPage(f))
				return
			}
			if len(b) > maxShadowFieldBytes {
				f.add(key, "longer than %s", format.Bytes(maxShadowFieldBytes))
				continue
			}
			f.Values[key] = strings.ReplaceAll(string(b), "\r\n", "\n")
		}
	}
	delete(f.Values, "config_uploaded")
	sp := s.shadowSpec(f, logs)
	abort = nil // a refused form keeps its upload: the form offers it again
	if f.HasErrors() {
		s.render(w, r, http.StatusUnprocessableEntity, ShadowFormPage(f))
		return
	}
	name := strings.TrimSpace(f.Val("name"))
	if name == "" {
		name = "replay of " + path.Base(strings.TrimPrefix(sp.Log, "upload/"))
		if f.UploadName != "" && sp.Log == f.Upload {
			name = "replay of " + f.UploadName
		}
	}
	run, err := s.runner.SubmitShadow(r.Context(), sp, name, "")
	if err != nil {
		switch status := submitStatus(w, err); status {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			f.Notice = "The lab is busy or stopping: nothing was started. Your log is kept: submit again in a moment."
			s.render(w, r, status, ShadowFormPage(f))
		case http.StatusUnprocessableEntity:
			f.add("log", "%v", err)
			s.render(w, r, status, ShadowFormPage(f))
		default:
			s.internalError(w, r, "queue the replay", err)
		}
		return
	}
	http.Redirect(w, r, "/runs/"+run.ID, http.StatusSeeOther)
}

// receiveUpload streams an uploaded log to a new file of logs, at most
// s.maxUpload bytes; abort is set to remove it.
func (s *Server) receiveUpload(logs runner.Logs, part *multipart.Part, abort *func()) (string, int, error) {
	name, dst, rm, err := logs.Create(part.FileName())
	if err != nil {
		return "", http.StatusInternalServerError, fmt.Errorf("the upload could not be stored: %w", err)
	}
	if *abort != nil {
		(*abort)() // a second log file: the first is dropped
	}
	*abort = rm
	n, err := io.Copy(dst, io.LimitReader(part, s.maxUpload+1))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if n > s.maxUpload {
		return "", http.StatusRequestEntityTooLarge, fmt.Errorf("the log is larger than %s, the lab's upload limit (lab serve --max-upload-mb): put it in the lab's --traces directory and pick it by name", format.Bytes(int(s.maxUpload)))
	}
	if err != nil {
		return "", http.StatusBadRequest, fmt.Errorf("the upload was cut short: %w", err)
	}
	if n == 0 {
		return "", http.StatusUnprocessableEntity, errors.New("the uploaded log is empty")
	}
	return name, 0, nil
}

// shadowSpec checks the form's values as a replay's document, each error
// at its input, and the log's first lines for bad lines.
func (s *Server) shadowSpec(f *ShadowForm, logs runner.Logs) *shadow.Spec {
	sp := &shadow.Spec{Log: f.Val("log"), Format: f.Val("format"), LogFormat: f.Val("log_format"), LogTZ: strings.TrimSpace(f.Val("log_tz")), Config: f.Val("config"),
		ConfigFormat: f.Val("config_format"), Location: strings.TrimSpace(f.Val("location")), Key: strings.TrimSpace(f.Val("key")),
		Route: strings.TrimSpace(f.Val("route")), Status: strings.TrimSpace(f.Val("status")), From: strings.TrimSpace(f.Val("from")), To: strings.TrimSpace(f.Val("to")),
		MaxBadPct: shadow.DefaultMaxBadPct}
	if f.Upload != "" && sp.Log == "" {
		sp.Log = f.Upload
	}
	if sp.Log != "" && sp.Log != f.Upload && !logs.Exists(sp.Log) {
		f.add("log", "%q is not one of the lab's logs", sp.Log)
	}
	for _, n := range []struct {
		key string
		to  *float64
	}{{"reorder_window_ms", &sp.ReorderWindowMS}, {"max_bad_pct", &sp.MaxBadPct}} {
		if v := strings.TrimSpace(f.Val(n.key)); v != "" {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				f.add(n.key, "%q is not a number", v)
				continue
			}
			*n.to = x
		}
	}
	if msg := field.Line(strings.TrimSpace(f.Val("name")), 200); msg != "" {
		f.add("name", "%s", msg)
	}
	objs, errs := experiments.ParseObjectives(f.Val("objectives"))
	for _, e := range errs {
		f.add("objectives", "%s: %s", e.Path, e.Msg)
	}
	sp.Objectives = objs
	if len(errs) > 0 {
		sp.Objectives = nil
	}
	sp.Normalize()
	opt, perrs := sp.Prepare()
	if sp.LogTZ != "" {
		loc, err := time.LoadLocation(sp.LogTZ)
		if err != nil {
			f.add("log_tz", "%q is not a time zone (an IANA name such as Europe/Paris)", sp.LogTZ)
		}
		opt.Log.Location = loc
	}
	for _, e := range perrs {
		key := e.Path
		if strings.HasPrefix(key, "objectives") {
			f.add("objectives", "%s: %s", e.Path, e.Msg)
			continue
		}
		if key == "log" && f.Upload == "" {
			f.add("log", "%s", e.Msg)
			continue
		}
		f.add(key, "%s", e.Msg)
	}
	if f.HasErrors() {
		return sp
	}
	lf, err := logs.Open(sp.Log)
	if err != nil {
		f.add("log", "the log could not be opened: %v", err)
		return sp
	}
	defer lf.Close()
	err = shadow.Check(lf, opt)
	var tooMany *shadow.TooManyBad
	switch {
	case errors.As(err, &tooMany):
		st := tooMany.Stats
		f.add("log", "%d of the first %d lines (%.2f%%) are bad, more than the %s%% allowed (max bad lines): nothing was started. Check the log format.",
			st.Bad, st.Lines, st.BadPct(), format.Num(sp.MaxBadPct))
		for _, b := range st.FirstBad {
			f.BadLines = append(f.BadLines, fmt.Sprintf("line %d: %s: %s", b.Line, b.Reason, format.Clip(b.Text, 200)))
		}
	case err != nil:
		f.add("log", "%v", err)
	}
	return sp
}

// ShadowRunData is a shadow run's page.
type ShadowRunData struct {
	Run   *storage.Run
	Spec  *shadow.Spec
	View  *shadow.View // nil until the run has results
	Files []storage.File
	Chart charts.Chart
	// Limiter is the imported setting in words.
	Limiter string
	Notice  string
	// Compare is a re-run's check of every file against the original's.
	Compare *RerunCompare
}

// shadowRunPage renders a shadow run: its progress while it reads, then
// the Shadow section (shadow.json) and the downloads.
func (s *Server) shadowRunPage(w http.ResponseWriter, r *http.Request) {
	run := s.runOr404(w, r)
	if run == nil {
		return
	}
	d := &ShadowRunData{Run: run}
	sp, err := shadow.DecodeSpec(run.Config)
	if err != nil {
		d.Notice = "The stored replay no longer decodes with this engine: " + err.Error()
	} else {
		d.Spec = sp
		if opt, errs := sp.Prepare(); len(errs) == 0 && opt.Import != nil {
			var stages []string
			for _, st := range opt.Import.Stages {
				stages = append(stages, fmt.Sprintf("%s by %s: %s", st.Name, st.Key, st.Spec.Label()))
			}
			d.Limiter = opt.Import.Format + " " + opt.Import.Where + ": " + strings.Join(stages, "; ")
		}
	}
	if storage.HasResults(run.Status) {
		if d.Files, err = s.store.Files(r.Context(), run.ID); err != nil {
			s.internalError(w, r, "list the run's files", err)
			return
		}
		f, err := s.store.File(r.Context(), run.ID, shadow.ViewFile)
		if err != nil {
			s.internalError(w, r, "read the run's verdict", err)
			return
		}
		if d.View, err = shadow.DecodeView(f.Data); err != nil {
			s.internalError(w, r, "read the run's verdict", err)
			return
		}
		d.Chart = charts.ShadowTimeline(d.View)
	}
	if run.RerunOf != "" {
		if !storage.HasResults(run.Status) {
			d.Compare = &RerunCompare{OriginalID: run.RerunOf}
		} else if d.Compare, err = s.compareFiles(r, run.RerunOf, d.Files); err != nil {
			s.internalError(w, r, "compare with the original", err)
			return
		} else {
			d.Compare.Engine = run.EngineVersion
		}
	}
	s.render(w, r, http.StatusOK, ShadowRunPage(d))
}

// rerunShadow replays a shadow run's document again, as a re-run of it:
// its page compares every file's sha256 with the original's.
func (s *Server) rerunShadow(w http.ResponseWriter, r *http.Request, run *storage.Run) {
	sp, err := shadow.DecodeSpec(run.Config)
	if err != nil {
		s.errorPage(w, r, http.StatusUnprocessableEntity, "Cannot re-run", "The stored replay no longer decodes: "+err.Error())
		return
	}
	next, err := s.runner.SubmitShadow(r.Context(), sp, rerunName(*run), run.ID)
	if err != nil {
		status := submitStatus(w, err)
		if status == http.StatusInternalServerError {
			s.internalError(w, r, "queue the re-run", err)
			return
		}
		s.errorPage(w, r, status, "Cannot re-run", "The re-run could not be queued: "+err.Error())
		return
	}
	http.Redirect(w, r, "/runs/"+next.ID, http.StatusSeeOther)
}

// shadowStamp prints Unix ms as the page prints times (UTC).
func shadowStamp(ms float64) string {
	if ms == 0 {
		return ""
	}
	return fmtTime(time.UnixMilli(int64(ms)))
}

// pct prints a share in percent with two places.
func pct(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) + "%" }

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// optMS prints an optional ms value ("–": none).
func optMS(x *float64) string {
	if x == nil {
		return "–"
	}
	return format.Num(*x) + " ms"
}

// keyText prints a key, the empty key saying what it is.
func keyText(k string) string {
	if k == "" {
		return "(empty key: not limited)"
	}
	return k
}

// importFormats are the config formats the form offers.
func importFormats() []string { return deploy.ImportFormats() }

// logServers are the log formats the form offers.
func logServers() []string { return accesslog.Servers() }

// recommendedLine is the recommendation in words.
func recommendedLine(v *shadow.View) string {
	if v.Recommended < 0 || v.Recommended >= len(v.WhatIf) {
		return "No what-if setting to recommend."
	}
	w := v.WhatIf[v.Recommended]
	if v.Feasible == 0 {
		var miss []string
		for _, j := range v.Misses {
			miss = append(miss, v.Objectives[j].String())
		}
		return fmt.Sprintf("No setting of the sweep meets every objective. The closest: rate ×%s, burst ×%s (%s), which misses %s.",
			format.Num(w.Rate), format.Num(w.Burst), w.Setting, strings.Join(miss, "; "))
	}
	line := fmt.Sprintf("Recommended: rate ×%s, burst ×%s (%s), %d of %d settings meeting every objective",
		format.Num(w.Rate), format.Num(w.Burst), w.Setting, v.Feasible, len(v.WhatIf))
	if v.Binding >= 0 && v.Binding < len(v.Objectives) {
		line += fmt.Sprintf("; binding: %s, margin %s", v.Objectives[v.Binding], pct(100*v.Margin))
	}
	return line + "."
}

// shadowErrorKeys are the inputs with errors, in the form's order.
func shadowErrorKeys(f *ShadowForm) []string {
	var out []string
	for _, k := range append([]string{"log_file"}, shadowKeys...) {
		if len(f.Err(k)) > 0 {
			out = append(out, k)
		}
	}
	for k := range f.Errors { // any other key the engine named
		if !slices.Contains(out, k) && !slices.Contains(shadowKeys, k) && k != "log_file" {
			out = append(out, k)
		}
	}
	return out
}

func objectiveMetricsText() string { return strings.Join(shadow.ObjectiveMetrics(), ", ") }

func choiceText(c string) string {
	if c == "" {
		return "(detect)"
	}
	return c
}

func logChoiceNone(f *ShadowForm) string {
	if f.Upload != "" {
		return "(the uploaded log)"
	}
	return "(none: upload one)"
}

func share(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func objectivesText(v *shadow.View) string {
	var out []string
	for _, o := range v.Objectives {
		out = append(out, o.String())
	}
	return strings.Join(out, "; ")
}

func recommendedMark(v *shadow.View) string {
	if v.Feasible == 0 {
		return "closest"
	}
	return "recommended"
}
