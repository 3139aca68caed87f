package shadow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/output"
)

// The web lab's files beside the CLI's: the page's view of the verdict
// and the manifest.
const (
	ViewFile     = "shadow.json"
	ManifestFile = "manifest.json"
)

// TopKeys is how many keys the view (the run page's table) keeps.
const TopKeys = 20

// View is what the run page shows of a verdict (shadow.json): the totals,
// the most limited keys, the timeline, what the service would have seen
// and the what-if sweep with its recommendation.
type View struct {
	Limiter   string       `json:"limiter"`
	Log       LogView      `json:"log"`
	ReportKey string       `json:"report_key"`
	Status    int          `json:"status"`
	Requests  int64        `json:"requests"`
	Limited   int64        `json:"limited"`
	Delayed   int64        `json:"delayed"`
	Keys      int          `json:"keys"`
	KeysLimit int          `json:"keys_limited"`
	FirstMS   float64      `json:"first_ms"`
	LastMS    float64      `json:"last_ms"`
	Top       []KeyView    `json:"top"`
	Timeline  []Minute     `json:"timeline"`
	Service   ServiceView  `json:"service"`
	WhatIf    []WhatIfView `json:"what_if"`
	// Objectives and Recommended (an index into WhatIf, -1 for none;
	// Feasible settings meet every objective, 0: Recommended is the
	// closest), Binding the objective that binds it (-1: none), Misses
	// what the closest fails.
	Objectives  []experiments.Objective `json:"objectives"`
	Recommended int                     `json:"recommended"`
	Feasible    int                     `json:"feasible"`
	Binding     int                     `json:"binding"`
	Margin      float64                 `json:"margin"`
	Misses      []int                   `json:"misses,omitempty"`
	Stopped     bool                    `json:"stopped,omitempty"`
}

// LogView is the log read.
type LogView struct {
	Lines       int64            `json:"lines"`
	Requests    int64            `json:"requests"`
	Filtered    int64            `json:"filtered"`
	Bad         int64            `json:"bad"`
	Reasons     map[string]int64 `json:"reasons,omitempty"`
	StartNote   string           `json:"start_note"`
	Approximate bool             `json:"approximate"`
}

// KeyView is one key's row (FirstLimited as RFC 3339, "" for none).
type KeyView struct {
	KeyVerdict
	FirstLimited string  `json:"first_limited"`
	LimitedPct   float64 `json:"limited_pct"`
}

// ServiceView is what the service would have seen: the requests passed,
// their rate over the log's span, the most in one second, and the logged
// service times of the passed requests (NaN as null: none logged).
type ServiceView struct {
	Passed     int64    `json:"passed"`
	RateRPS    float64  `json:"rate_rps"`
	PeakRPS    int64    `json:"peak_rps"`
	Count      int64    `json:"service_count"`
	P50MS      *float64 `json:"service_p50_ms"`
	P99MS      *float64 `json:"service_p99_ms"`
	MaxDelayMS float64  `json:"max_delay_ms"`
}

// WhatIfView is one setting of the what-if sweep.
type WhatIfView struct {
	Rate        float64  `json:"rate_x"`
	Burst       float64  `json:"burst_x"`
	Setting     string   `json:"setting"`
	Limited     int64    `json:"limited"`
	LimitedPct  float64  `json:"limited_pct"`
	Delayed     int64    `json:"delayed"`
	KeysLimited int64    `json:"keys_limited"`
	GoodputRPS  float64  `json:"goodput_rps"`
	PeakRPS     int64    `json:"passed_peak_rps"`
	DelayP99MS  float64  `json:"gate_delay_p99_ms"`
	ServiceP99  *float64 `json:"service_p99_ms"`
	Config      string   `json:"config"`
}

func orNull(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	return &x
}

// View is the verdict as the run page shows it; limiter names the
// imported setting.
func (r *Result) View(limiter string) *View {
	v := &View{Limiter: limiter, ReportKey: r.ReportKey, Status: r.Status, Requests: r.Requests, Limited: r.Limited, Delayed: r.Delayed,
		Keys: len(r.Keys), FirstMS: r.FirstMS, LastMS: r.LastMS, Timeline: r.Timeline, Recommended: -1, Binding: -1, Stopped: r.Stopped,
		Log: LogView{Lines: r.Log.Lines, Requests: r.Log.Requests, Filtered: r.Log.Filtered, Bad: r.Log.Bad, Reasons: r.Log.Reasons,
			StartNote: r.Log.StartNote, Approximate: r.Log.Approximate}}
	if math.IsNaN(v.FirstMS) {
		v.FirstMS, v.LastMS = 0, 0
	}
	for i := range r.Keys {
		k := &r.Keys[i]
		if k.Limited > 0 {
			v.KeysLimit++
		}
		if len(v.Top) < TopKeys && (k.Limited > 0 || len(v.Top) < 5) {
			kv := KeyView{KeyVerdict: *k, FirstLimited: stamp(k.FirstLimitedMS), LimitedPct: k.LimitedPct()}
			kv.FirstLimitedMS = 0 // NaN has no JSON: FirstLimited says it
			v.Top = append(v.Top, kv)
		}
	}
	span := r.SpanS()
	v.Service = ServiceView{Passed: r.Passed(), RateRPS: float64(r.Passed()) / span, PeakRPS: r.PassedPeakRPS, Count: r.ServiceCount,
		P50MS: orNull(r.ServiceP50MS), P99MS: orNull(r.ServiceP99MS), MaxDelayMS: r.MaxDelayMS}
	for _, w := range r.WhatIf {
		pct := 0.0
		if r.Requests > 0 {
			pct = 100 * float64(w.Limited) / float64(r.Requests)
		}
		v.WhatIf = append(v.WhatIf, WhatIfView{Rate: w.Rate, Burst: w.Burst, Setting: w.Setting(), Limited: w.Limited, LimitedPct: pct,
			Delayed: w.Delayed, KeysLimited: w.KeysLimited, GoodputRPS: float64(r.Requests-w.Limited) / span, PeakRPS: w.PassedPeakRPS,
			DelayP99MS: w.DelayP99MS, ServiceP99: orNull(w.ServiceP99MS), Config: w.Config})
	}
	if rec := r.Recommendation; rec != nil {
		v.Objectives, v.Recommended, v.Feasible, v.Binding, v.Margin, v.Misses = rec.Objectives, rec.Setting, rec.Feasible, rec.Binding, rec.Margin, rec.Misses
	}
	return v
}

// Manifest makes a replay reproducible: the engine, the document, the
// log's sha256 and every output's.
type Manifest struct {
	EngineVersion string              `json:"engine_version"`
	Shadow        *Spec               `json:"shadow"`
	Go            output.GoInfo       `json:"go"`
	Source        output.Source       `json:"source"`
	Inputs        []experiments.Input `json:"inputs"`
	Outputs       []output.Output     `json:"outputs"`
	Stopped       bool                `json:"stopped,omitempty"`
}

// Files are a replay's outputs as the web lab stores them: shadow.csv,
// shadow-timeline.csv, shadow-whatif.csv, shadow-summary.txt, shadow.json
// and manifest.json last. where names the limiter (the summary's line),
// log the log read.
func (r *Result) Files(sp *Spec, where string, log experiments.Input) ([]output.File, error) {
	var files []output.File
	add := func(name string, fn func(io.Writer) error) error {
		var b bytes.Buffer
		if err := fn(&b); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		files = append(files, output.File{Name: name, Data: b.Bytes()})
		return nil
	}
	view, err := json.MarshalIndent(r.View(where), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ViewFile, err)
	}
	for _, f := range []struct {
		name string
		fn   func(io.Writer) error
	}{
		{KeysFile, r.WriteKeys},
		{TimelineFile, r.WriteTimeline},
		{WhatIfFile, r.WriteWhatIf},
		{SummaryFile, func(w io.Writer) error { return r.WriteSummary(w, where) }},
		{ViewFile, func(w io.Writer) error { _, err := w.Write(append(view, '\n')); return err }},
	} {
		if err := add(f.name, f.fn); err != nil {
			return nil, err
		}
	}
	m := Manifest{EngineVersion: experiments.EngineVersion, Shadow: sp, Go: output.GoInfo{Version: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH},
		Source: output.BuildSource(), Inputs: []experiments.Input{log}, Stopped: r.Stopped}
	for _, f := range files {
		m.Outputs = append(m.Outputs, output.Output{Name: f.Name, SHA256: f.SHA256(), Bytes: len(f.Data)})
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	return append(files, output.File{Name: ManifestFile, Data: append(mb, '\n')}), nil
}

// DecodeView reads shadow.json back.
func DecodeView(b []byte) (*View, error) {
	var v View
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", ViewFile, err)
	}
	return &v, nil
}
