// Package experiments is ratelab's deterministic engine: a sweep replays one
// arrival list through many limiters and parameter values into a server
// model and measures what each costs.
//
// A Config is the whole sweep as one versioned JSON document: the same
// document the CLI reads, the web form produces, and the manifest records.
// Nothing in this package or below reads the clock, the disk, the network or
// a global random source: same config, same bytes out.
package experiments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// Version is the config document version this engine reads.
const Version = 1

// EngineVersion changes whenever the engine's numbers could change.
const EngineVersion = "1.0.2"

// Limits on one run, so a request cannot eat the machine.
const (
	MaxArrivals    = 20_000_000
	MaxPoints      = 10_000
	MaxWork        = 2_000_000_000 // arrivals × points
	MaxSeriesRows  = 2_000_000     // points × 100 ms windows; points × fairness windows
	MaxClientRows  = 2_000_000     // points × clients (clients.csv)
	MaxConfigBytes = 64 << 20
	MaxLimiters    = 100
	MaxReports     = 20
)

// Config is one sweep: a workload, a server, and the limiters to compare.
type Config struct {
	Version     int            `json:"version"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Seed        uint64         `json:"seed"`
	Workload    workload.Spec  `json:"workload"`
	Server      server.Spec    `json:"server"`
	Metrics     MetricsSpec    `json:"metrics"`
	Limiters    []limiter.Spec `json:"limiters"`
	Reports     []Report       `json:"reports,omitempty"`
}

// MetricsSpec sets the measuring windows.
type MetricsSpec struct {
	// RollingWindowMS is L in "never more than N in any L" (default 1000).
	RollingWindowMS float64 `json:"rolling_window_ms"`
	// FairnessWindowMS is the window of Jain's index over time (default 1000).
	FairnessWindowMS float64 `json:"fairness_window_ms"`
}

// SeriesWindowMS is the width of the aligned windows of every time series.
const SeriesWindowMS = 100

// Report asks for an extra CSV file in a fixed layout, such as the seed
// lab's two files. Type "points" writes a row per point; type "series" a row
// per aligned 100 ms window of [0, duration).
type Report struct {
	Type    string         `json:"type"`
	File    string         `json:"file"`
	Columns []ReportColumn `json:"columns"`
}

// ReportColumn is one column: a header and the value it shows. For "points"
// reports Value is a results.csv column or "swept" (the point's swept
// parameter). For "series" reports Value is window_start_ms, offered_rps,
// released_rps, rejected_rps or in_system_max, and Limiter and Swept pick the
// point (released_rps, rejected_rps, in_system_max).
type ReportColumn struct {
	Header  string   `json:"header"`
	Value   string   `json:"value"`
	Limiter *int     `json:"limiter,omitempty"`
	Swept   *float64 `json:"swept,omitempty"`
}

// Report types.
const (
	ReportPoints = "points"
	ReportSeries = "series"
)

// DecodeConfig reads a config document strictly: unknown fields, fields that
// do not belong to a part's or limiter's type, and trailing data are errors.
// The result is normalized and validated; errors are a field.List naming
// each bad field.
func DecodeConfig(data []byte) (*Config, error) {
	if len(data) > MaxConfigBytes {
		return nil, field.List{{Msg: fmt.Sprintf("config is %d bytes; the limit is %d", len(data), MaxConfigBytes)}}
	}
	var shell struct {
		Version     int             `json:"version"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Seed        uint64          `json:"seed"`
		Workload    json.RawMessage `json:"workload"`
		Server      json.RawMessage `json:"server"`
		Metrics     json.RawMessage `json:"metrics"`
		Limiters    json.RawMessage `json:"limiters"`
		Reports     json.RawMessage `json:"reports"`
	}
	if errs := strict(data, &shell, ""); errs != nil {
		return nil, errs
	}
	var errs field.List
	if shell.Version != Version {
		errs.Add("version", "must be %d (this engine reads version %d documents)", Version, Version)
		return nil, errs
	}
	cfg := &Config{Version: shell.Version, Name: shell.Name, Description: shell.Description, Seed: shell.Seed}

	if len(shell.Workload) == 0 || string(shell.Workload) == "null" {
		errs.Add("workload", "is required")
	} else {
		var w struct {
			DurationMS float64           `json:"duration_ms"`
			Parts      []json.RawMessage `json:"parts"`
		}
		if e := strict(shell.Workload, &w, "workload"); e != nil {
			errs = append(errs, e...)
		} else {
			cfg.Workload.DurationMS = w.DurationMS
			for i, raw := range w.Parts {
				path := field.Index("workload.parts", i)
				if e := workload.CheckFields(path, raw); e != nil {
					errs = append(errs, e...)
					continue
				}
				var p workload.Part
				if e := strict(raw, &p, path); e != nil {
					errs = append(errs, e...)
					continue
				}
				cfg.Workload.Parts = append(cfg.Workload.Parts, p)
			}
		}
	}
	if len(shell.Server) > 0 {
		errs = append(errs, strict(shell.Server, &cfg.Server, "server")...)
	}
	if len(shell.Metrics) > 0 {
		errs = append(errs, strict(shell.Metrics, &cfg.Metrics, "metrics")...)
	}
	var limiters []json.RawMessage
	if len(shell.Limiters) == 0 {
		errs.Add("limiters", "is required: at least one limiter")
	} else if e := strict(shell.Limiters, &limiters, "limiters"); e != nil {
		errs = append(errs, e...)
	}
	for i, raw := range limiters {
		path := field.Index("limiters", i)
		if e := limiter.CheckFields(path, raw); e != nil {
			errs = append(errs, e...)
			continue
		}
		var l limiter.Spec
		if e := strict(raw, &l, path); e != nil {
			errs = append(errs, e...)
			continue
		}
		cfg.Limiters = append(cfg.Limiters, l)
	}
	if len(shell.Reports) > 0 {
		errs = append(errs, strict(shell.Reports, &cfg.Reports, "reports")...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// strict decodes one JSON value into dst, refusing unknown fields and
// trailing data, and turns decoding errors into field errors under path.
func strict(data []byte, dst any, path string) field.List {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if err == nil {
		if _, e := dec.Token(); e != io.EOF {
			err = errors.New("unexpected data after the JSON value")
		}
	}
	if err == nil {
		return nil
	}
	var errs field.List
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		p := path
		if typeErr.Field != "" {
			p = field.Join(path, typeErr.Field)
		}
		what := kindName(typeErr.Type.Kind().String())
		if typeErr.Type == reflect.TypeFor[limiter.Values]() {
			what = "a number or a list of numbers"
		}
		errs.Add(p, "must be %s, not %s", what, typeErr.Value)
	case errors.As(err, &syntaxErr):
		errs.Add(path, "is not valid JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		errs.Add(field.Join(path, name), "is not a known field")
	case err == io.EOF:
		errs.Add(path, "is empty")
	case err == io.ErrUnexpectedEOF:
		errs.Add(path, "is not valid JSON: it ends too early")
	default:
		errs.Add(path, "%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return errs
}

func kindName(k string) string {
	switch k {
	case "float64", "int", "uint64", "int64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "struct", "map":
		return "an object"
	}
	return k
}

// Normalize fills every default, so the stored document says everything.
func (c *Config) Normalize() {
	c.Server.Normalize()
	if c.Metrics.RollingWindowMS == 0 {
		c.Metrics.RollingWindowMS = 1000
	}
	if c.Metrics.FairnessWindowMS == 0 {
		c.Metrics.FairnessWindowMS = 1000
	}
	for i := range c.Limiters {
		c.Limiters[i].Normalize()
	}
}

var reportFile = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,80}\.csv$`)

// Standard output file names.
const (
	FileResults  = "results.csv"
	FileSeries   = "series.csv"
	FileClients  = "clients.csv"
	FileManifest = "manifest.json"
)

// Validate checks a normalized config, including the size limits.
func (c *Config) Validate() error {
	var errs field.List
	if c.Version != Version {
		errs.Add("version", "must be %d", Version)
	}
	if len(c.Name) > 200 {
		errs.Add("name", "is longer than 200 characters")
	}
	if len(c.Description) > 10_000 {
		errs.Add("description", "is longer than 10000 characters")
	}
	errs = append(errs, c.Workload.Validate("workload")...)
	errs = append(errs, c.Server.Validate("server")...)
	for _, m := range []struct {
		name string
		v    float64
	}{{"rolling_window_ms", c.Metrics.RollingWindowMS}, {"fairness_window_ms", c.Metrics.FairnessWindowMS}} {
		if math.IsNaN(m.v) || m.v <= 0 || m.v > workload.MaxDurationMS {
			errs.Add(field.Join("metrics", m.name), "must be more than 0 and at most %d ms", workload.MaxDurationMS)
		}
	}
	if len(c.Limiters) == 0 {
		errs.Add("limiters", "needs at least one limiter")
	}
	if len(c.Limiters) > MaxLimiters {
		errs.Add("limiters", "at most %d limiters", MaxLimiters)
	}
	seen := map[string]int{}
	points := 0
	for i := range c.Limiters {
		l := &c.Limiters[i]
		path := field.Index("limiters", i)
		le := l.Validate(path)
		errs = append(errs, le...)
		if j, dup := seen[l.Label()]; dup {
			errs.Add(field.Join(path, "name"), "limiters[%d] is also called %q: give each limiter its own name", j, l.Label())
		}
		seen[l.Label()] = i
		if len(le) == 0 {
			points += l.Count()
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if points > MaxPoints {
		errs.Add("limiters", "the sweep has %d points; the limit is %d", points, MaxPoints)
	}
	expected := c.Workload.Expected()
	if expected > MaxArrivals {
		errs.Add("workload", "produces about %.0f arrivals; the limit is %d (shorten duration_ms or lower the rates)", expected, MaxArrivals)
	} else if expected*float64(points) > MaxWork {
		errs.Add("limiters", "%d points × %.0f arrivals is more than %d decisions; sweep fewer values or a shorter workload", points, expected, int64(MaxWork))
	}
	windows := math.Ceil(c.Workload.DurationMS / SeriesWindowMS)
	if windows*float64(points) > MaxSeriesRows {
		errs.Add("workload.duration_ms", "%d points × %.0f windows of 100 ms is more than %d series rows; shorten the run or sweep fewer values", points, windows, MaxSeriesRows)
	} else if rows, li := c.seriesRows(); rows > MaxSeriesRows {
		at := limiter.ParamRate
		if c.Limiters[li].Type == limiter.TypeChain {
			at = "stages"
		}
		errs.Add(field.Join(field.Index("limiters", li), at), "releases up to %.0f ms after the run ends ((queue-1) × 1000/rate_rps): with it the series need %.0f rows of 100 ms, more than %d; raise the rate or shorten the queue", gateLagMS(&c.Limiters[li], c.Limiters[li].Points()), rows, MaxSeriesRows)
	}
	errs = append(errs, c.validateClients(points)...)
	errs = append(errs, c.validateShares()...)
	errs = append(errs, c.validateReports()...)
	return errs.Err()
}

// validateClients bounds what a multi-client sweep keeps per point: a
// result per client (clients.csv) and Jain's index per fairness window, which
// costs a pass over the clients each.
func (c *Config) validateClients(points int) field.List {
	var errs field.List
	n := float64(len(c.Workload.ClientTable()))
	if n <= 1 {
		return nil // one client: no per-client results, no Jain series
	}
	if n*float64(points) > MaxClientRows {
		errs.Add("limiters", "%d points × %.0f clients is more than %d per-client results; sweep fewer values or fewer clients", points, n, MaxClientRows)
	}
	windows := math.Ceil(c.Workload.DurationMS / c.Metrics.FairnessWindowMS)
	if windows*float64(points) > MaxSeriesRows {
		errs.Add(field.Join("metrics", "fairness_window_ms"), "%d points × %.0f fairness windows is more than %d rows of Jain's index; raise fairness_window_ms", points, windows, MaxSeriesRows)
	} else if windows*n*float64(points) > MaxWork {
		errs.Add(field.Join("metrics", "fairness_window_ms"), "%d points × %.0f fairness windows × %.0f clients is more than %d steps of Jain's index; raise fairness_window_ms", points, windows, n, int64(MaxWork))
	}
	return errs
}

// validateShares refuses a per-client limiter whose burst, split over the
// workload's clients, leaves some client less than one token: that client
// could never be admitted, a configuration mistake rather than a result.
func (c *Config) validateShares() field.List {
	var errs field.List
	var clients []workload.Client
	check := func(path string, s *limiter.Spec) {
		if !limiter.HasShares(s.Type) || len(s.Burst) == 0 {
			return
		}
		if clients == nil {
			clients = c.Workload.ClientTable()
		}
		total, least := 0.0, math.Inf(1)
		for _, cl := range clients {
			w := 1.0
			if s.Shares == limiter.SharesWeighted {
				w = cl.Weight
			}
			total += w
			least = min(least, w)
		}
		for i, b := range s.Burst {
			if share := b * least / total; share < 1 {
				p := field.Join(path, limiter.ParamBurst)
				if len(s.Burst) > 1 {
					p = field.Index(p, i)
				}
				errs.Add(p, "%g split over %d clients (%s shares) leaves a client %.3g tokens: it could never be admitted; give burst at least %.0f", b, len(clients), s.Shares, share, math.Ceil(total/least))
			}
		}
	}
	for i := range c.Limiters {
		l := &c.Limiters[i]
		path := field.Index("limiters", i)
		check(path, l)
		for j := range l.Stages {
			check(field.Index(field.Join(path, "stages"), j), &l.Stages[j].Spec)
		}
	}
	return errs
}

// gateLagMS is the longest a limiter's points hold a request before
// releasing it: a leaky bucket releases up to (queue-1) intervals after an
// arrival, so its series run past the end of the arrival window. A chain
// adds up its leaky stages (at their largest values); the wait at its
// server stages is not known before the run, and simulate bounds it.
func gateLagMS(l *limiter.Spec, points []limiter.Params) float64 {
	lag := 0.0
	switch l.Type {
	case limiter.TypeLeakyBucket:
		for _, p := range points {
			lag = math.Max(lag, (p.Queue-1)*1000/p.RateRPS)
		}
	case limiter.TypeChain:
		for i := range l.Stages {
			if st := &l.Stages[i].Spec; st.Type == limiter.TypeLeakyBucket {
				lag += gateLagMS(st, st.Points())
			}
		}
	}
	return lag
}

// seriesRows is how many 100 ms series rows the sweep can write, counting
// the windows of releases after the arrival window, and the limiter with
// the longest lag.
func (c *Config) seriesRows() (rows float64, worst int) {
	worstLag := -1.0
	for i := range c.Limiters {
		l := &c.Limiters[i]
		for _, p := range l.Points() {
			lag := gateLagMS(l, []limiter.Params{p})
			rows += math.Ceil((c.Workload.DurationMS + lag) / SeriesWindowMS)
			if lag > worstLag {
				worstLag, worst = lag, i
			}
		}
	}
	return rows, worst
}

func (c *Config) validateReports() field.List {
	var errs field.List
	if len(c.Reports) > MaxReports {
		errs.Add("reports", "at most %d reports", MaxReports)
	}
	files := map[string]bool{FileResults: true, FileSeries: true, FileClients: true, FileManifest: true}
	for i, r := range c.Reports {
		path := field.Index("reports", i)
		if !reportFile.MatchString(r.File) {
			errs.Add(field.Join(path, "file"), "must be a lower-case file name ending in .csv")
		} else if files[r.File] {
			errs.Add(field.Join(path, "file"), "%q is already an output of the run", r.File)
		}
		files[r.File] = true
		if len(r.Columns) == 0 || len(r.Columns) > 100 {
			errs.Add(field.Join(path, "columns"), "needs 1 to 100 columns")
		}
		for j, col := range r.Columns {
			cp := field.Index(field.Join(path, "columns"), j)
			if col.Header == "" || strings.ContainsAny(col.Header, ",\"\n\r") || len(col.Header) > 100 {
				errs.Add(field.Join(cp, "header"), "must be a plain name (no commas, quotes or line breaks)")
			}
			switch r.Type {
			case ReportPoints:
				if col.Value != "swept" && ColumnByKey(col.Value) == nil {
					errs.Add(field.Join(cp, "value"), "unknown column %q (one of swept, %s)", col.Value, strings.Join(ColumnKeys(), ", "))
				}
				if col.Limiter != nil || col.Swept != nil {
					errs.Add(cp, "limiter and swept pick a point in series reports only")
				}
			case ReportSeries:
				switch col.Value {
				case "window_start_ms", "offered_rps":
				case "released_rps", "rejected_rps", "in_system_max":
					if col.Limiter == nil || *col.Limiter < 0 || *col.Limiter >= len(c.Limiters) {
						errs.Add(field.Join(cp, "limiter"), "must be the index of a limiter (0 to %d)", len(c.Limiters)-1)
					} else if col.Swept != nil {
						l := &c.Limiters[*col.Limiter]
						vs := *limiterValues(l)
						if n := countOf(vs, *col.Swept); n == 0 {
							errs.Add(field.Join(cp, "swept"), "%g is not a value of %s.%s (its values: %s): report %s draws the point where it is %g; give it one of the values, or remove the report", *col.Swept, l.Label(), l.Swept(), formatValues(vs), r.File, *col.Swept)
						} else if n > 1 {
							// The report would show the first of them.
							errs.Add(field.Join(cp, "swept"), "%s.%s = %g picks %d points (another parameter lists several values too): a series report column needs a limiter with one swept parameter", l.Label(), l.Swept(), *col.Swept, n)
						}
					} else if c.Limiters[*col.Limiter].Count() != 1 {
						errs.Add(field.Join(cp, "swept"), "is required: the limiter has several points")
					}
				default:
					errs.Add(field.Join(cp, "value"), "must be window_start_ms, offered_rps, released_rps, rejected_rps or in_system_max")
				}
			default:
				errs.Add(field.Join(path, "type"), "must be %q or %q", ReportPoints, ReportSeries)
			}
		}
	}
	return errs
}

// countOf is how many times v occurs in vs.
func countOf(vs []float64, v float64) int {
	n := 0
	for _, x := range vs {
		if x == v {
			n++
		}
	}
	return n
}

func limiterValues(l *limiter.Spec) *[]float64 {
	vs := []float64{}
	for _, p := range l.Points() {
		vs = append(vs, p.Get(l.Swept()))
	}
	return &vs
}

// JSON is the config as an indented document (the form stored and shown).
func (c *Config) JSON() []byte {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("marshal config: %v", err)) // cannot happen: plain data
	}
	return append(b, '\n')
}

// formatValues lists values as "1, 2, 4".
func formatValues(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(parts, ", ")
}
