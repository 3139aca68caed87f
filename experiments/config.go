// Package experiments is ratelab's deterministic engine: a sweep replays one
// arrival list through many limiters and parameter values into a server
// model and measures what each costs.
//
// A Config is the whole sweep as one versioned JSON document: the same
// document the CLI reads, the web form produces, and the manifest records.
// Nothing in this package or below reads the clock, the disk, the network or
// a global random source: same config, same bytes out.
//
// This package is the engine's schema: the Config and its sections (how
// they normalize and validate, the points and axes of the sweep they
// describe), the Result, Point, Metrics and Series a sweep fills, and the
// results columns. Its children do the work and import it, never the
// other way: experiments/document reads a document into a Config,
// experiments/simulate runs one point, experiments/sweep runs them all
// (imports_test.go checks the direction).
package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/lists"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// Version is the config document version this engine reads.
const Version = 1

// EngineVersion changes whenever the engine's numbers could change.
const EngineVersion = "1.0.11"

// Limits on one run, so a request cannot eat the machine.
const (
	// MaxArrivals bounds a load whose points run the queue model, which
	// holds its arrivals in memory (12 bytes each); the forward pass
	// streams them, bounded by the work budget alone.
	MaxArrivals = 20_000_000
	// MaxDecisions is the engine's work budget: arrivals × points, each a
	// gate decision. It admits a day of 10^9 arrivals through 100 points
	// from the CLI; Options.MaxDecisions lowers it for a run (the web lab
	// runs with MaxWork).
	MaxDecisions   = 100_000_000_000
	MaxPoints      = 10_000
	MaxWork        = 2_000_000_000 // the web lab's budget of arrivals × points; steps of Jain's index
	MaxSeriesRows  = 2_000_000     // points × 100 ms windows; points × fairness windows
	MaxClientRows  = 2_000_000     // points × clients (clients.csv)
	MaxConfigBytes = 64 << 20
	MaxLimiters    = 100
	MaxReports     = 20
	// MaxFieldErrors is the most field errors reported of one document,
	// by its decoding or its validation.
	MaxFieldErrors = 100
)

// Config is one sweep: a workload, a server, and the limiters to compare.
type Config struct {
	Version     int    `json:"version"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Seed        uint64 `json:"seed"`
	// Replications runs every point with seeds Seed … Seed+Replications-1
	// (with Seeds, each listed seed s runs s … s+Replications-1) and reports each metric's mean and 95% confidence interval (0: one
	// run; see replications.go).
	Replications int `json:"replications,omitempty"`
	// Seeds is a swept seed's list (Seed is its first value); see axes.go.
	Seeds    []uint64       `json:"-"`
	Workload workload.Spec  `json:"workload"`
	Server   server.Spec    `json:"server"`
	Metrics  MetricsSpec    `json:"metrics"`
	Limiters []limiter.Spec `json:"limiters"`
	Reports  []Report       `json:"reports,omitempty"`
	// Objectives are the targets a point must meet (see Objective and
	// experiments/decide); none by default.
	Objectives []Objective `json:"objectives,omitempty"`
	// Decision says which axes are scenarios and the goodput tolerance
	// when the objectives are answered (objectives.go); filled when the
	// config has objectives.
	Decision *Decision `json:"decision,omitempty"`

	// The seed lab's models and rules (all optional): the servers and the
	// workloads every point runs on (variants.go), request classes and an
	// SLO (classes.go), and how the files print (rules.go).
	Servers   []ServerVariant `json:"servers,omitempty"`
	Loads     []Load          `json:"loads,omitempty"`
	Classes   []Class         `json:"classes,omitempty"`
	ClassDraw *ClassDraw      `json:"class_draw,omitempty"`
	SLO       *SLO            `json:"slo,omitempty"`
	Output    OutputSpec      `json:"output,omitzero"`

	// Client behaviour (policies.go): the client policies every point runs
	// with, and the trigger interval recovery is measured after.
	Policies []ClientPolicy `json:"policies,omitempty"`
	Trigger  *TriggerSpec   `json:"trigger,omitempty"`
}

// MetricsSpec sets the measuring windows.
type MetricsSpec struct {
	// RollingWindowMS is L in "never more than N in any L" (default 1000).
	RollingWindowMS float64 `json:"rolling_window_ms"`
	// FairnessWindowMS is the window of Jain's index over time (default 1000).
	FairnessWindowMS float64 `json:"fairness_window_ms"`
	// Percentiles and ScoreUntil are rules (see Rules): left out, the
	// nearest-rank value itself over every arrival of the window.
	Percentiles string `json:"percentiles,omitempty"`
	ScoreUntil  string `json:"score_until,omitempty"`
	// SeriesWindowMS is the width of the aligned windows of the time
	// series (series.csv, the charts), whole ms; left out (0), the engine
	// chooses it (Config.SeriesWindow).
	SeriesWindowMS float64 `json:"series_window_ms,omitempty"`
}

// DefaultMetricsWindowMS is the rolling and the fairness window when a
// config gives none.
const DefaultMetricsWindowMS = 1000

// SeriesWindowMS is the default width of the aligned windows of the time
// series, and the width of the windows of downstream_peak_rps and of the
// recovery after a flash crowd, whatever the series' width.
const SeriesWindowMS = 100

// SeriesRowsTarget is the most windows a point's series has when the
// config leaves series_window_ms out: a longer run gets wider windows.
const SeriesRowsTarget = 5000

// SeriesWindow is the width in ms of the series' windows: the config's
// series_window_ms, else 100 ms (SeriesWindowMS) for a run of at most
// SeriesRowsTarget such windows, with a flash crowd (whose recovery is
// measured on 100 ms windows) or with a series report (the seed lab's
// files are per 100 ms at any duration), else the narrowest of 200, 500,
// 1000, 2000, 5000, ... ms that covers the run in at most SeriesRowsTarget
// windows.
func (c *Config) SeriesWindow() float64 {
	if c.Metrics.SeriesWindowMS > 0 {
		return c.Metrics.SeriesWindowMS
	}
	fixed := c.hasTrigger() || slices.ContainsFunc(c.Reports, func(r Report) bool { return r.Type == ReportSeries })
	return autoSeriesWindow(c.Workload.DurationMS, fixed)
}

func autoSeriesWindow(durationMS float64, trigger bool) float64 {
	w := float64(SeriesWindowMS)
	if trigger || !(durationMS > 0) {
		return w
	}
	for k := 0; math.Ceil(durationMS/w) > SeriesRowsTarget; k++ {
		w *= []float64{2, 2.5, 2}[k%3] // 200, 500, 1000, 2000, ...
	}
	return w
}

// hasTrigger reports whether some load of the sweep has a flash crowd.
func (c *Config) hasTrigger() bool {
	if c.Trigger != nil {
		return true
	}
	for i := range c.LoadCount() {
		w := c.WorkloadAt(i)
		if _, _, ok := Trigger(&w); ok {
			return true
		}
	}
	return false
}

// Normalize fills every default, so the stored document says everything.
func (c *Config) Normalize() {
	c.Server.Normalize()
	c.normalizeService()
	if c.Metrics.RollingWindowMS == 0 {
		c.Metrics.RollingWindowMS = DefaultMetricsWindowMS
	}
	if c.Metrics.FairnessWindowMS == 0 {
		c.Metrics.FairnessWindowMS = DefaultMetricsWindowMS
	}
	for i := range c.Limiters {
		c.Limiters[i].Normalize()
	}
	c.normalizeModels()
	c.normalizeObjectives()
}

// Standard output file names.
const (
	FileResults  = "results.csv"
	FileSeries   = "series.csv"
	FileClients  = "clients.csv"
	FileManifest = "manifest.json"
	// FileReplications is the row of every run of a replicated sweep.
	FileReplications = "replications.csv"
	// FileSettings is a row per setting with its answer to the objectives
	// (experiments/decide), with objectives only.
	FileSettings = "settings.csv"
)

// MarshalJSON writes the config, a swept seed as its list.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	b, err := json.Marshal(plain(c))
	if err != nil || len(c.Seeds) == 0 {
		return b, err
	}
	seeds, err := json.Marshal(c.Seeds)
	if err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, err
	}
	keys["seed"] = seeds
	return lists.MarshalRaw(c, keys)
}

// JSON is the config as an indented document (the form stored and shown).
// Of a normalized config (DecodeConfig fills every default) it is the
// canonical document: keys in the struct's order, two-space indent, a
// final newline; two configs that run the same sweep have the same bytes.
func (c *Config) JSON() []byte {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("marshal config: %v", err)) // cannot happen: plain data
	}
	return append(b, '\n')
}

// SHA256 is the hex sha256 of the canonical document (JSON) of a
// normalized config: manifest.json records it as config_sha256.
func (c *Config) SHA256() string {
	sum := sha256.Sum256(c.JSON())
	return hex.EncodeToString(sum[:])
}
