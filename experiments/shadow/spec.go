package shadow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/accesslog"
	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/field"
)

// Spec is a replay as a document: what the web lab's "Replay a log" form
// builds, the run stores as its config and manifest.json records. The
// log is named, not held: a trace file of the lab (lab serve --traces)
// or an upload; the limiter's config is held as text.
type Spec struct {
	// Log is the log file's name: a trace file's, or an upload's
	// ("upload/<name>").
	Log string `json:"log"`
	// Format is the log's server (accesslog.Servers), LogFormat its
	// format: for nginx the log_format definition, the directive, a
	// log_format's name in Config or "combined" ("" = combined).
	Format    string `json:"format"`
	LogFormat string `json:"log_format"`
	// LogTZ is the time zone of times logged without one (HAProxy's
	// dates), an IANA name ("" = UTC); the caller loads it
	// (accesslog.Options.Location): the engine reads no zone database.
	LogTZ string `json:"log_tz"`
	// Config is the limiter's config text; ConfigFormat its format
	// (deploy.ImportFormats; "" = told by its text, DetectConfigFormat);
	// Location picks nginx's location or Traefik's middleware.
	Config       string `json:"config"`
	ConfigFormat string `json:"config_format"`
	Location     string `json:"location"`
	// Key is the report key expression ("" = the first zone's key).
	Key string `json:"key"`
	// Filters: a route prefix, a status list ("2xx,404"), a time range
	// (RFC 3339; "" = open).
	Route  string `json:"route"`
	Status string `json:"status"`
	From   string `json:"from"`
	To     string `json:"to"`
	// ReorderWindowMS and MaxBadPct are the reader's window and the share
	// of bad lines that fails the replay (0: none may be bad; the form and
	// the CLI give DefaultMaxBadPct when left out).
	ReorderWindowMS float64 `json:"reorder_window_ms"`
	MaxBadPct       float64 `json:"max_bad_pct"`
	// Objectives are the what-if sweep's (ObjectiveMetrics).
	Objectives []experiments.Objective `json:"objectives"`
}

// Document is a Spec as stored: {"shadow": {...}}, so a reader tells it
// from a sweep's config by its one key.
type Document struct {
	Shadow Spec `json:"shadow"`
}

// JSON is the spec's document, indented as a config document is.
func (sp *Spec) JSON() []byte {
	b, err := json.MarshalIndent(Document{Shadow: *sp}, "", "  ")
	if err != nil {
		panic(err) // strings and numbers only
	}
	return b
}

// DecodeSpec reads a replay's document strictly (unknown fields are
// errors) and fills its defaults.
func DecodeSpec(b []byte) (*Spec, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d Document
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("shadow document: %w", err)
	}
	d.Shadow.Normalize()
	return &d.Shadow, nil
}

// Normalize fills the defaults: nginx, combined, the reorder window, the
// objectives.
func (sp *Spec) Normalize() {
	if sp.Format == "" {
		sp.Format = "nginx"
	}
	if sp.Format == "nginx" && strings.TrimSpace(sp.LogFormat) == "" {
		sp.LogFormat = "combined"
	}
	if sp.ReorderWindowMS == 0 {
		sp.ReorderWindowMS = accesslog.DefaultWindowMS
	}
	if len(sp.Objectives) == 0 {
		sp.Objectives = DefaultObjectives()
	}
}

// DetectConfigFormat tells a config's format by its text: Envoy's with
// its local_ratelimit filter, Traefik's with a rateLimit middleware, else
// nginx.
func DetectConfigFormat(text string) string {
	switch {
	case strings.Contains(text, "envoy.filters.http.local_ratelimit"):
		return "envoy"
	case strings.Contains(text, "rateLimit") && !strings.Contains(text, "limit_req"):
		return "traefik"
	}
	return "nginx"
}

// Prepare checks every field of a normalized spec and returns the
// replay's options (with WhatIf; Progress, Stopped and Each are the
// caller's), or the errors, each at its field's JSON key.
func (sp *Spec) Prepare() (Options, field.List) {
	var errs field.List
	var opt Options
	if sp.Log == "" {
		errs.Add("log", "choose a log: upload one or pick one of the lab's files")
	}
	if !slices.Contains(accesslog.Servers(), sp.Format) {
		errs.Add("format", "%q: one of %s", sp.Format, strings.Join(accesslog.Servers(), ", "))
	}
	cf := sp.ConfigFormat
	if strings.TrimSpace(sp.Config) == "" {
		errs.Add("config", "paste or upload the limiter's config (nginx limit_req_zone and limit_req, Envoy's local_ratelimit filter or a Traefik rateLimit middleware)")
	} else if cf == "" {
		cf = DetectConfigFormat(sp.Config)
	} else if !slices.Contains(deploy.ImportFormats(), cf) {
		errs.Add("config_format", "%q: one of %s", cf, strings.Join(deploy.ImportFormats(), ", "))
		cf = ""
	}
	def := sp.LogFormat
	if sp.Format == "nginx" && isFormatName(def) && def != "combined" && cf == "nginx" && strings.TrimSpace(sp.Config) != "" {
		var err error
		if def, err = deploy.NginxLogFormat(sp.Config, def); err != nil {
			errs.Add("log_format", "%v", err)
		}
	}
	var f *accesslog.Format
	if slices.Contains(accesslog.Servers(), sp.Format) {
		var err error
		if f, err = accesslog.ServerFormat(sp.Format, def); err != nil {
			errs.Add("log_format", "%v", err)
		}
	}
	if cf != "" && strings.TrimSpace(sp.Config) != "" {
		im, err := deploy.Import(cf, sp.Config, deploy.ImportOptions{Location: sp.Location})
		if err != nil {
			errs.Add("config", "%v", err)
		} else {
			opt.Import = im
			if f != nil {
				for i, st := range im.Stages {
					if _, err := f.CompileKey(st.Key); err != nil {
						errs.Add("config", "%s %s (stage %d): %v", im.Format, st.Name, i+1, err)
					}
				}
			}
		}
	}
	if f != nil && sp.Key != "" {
		if _, err := f.CompileKey(sp.Key); err != nil {
			errs.Add("key", "%v", err)
		}
	}
	opt.Log = accesslog.Options{Format: f, Route: sp.Route, WindowMS: sp.ReorderWindowMS}
	if sp.Status != "" {
		st, err := accesslog.ParseStatusFilter(sp.Status)
		if err != nil {
			errs.Add("status", "%v", err)
		}
		opt.Log.Status = st
	}
	for _, v := range []struct {
		name, text string
		ms         *float64
	}{{"from", sp.From, &opt.Log.FromMS}, {"to", sp.To, &opt.Log.ToMS}} {
		if v.text == "" {
			continue
		}
		tm, err := time.Parse(time.RFC3339Nano, v.text)
		if err != nil {
			errs.Add(v.name, "%q is not a time as RFC 3339 writes it (2026-12-01T18:00:00Z)", v.text)
			continue
		}
		*v.ms = float64(tm.UnixMilli())
	}
	if opt.Log.FromMS != 0 && opt.Log.ToMS != 0 && opt.Log.ToMS <= opt.Log.FromMS {
		errs.Add("to", "must be after from")
	}
	if !(sp.ReorderWindowMS > 0) || math.IsInf(sp.ReorderWindowMS, 0) {
		errs.Add("reorder_window_ms", "must be a positive number of ms")
	}
	if !(sp.MaxBadPct >= 0 && sp.MaxBadPct <= 100) {
		errs.Add("max_bad_pct", "must be from 0 to 100 (%%)")
	}
	errs = append(errs, ValidateObjectives(sp.Objectives)...)
	opt.ReportKey, opt.MaxBadPct, opt.WhatIf, opt.Objectives = sp.Key, sp.MaxBadPct, true, sp.Objectives
	if sp.MaxBadPct == 0 {
		opt.MaxBadPct = math.SmallestNonzeroFloat64 // 0 means none may be bad
	}
	return opt, errs
}

// isFormatName says whether s is a log_format's name rather than its text.
func isFormatName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
