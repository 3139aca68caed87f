package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/charts"
	"github.com/ratelab/ratelab/web/form"
	"github.com/ratelab/ratelab/web/format"
)

// maxConfigShown bounds the config document printed on the run page.
const maxConfigShown = 64 << 10

// RunPageData is everything the run page shows.
type RunPageData struct {
	Run        *storage.Run
	ConfigJSON string
	Summary    *ConfigSummary // nil when the stored config no longer decodes
	Files      []storage.File
	Result     *charts.Page  // the charts and tables; nil until the run is done
	Compare    *RerunCompare // nil unless the run re-runs another
	Notice     string
	Chain      bool // a chain limiter: edited as a document, not in the form
	// Tags are the run's tags (its note is Run.Note): runs.templ.
	Tags []string
	// Query is what the address asks of the page (point, table order and
	// filter, Pareto columns), Format the deploy section's format: the
	// page's links keep them.
	Query  charts.Query
	Format string

	// Deploy is "Deploy this setting" for the chosen point (nil until
	// the run is done).
	Deploy *DeployView
}

// editURL is where a run's config is edited: the form, or the config
// document editor for chains.
func (d *RunPageData) editURL() string {
	if d.Chain {
		return "/calculus/edit/" + d.Run.ID
	}
	return "/?from=" + d.Run.ID
}

// RerunCompare is the reproducibility check of a re-run: each file's sha256
// beside the original's.
type RerunCompare struct {
	OriginalID string
	// OriginalStatus is the original run's status ("" when it is gone).
	OriginalStatus string
	Ready          bool // both runs are done
	AllMatch       bool
	Mismatches     int
	Rows           []FileCompare
	// OriginalEngine and Engine are the engine versions of the two runs:
	// when they differ, manifest.json (which records it) cannot match.
	OriginalEngine, Engine string
}

// EngineChanged reports whether the two runs ran on different engines.
func (c *RerunCompare) EngineChanged() bool {
	return c.OriginalEngine != "" && c.Engine != "" && c.OriginalEngine != c.Engine
}

// FileCompare is one file of the check; a file missing on one side shows
// an empty hash and does not match.
type FileCompare struct {
	Name, Original, Rerun string
	Match                 bool
}

// runPageData builds the whole run page of a run; chosen is the point
// whose time series it shows (< 0: the default).
func (s *Server) runPageData(r *http.Request, run *storage.Run, chosen int) (*RunPageData, error) {
	ctx := r.Context()
	d := &RunPageData{Run: run, ConfigJSON: string(run.Config)}
	if tags, note, err := s.store.Labels(ctx, run.ID); err == nil {
		d.Tags, run.Note = tags, note // saving them drops the run's cached pages (runs_list.go)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	if len(d.ConfigJSON) > maxConfigShown {
		d.ConfigJSON = d.ConfigJSON[:maxConfigShown] + fmt.Sprintf("\n… (%s in all; the whole document is in manifest.json)", format.Bytes(len(run.Config)))
	}
	if cfg, err := document.DecodeConfig(run.Config); err == nil {
		d.Summary = summarize(cfg)
		d.Chain = form.HasChain(cfg)
	} else {
		d.Notice = "The stored config no longer decodes with this engine: " + err.Error()
	}
	if !storage.HasResults(run.Status) {
		if run.RerunOf != "" {
			d.Compare = &RerunCompare{OriginalID: run.RerunOf}
		}
		return d, nil
	}
	files, err := s.store.Files(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("files of run %s: %w", run.ID, err)
	}
	d.Files = files
	res, err := s.store.Result(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("result of run %s: %w", run.ID, err)
	}
	d.Query = pageQuery(r)
	d.Query.Point = chosen
	d.Format = deployFormatKey(r.URL.Query().Get("format"))
	d.Result = charts.NewPageQuery(res, d.Query, run.ID)
	if cfg, err := document.DecodeConfig(run.Config); err == nil && len(res.Points) > 0 {
		d.Deploy = newDeployView(run.ID, cfg, d.Result.View.Chosen, r.URL.Query().Get("format"))
		if d.Deploy != nil {
			d.Deploy.Note, d.Deploy.Warn = charts.DeployNote(d.Result.View, d.Result.View.Chosen)
			marks := charts.PointMarks(d.Result.View.Answer)
			for i := range d.Deploy.Points {
				if p := &d.Deploy.Points[i]; p.Index < len(marks) && marks[p.Index] != "" && marks[p.Index] != "missing points" {
					p.Label += " · " + marks[p.Index]
				}
			}
		}
	}
	if _, most := res.ArrivalsSpan(); most == 0 {
		d.Notice = fmt.Sprintf("The workload produced no arrivals in its %s ms arrival window, so every measure below is 0: lengthen the window or raise the rates.",
			format.Num(res.Config.Workload.DurationMS))
	}
	if run.RerunOf != "" {
		d.Compare, err = s.compareFiles(r, run.RerunOf, files)
		if err != nil {
			return nil, err
		}
		d.Compare.Engine = run.EngineVersion
	}
	return d, nil
}

// pageQuery reads what a run page's address asks (charts.Query): point,
// sort and dir (asc, desc) of the results table, feasible=1 and
// allscenarios=1 (its filters: the point, its setting meets every
// objective), its columns
// cols (comma-separated, or repeated: the chooser's checkboxes), and the
// Pareto chart's columns px and py, the settings table's ssort, sdir and
// sfeasible. What the page cannot use is dropped.
func pageQuery(r *http.Request) charts.Query {
	v := r.URL.Query()
	q := charts.Query{Point: -1, Sort: v.Get("sort"), Desc: v.Get("dir") == "desc", Feasible: v.Get("feasible") == "1",
		SettingFeasible: v.Get("allscenarios") == "1",
		ParetoX:         v.Get("px"), ParetoY: v.Get("py"), Cols: strings.Join(v["cols"], ","),
		SettingsSort: v.Get("ssort"), SettingsDesc: v.Get("sdir") == "desc", SettingsFeasible: v.Get("sfeasible") == "1"}
	if p, err := strconv.Atoi(v.Get("point")); err == nil && p >= 0 {
		q.Point = p
	}
	return q.Clean()
}

// pageURL is the run page's address asking q (with the page's deploy
// format), then anchor ("#results").
func (d *RunPageData) pageURL(q charts.Query, anchor string) string {
	v := url.Values{}
	if q.Point >= 0 {
		v.Set("point", strconv.Itoa(q.Point))
	}
	if q.Sort != "" {
		v.Set("sort", q.Sort)
		if q.Desc {
			v.Set("dir", "desc")
		}
	}
	if q.Feasible {
		v.Set("feasible", "1")
	}
	if q.SettingFeasible {
		v.Set("allscenarios", "1")
	}
	if q.ParetoX != "" {
		v.Set("px", q.ParetoX)
	}
	if q.ParetoY != "" {
		v.Set("py", q.ParetoY)
	}
	if q.Cols != "" {
		v.Set("cols", q.Cols)
	}
	if q.SettingsSort != "" {
		v.Set("ssort", q.SettingsSort)
		if q.SettingsDesc {
			v.Set("sdir", "desc")
		}
	}
	if q.SettingsFeasible {
		v.Set("sfeasible", "1")
	}
	if d.Format != "" {
		v.Set("format", d.Format)
	}
	u := "/runs/" + d.Run.ID
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u + anchor
}

// hiddenQuery is the page's address as hidden form inputs, without the
// names a form sets itself.
func (d *RunPageData) hiddenQuery(except ...string) [][2]string {
	u, _ := url.Parse(d.pageURL(d.Query, "")) // pageURL builds a valid URL
	var out [][2]string
	v := u.Query()
	for _, name := range []string{"point", "sort", "dir", "feasible", "allscenarios", "px", "py", "cols", "ssort", "sdir", "sfeasible", "format"} {
		if val := v.Get(name); val != "" && !slices.Contains(except, name) {
			out = append(out, [2]string{name, val})
		}
	}
	return out
}

// sortURL is the address sorting the results table by key: best first
// (firstDir), then the other way.
func (d *RunPageData) sortURL(key string) string {
	q := d.Query
	if q.Sort == key {
		q.Desc = !q.Desc
	} else {
		q.Desc = d.firstDir(key) == "desc"
	}
	q.Sort = key
	return d.pageURL(q, "#results")
}

// defaultColumnsURL is the page's address with the results table's
// default columns.
func (d *RunPageData) defaultColumnsURL() string {
	q := d.Query
	q.Cols = ""
	return d.pageURL(q.Clean(), "#results")
}

// firstDir is the direction a column of the results or settings table
// sorts in on its first click, the one convention of every table: best
// first, so "desc" for a measure where higher is better (goodput, Jain's
// index, a setting's margin; decide.LowerIsBetter, a settings column
// read as its measure), else "asc" (delays, shares refused, parameters).
func (d *RunPageData) firstDir(key string) string {
	var objs []experiments.Objective
	if d.Result != nil {
		objs = d.Result.View.Res.Config.Objectives
	}
	return firstDirOf(objs, key)
}

// firstDirOf is firstDir under objectives objs (the run list's value
// columns: none).
func firstDirOf(objs []experiments.Objective, key string) string {
	switch {
	case key == "margin":
		return "desc"
	case key == "point" || key == "limiter" || strings.HasPrefix(key, "pass_") || key == "meets_all":
		return "asc"
	}
	m := strings.TrimPrefix(key, "worst_")
	if c := experiments.ColumnByKey(m); c == nil || c.Value == nil {
		return "asc"
	}
	if decide.LowerIsBetter(objs, m) {
		return "asc"
	}
	return "desc"
}

// settingsSortURL is the address sorting the settings table by key: best
// first (firstDir), then the other way.
func (d *RunPageData) settingsSortURL(key string) string {
	q := d.Query
	if q.SettingsSort == key {
		q.SettingsDesc = !q.SettingsDesc
	} else {
		q.SettingsDesc = d.firstDir(key) == "desc"
	}
	q.SettingsSort = key
	return d.pageURL(q, "#settings")
}

// settingsAriaSort is a settings column's aria-sort.
func (d *RunPageData) settingsAriaSort(key string) string {
	switch {
	case d.Query.SettingsSort != key:
		return "none"
	case d.Query.SettingsDesc:
		return "descending"
	}
	return "ascending"
}

// selectURL is the address showing point i in Deploy (and Over time),
// the rest kept.
func (d *RunPageData) selectURL(i int) string {
	q := d.Query
	q.Point = i
	return d.pageURL(q, "#deploy")
}

// pointURL is the address showing point i's time series, the rest kept.
func (d *RunPageData) pointURL(i int) string {
	q := d.Query
	q.Point = i
	return d.pageURL(q, "#timeline")
}

// ariaSort is a results column's aria-sort.
func (d *RunPageData) ariaSort(key string) string {
	switch {
	case d.Query.Sort != key:
		return "none"
	case d.Query.Desc:
		return "descending"
	}
	return "ascending"
}

// compareFiles is the reproducibility check of a re-run's files against
// the original run's.
func (s *Server) compareFiles(r *http.Request, originalID string, files []storage.File) (*RerunCompare, error) {
	c := &RerunCompare{OriginalID: originalID}
	orig, err := s.store.Get(r.Context(), originalID)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return c, nil
		}
		return nil, fmt.Errorf("original run %s: %w", originalID, err)
	}
	c.OriginalStatus = orig.Status
	c.OriginalEngine = orig.EngineVersion
	if orig.Status != storage.StatusDone {
		return c, nil
	}
	origFiles, err := s.store.Files(r.Context(), originalID)
	if err != nil {
		return nil, fmt.Errorf("files of original run %s: %w", originalID, err)
	}
	c.Ready = true
	index := map[string]int{}
	for _, f := range origFiles {
		index[f.Name] = len(c.Rows)
		c.Rows = append(c.Rows, FileCompare{Name: f.Name, Original: f.SHA256})
	}
	for _, f := range files {
		i, ok := index[f.Name]
		if !ok {
			i = len(c.Rows)
			c.Rows = append(c.Rows, FileCompare{Name: f.Name})
		}
		c.Rows[i].Rerun = f.SHA256
	}
	for i := range c.Rows {
		c.Rows[i].Match = c.Rows[i].Original != "" && c.Rows[i].Original == c.Rows[i].Rerun
		if !c.Rows[i].Match {
			c.Mismatches++
		}
	}
	c.AllMatch = c.Mismatches == 0 && len(c.Rows) > 0
	return c, nil
}

// shortSHA shortens a sha256 for the downloads table.
func shortSHA(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}
