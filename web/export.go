package web

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/charts"
	"github.com/ratelab/ratelab/web/format"
)

// "Deploy this setting": a point of a run as the configuration that
// deploys it (experiments/deploy makes the text, the notes and the rerun;
// this file only shows them). The run page's section, the download, the
// rerun button's POST and GET /api/runs/{id}/export.

// maxDeployPoints bounds the deploy section's point menu; a larger sweep
// picks its point from the results table.
const maxDeployPoints = 1000

// DeployView is the run page's "Deploy this setting" section for the
// chosen point.
type DeployView struct {
	RunID  string
	Point  int
	Label  string        // the point: "token-bucket rate_rps=100 burst=20"
	Points []DeployPoint // the point menu (nil past maxDeployPoints)
	// Formats are every format, each saying whether it deploys the point.
	Formats []DeployFormat
	// Format is the chosen format; Export its export, or Reason why it
	// cannot deploy the point.
	Format *deploy.Format
	Export *deploy.Export
	Reason string
	// Note says what the answer makes of the point (charts.DeployNote):
	// recommended, or, Warn, what it misses; "" without objectives.
	Note string
	Warn bool
}

// DeployPoint is an entry of the point menu.
type DeployPoint struct {
	Index int
	Label string
}

// DeployFormat is one format and whether it deploys the point.
type DeployFormat struct {
	Name, Label string
	Reason      string // why it cannot ("" when it can)
}

// fileName is the chosen export's download name (exportFileName).
func (v *DeployView) fileName() string { return exportFileName(v.RunID, v.Point, v.Format.File) }

// exportFileName is an export's download name: the format's file named
// with the run and the point ("ratelab-limit-req-RUN-point3.conf"), so
// exports of several points and runs never overwrite each other; a Java
// file keeps its public class's name, which javac requires.
func exportFileName(runID string, point int, file string) string {
	ext := path.Ext(file)
	if ext == ".java" {
		return file
	}
	return fmt.Sprintf("%s-%s-point%d%s", strings.TrimSuffix(file, ext), runID, point, ext)
}

// downloadURL is the chosen export as a file.
func (v *DeployView) downloadURL() string {
	return fmt.Sprintf("/runs/%s/export?point=%d&format=%s", v.RunID, v.Point, v.Format.Name)
}

// pointLabel names point p as the results table does, with extra, what
// tells it apart beyond its limiter (charts.PointExtras: its policy,
// server, load, swept values), as the bounds table does.
func pointLabel(p *experiments.Point, extra string) string {
	label := p.Limiter
	if params := limiter.FormatParams(p.Type, p.Params); params != "" {
		label += " " + params
	}
	if extra != "" {
		label += " (" + extra + ")"
	}
	return label
}

// newDeployView builds the section for point of the config; formatName
// picks the format ("" or unknown: the first that deploys the point).
func newDeployView(runID string, cfg *experiments.Config, point int, formatName string) *DeployView {
	pts := cfg.Points()
	pt, err := deploy.PointOf(cfg, point)
	if err != nil {
		return nil
	}
	extras := charts.PointExtras(cfg, pts)
	v := &DeployView{RunID: runID, Point: point, Label: pointLabel(&pts[point], extras[point])}
	if len(pts) <= maxDeployPoints {
		for i := range pts {
			v.Points = append(v.Points, DeployPoint{Index: i, Label: pointLabel(&pts[i], extras[i])})
		}
	}
	chosen := -1
	for i, a := range deploy.Availability(pt) {
		f := DeployFormat{Name: a.Format.Name, Label: a.Format.Label}
		if a.Err != nil {
			f.Reason = reasonOf(a.Err)
		}
		v.Formats = append(v.Formats, f)
		if a.Format.Name == formatName || (chosen < 0 && formatName == "" && a.Err == nil) {
			chosen = i
		}
	}
	if chosen < 0 {
		for i, f := range v.Formats {
			if f.Reason == "" {
				chosen = i
				break
			}
		}
	}
	if chosen < 0 {
		v.Reason = "No format deploys this point: " + v.Formats[0].Reason
		return v
	}
	v.Format, _ = deploy.Lookup(v.Formats[chosen].Name)
	v.Export, err = v.Format.Export(pt)
	if err != nil {
		v.Export, v.Reason = nil, reasonOf(err)
	}
	return v
}

// reasonOf is an export error as a sentence.
func reasonOf(err error) string {
	var ne *deploy.NotExpressible
	if errors.As(err, &ne) {
		return ne.Reason
	}
	return err.Error()
}

// exportError is what is wrong with an export request: the status, the
// query field at fault ("point" or "format", "" when neither) and the
// message.
type exportError struct {
	status int
	path   string
	msg    string
}

// exportRequest reads ?point=N&format=F of a stored run: its config, the
// point and the export, or what is wrong.
func (s *Server) exportRequest(r *http.Request, run *storage.Run, pointArg, formatArg string) (*experiments.Config, *deploy.Export, *exportError) {
	cfg, err := document.DecodeConfig(run.Config)
	if err != nil {
		return nil, nil, &exportError{http.StatusUnprocessableEntity, "", "the stored config no longer decodes: " + err.Error()}
	}
	point, err := strconv.Atoi(pointArg)
	if err != nil {
		return nil, nil, &exportError{http.StatusBadRequest, "point", fmt.Sprintf("point %q: give a point's index, a row of results.csv from 0", format.Clip(pointArg, 40))}
	}
	pt, err := deploy.PointOf(cfg, point)
	if err != nil {
		return nil, nil, &exportError{http.StatusBadRequest, "point", err.Error()}
	}
	e, err := deploy.Render(formatArg, pt)
	var ne *deploy.NotExpressible
	switch {
	case errors.Is(err, deploy.ErrUnknownFormat):
		return nil, nil, &exportError{http.StatusBadRequest, "format", err.Error()}
	case errors.As(err, &ne):
		var can []string
		for _, a := range deploy.Availability(pt) {
			if a.Err == nil {
				can = append(can, a.Format.Name)
			}
		}
		return nil, nil, &exportError{http.StatusUnprocessableEntity, "format", fmt.Sprintf("%v (formats that deploy this point: %v)", err, can)}
	case err != nil:
		return nil, nil, &exportError{http.StatusInternalServerError, "", err.Error()}
	}
	return cfg, e, nil
}

// runExport sends a point's export as a file.
func (s *Server) runExport(w http.ResponseWriter, r *http.Request) {
	run := s.runOr404(w, r)
	if run == nil {
		return
	}
	q := r.URL.Query()
	_, e, xerr := s.exportRequest(r, run, q.Get("point"), q.Get("format"))
	if xerr != nil {
		s.errorPage(w, r, xerr.status, "Cannot export", xerr.msg)
		return
	}
	point, _ := strconv.Atoi(q.Get("point")) // exportRequest read it
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": exportFileName(run.ID, point, e.Format.File)}))
	h.Set("Content-Length", strconv.Itoa(len(e.Text)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(e.Text))
}

// rerunExport starts a new run: the stored config with the export's rerun
// limiter (the library-exact gate at the deployed setting) added.
func (s *Server) rerunExport(w http.ResponseWriter, r *http.Request) {
	run := s.runOr404(w, r)
	if run == nil {
		return
	}
	cfg, e, xerr := s.exportRequest(r, run, r.PostFormValue("point"), r.PostFormValue("format"))
	if xerr != nil {
		s.errorPage(w, r, xerr.status, "Cannot rerun", xerr.msg)
		return
	}
	if e.Rerun == nil {
		msg := "This point already is the library's gate at the deployed setting: its results show what the deployment does."
		if !e.Exact {
			msg = "No gate of the lab reproduces this deployment; the notes say how it differs from the point."
		}
		s.errorPage(w, r, http.StatusUnprocessableEntity, "Nothing to rerun", msg)
		return
	}
	next, err := deploy.RerunConfig(cfg, e)
	if err != nil {
		s.errorPage(w, r, http.StatusUnprocessableEntity, "Cannot rerun", err.Error())
		return
	}
	name := format.Clip(fmt.Sprintf("%s + %s", runName(*run), next.Limiters[len(next.Limiters)-1].Label()), 200)
	nr, err := s.runner.Submit(r.Context(), next, name, "")
	if err != nil {
		status := submitStatus(w, err)
		msg := "The rerun could not be queued: " + err.Error()
		if status == http.StatusTooManyRequests {
			msg = fmt.Sprintf("The queue of waiting sweeps is full; try again in %d seconds.", RetryAfterSeconds)
		}
		s.errorPage(w, r, status, "Cannot rerun", msg)
		return
	}
	http.Redirect(w, r, "/runs/"+nr.ID, http.StatusSeeOther)
}

// APIExport is GET /api/runs/{id}/export?point=N&format=F: a point of the
// run deployed in a format.
type APIExport struct {
	Format string         `json:"format"`
	Label  string         `json:"label"`
	File   string         `json:"file"`
	Point  int            `json:"point"`
	Type   limiter.Type   `json:"type"`
	Params limiter.Params `json:"params"`
	Text   string         `json:"text"`
	Notes  []string       `json:"notes"`
	// Exact: the point is the library's gate at the deployed setting.
	Exact bool `json:"exact"`
	// Rerun is the limiter to add to the config to see the deployed
	// setting (the library-exact gate), null when Exact or when none.
	Rerun *limiter.Spec `json:"rerun"`
}

func (s *Server) apiExport(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	run, err := s.getRun(r, id)
	if errors.Is(err, storage.ErrNotFound) {
		problem(w, r, http.StatusNotFound, fmt.Sprintf("no run %q", format.Clip(id, 40)), nil)
		return
	}
	if err != nil {
		s.log.Error("api: read run", "run", id, "err", err)
		problem(w, r, http.StatusInternalServerError, "read the run: "+err.Error(), nil)
		return
	}
	q := r.URL.Query()
	cfg, e, xerr := s.exportRequest(r, run, q.Get("point"), q.Get("format"))
	if xerr != nil {
		problem(w, r, xerr.status, xerr.msg, field.List{{Path: xerr.path, Msg: xerr.msg}})
		return
	}
	point, _ := strconv.Atoi(q.Get("point"))
	p := cfg.Points()[point]
	out := APIExport{Format: e.Format.Name, Label: e.Format.Label, File: e.Format.File, Point: point, Type: p.Type, Params: p.Params,
		Text: e.Text, Notes: e.Notes, Exact: e.Exact, Rerun: e.Rerun}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	writeJSON(w, http.StatusOK, out)
}

// deployFormatKey is the ?format= a run page's deploy section shows, as a
// page-cache key: a known format's name, else "" (the section's default).
func deployFormatKey(name string) string {
	for _, f := range deploy.Formats() {
		if f.Name == name {
			return name
		}
	}
	return ""
}
