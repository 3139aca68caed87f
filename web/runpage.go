package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ratelab/ratelab/experiments"
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
	if len(d.ConfigJSON) > maxConfigShown {
		d.ConfigJSON = d.ConfigJSON[:maxConfigShown] + fmt.Sprintf("\n… (%s in all; the whole document is in manifest.json)", format.Bytes(len(run.Config)))
	}
	if cfg, err := experiments.DecodeConfig(run.Config); err == nil {
		d.Summary = summarize(cfg)
		d.Chain = form.HasChain(cfg)
	} else {
		d.Notice = "The stored config no longer decodes with this engine: " + err.Error()
	}
	if run.Status != storage.StatusDone {
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
	d.Result = charts.NewPage(res, chosen, run.ID)
	if cfg, err := experiments.DecodeConfig(run.Config); err == nil && len(res.Points) > 0 {
		d.Deploy = newDeployView(run.ID, cfg, d.Result.View.Chosen, r.URL.Query().Get("format"))
	}
	if res.Arrivals == 0 {
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
