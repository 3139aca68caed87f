package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/storage"
)

// maxConfigShown bounds the config document printed on the run page.
const maxConfigShown = 64 << 10

// RunPageData is everything the run page shows.
type RunPageData struct {
	Run        *storage.Run
	ConfigJSON string
	Summary    *ConfigSummary // nil when the stored config no longer decodes
	Files      []storage.File
	View       *ResultView // nil until the run is done
	Groups     []*ChartGroup
	Table      ResultsTable
	Compare    *RerunCompare // nil unless the run re-runs another
	Notice     string
	Chain      bool // a chain limiter: edited as a document, not in the form
}

// ConfigSummary is the config in a few readable lines.
type ConfigSummary struct {
	Description string
	Items       []KeyValue
	Limiters    []string
}

// KeyValue is one line of a summary.
type KeyValue struct{ Key, Value string }

// ResultsTable is the results table: headers with units and formatted cells.
type ResultsTable struct {
	Header []TableHeader
	Rows   []TableRow
}

// TableHeader is one column of the results table.
type TableHeader struct {
	Key, Label string
	Num        bool
}

// TableRow is one point.
type TableRow struct {
	Cells  []string
	Link   string // the run page showing this point's time series
	Chosen bool
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

func (s *Server) runPageData(r *http.Request, run *storage.Run, chosen int) (*RunPageData, error) {
	ctx := r.Context()
	d := &RunPageData{Run: run, ConfigJSON: string(run.Config)}
	if len(d.ConfigJSON) > maxConfigShown {
		// A large trace: show the start; manifest.json holds all of it.
		d.ConfigJSON = d.ConfigJSON[:maxConfigShown] + fmt.Sprintf("\n… (%s in all; the whole document is in manifest.json)", byteSize(len(run.Config)))
	}
	if cfg, err := experiments.DecodeConfig(run.Config); err == nil {
		d.Summary = summarize(cfg)
		d.Chain = hasChain(cfg)
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
	d.View = NewResultView(res, chosen)
	if res.Arrivals == 0 {
		// Flat zero charts said nothing about why.
		d.Notice = fmt.Sprintf("The workload produced no arrivals in its %s ms arrival window, so every measure below is 0: lengthen the window or raise the rates.",
			formatNum(res.Config.Workload.DurationMS))
	}
	d.Groups = d.View.Groups()
	d.Table = buildResultsTable(d.View, run.ID)
	if run.RerunOf != "" {
		d.Compare, err = s.compareFiles(r, run.RerunOf, files)
		if err != nil {
			return nil, err
		}
		d.Compare.Engine = run.EngineVersion
	}
	return d, nil
}

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

func summarize(cfg *experiments.Config) *ConfigSummary {
	sum := &ConfigSummary{Description: cfg.Description}
	add := func(k, v string) { sum.Items = append(sum.Items, KeyValue{k, v}) }
	add("Arrival window", formatNum(cfg.Workload.DurationMS)+" ms")
	add("Seed", fmt.Sprint(cfg.Seed))
	var parts []string
	for _, p := range cfg.Workload.Parts {
		parts = append(parts, p.String())
	}
	add("Workload", strings.Join(parts, "; "))
	add("Server", fmt.Sprintf("%d worker(s), %s ms service (capacity %s req/s), deadline %s ms",
		cfg.Server.Workers, formatNum(cfg.Server.ServiceMS), formatNum(cfg.Server.RateRPS()), formatNum(cfg.Server.DeadlineMS)))
	add("Windows", fmt.Sprintf("rolling %s ms, fairness %s ms", formatNum(cfg.Metrics.RollingWindowMS), formatNum(cfg.Metrics.FairnessWindowMS)))
	add("Points", fmt.Sprint(len(cfg.Points())))
	for _, l := range cfg.Limiters {
		var ps []string
		for _, p := range limiter.ParamsOf(l.Type) {
			ps = append(ps, fmt.Sprintf("%s = %s %s", p, FormatValues(*l.ValuesOf(p)), paramUnit(p)))
		}
		label := l.Label()
		if l.Name != "" && l.Name != l.Type {
			label += " (" + l.Type + ")"
		}
		if l.Shares != "" && limiter.HasShares(l.Type) {
			ps = append(ps, "shares "+l.Shares)
		}
		if len(ps) > 0 {
			label += ": " + strings.Join(ps, "; ")
		}
		sum.Limiters = append(sum.Limiters, label)
	}
	return sum
}

// tableColumns are the results table's columns after limiter and swept
// value: results.csv keys with their labels and units.
var tableColumns = []struct{ key, label string }{
	{"offered_rps", "offered (req/s)"},
	{"goodput_rps", "goodput (req/s)"},
	{"reject_pct", "rejected (%)"},
	{"served_late_pct", "served late (%)"},
	{"gate_delay_p99_ms", "gate delay p99 (ms)"},
	{"server_wait_p99_ms", "server wait p99 (ms)"},
	{"sojourn_p99_ms", "sojourn p99 (ms)"},
	{"downstream_peak_rps", "downstream peak (req/s)"},
	{"rolling_max", "rolling max (requests)"},
	{"utilization_pct", "utilization (%)"},
	{"jain_index", "Jain's index"},
}

func buildResultsTable(v *ResultView, runID string) ResultsTable {
	multi := len(v.Res.Clients) > 1
	t := ResultsTable{Header: []TableHeader{{Key: "limiter", Label: "limiter"}, {Key: "swept", Label: "swept value"}}}
	var cols []*experiments.Column
	for _, c := range tableColumns {
		if c.key == "jain_index" && !multi {
			continue
		}
		col := experiments.ColumnByKey(c.key)
		if col == nil {
			continue
		}
		cols = append(cols, col)
		t.Header = append(t.Header, TableHeader{Key: c.key, Label: c.label, Num: true})
	}
	for i := range v.Res.Points {
		p := &v.Res.Points[i]
		swept := "—"
		if p.Swept != "" {
			swept = fmt.Sprintf("%s = %s", p.Swept, formatNum(p.SweptValue()))
		}
		// The sweep line's name carries the limiter's other swept
		// parameters ("token-bucket (rate_rps=50)"): with the bare limiter
		// name, rows of a two-parameter sweep looked alike.
		name := p.Limiter
		if li := v.lineOf(p); li >= 0 {
			name = v.Lines[li].Name
		}
		row := TableRow{Cells: []string{name, swept}, Link: fmt.Sprintf("/runs/%s?point=%d#timeline", runID, i), Chosen: i == v.Chosen}
		for _, col := range cols {
			val, ok := col.Value(p)
			cell := ""
			if ok {
				cell = string(experiments.AppendValue(nil, col.Format, val))
			}
			row.Cells = append(row.Cells, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func shortSHA(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}
