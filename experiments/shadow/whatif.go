package shadow

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments/accesslog"
	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
)

// WhatIfMultipliers are the factors the what-if sweep applies to the
// imported rate and burst.
func WhatIfMultipliers() []float64 { return []float64{0.5, 1, 2, 4} }

// WhatIf is one setting of the what-if sweep around the imported one: every
// stage's rate_rps times Rate and its size parameter (burst) times Burst
// (rounded to whole requests), replayed on the same requests in the same
// pass.
type WhatIf struct {
	Rate, Burst float64
	Stages      []*limiter.Spec
	// Config is the setting in the import's format, to paste back (the
	// export of a one-stage setting; "" when the format cannot write it).
	Config string

	gate        limiter.KeyedGate
	Limited     int64
	Delayed     int64
	KeysLimited int64
	keyLimited  []bool
	releases    releaseWindow
	service     metrics.Histogram
	delays      metrics.Histogram
	// PassedPeakRPS and ServiceP99MS are what the service would have seen
	// (the p99 of the passed requests' logged upstream times; NaN when
	// none logs one).
	PassedPeakRPS int64
	ServiceP99MS  float64
	// DelayP50MS, DelayP99MS and MaxDelayMS are how long the limiter held
	// the passed requests (whole ms, 0 for those passed at once; the
	// histogram's quantiles).
	DelayP50MS, DelayP99MS, MaxDelayMS float64
}

// whatIfs builds the sweep's settings: only stages whose rows have
// rate_rps and a size parameter are scaled; a setting outside a
// parameter's range is left out, and so is one equal to an earlier one.
func whatIfs(im *deploy.Imported) ([]*WhatIf, error) {
	var out []*WhatIf
	seen := map[string]bool{}
	for _, r := range WhatIfMultipliers() {
		for _, b := range []float64{1, 0.5, 2, 4} { // x1 first: a burst of 0 scales to itself
			if !slices.Contains(WhatIfMultipliers(), b) {
				continue
			}
			w := &WhatIf{Rate: r, Burst: b, ServiceP99MS: math.NaN()}
			ok := true
			for _, st := range im.Stages {
				s := *st.Spec
				s.Params, s.Options = maps.Clone(st.Spec.Params), maps.Clone(st.Spec.Options)
				k := s.Kind()
				if _, has := k.Param(limiter.ParamRate); !has || k.Size == "" {
					return nil, fmt.Errorf("what-if: %s has no rate_rps and size to scale", s.Type)
				}
				s.SetValues(limiter.ParamRate, limiter.Values{s.Params[limiter.ParamRate][0] * r})
				s.SetValues(k.Size, limiter.Values{math.Round(s.Params[k.Size][0] * b)})
				if errs := s.Validate("stage"); len(errs) > 0 {
					ok = false
					break
				}
				w.Stages = append(w.Stages, &s)
			}
			if !ok {
				continue
			}
			key := fmt.Sprint(specsText(w.Stages))
			if seen[key] {
				continue
			}
			seen[key] = true
			g, err := limiter.NewKeyed(w.Stages)
			if err != nil {
				return nil, fmt.Errorf("what-if ×%g ×%g: %w", r, b, err)
			}
			w.gate = g
			if len(w.Stages) == 1 {
				pt := &deploy.Point{Spec: w.Stages[0], Params: w.Stages[0].Points()[0]}
				if e, err := deploy.Render(im.Format, pt); err == nil {
					w.Config = e.Text
					if im.Format == "nginx" { // the deployment's own zone and key
						w.Config = strings.NewReplacer("$binary_remote_addr zone=ratelab:", im.Stages[0].Key+" zone="+im.Stages[0].Name+":",
							"ratelab zone=ratelab:", im.Stages[0].Key+" zone="+im.Stages[0].Name+":",
							"limit_req zone=ratelab", "limit_req zone="+im.Stages[0].Name).Replace(e.Text)
					}
				}
			}
			out = append(out, w)
		}
	}
	slices.SortStableFunc(out, func(a, b *WhatIf) int { return cmp.Or(cmp.Compare(a.Rate, b.Rate), cmp.Compare(a.Burst, b.Burst)) })
	return out, nil
}

func specsText(ss []*limiter.Spec) []string {
	var out []string
	for _, s := range ss {
		out = append(out, limiter.FormatParams(s.Type, s.Points()[0])+" "+fmt.Sprint(s.Options))
	}
	return out
}

// offer decides one request at the setting.
func (w *WhatIf) offer(req *accesslog.Request, keys []int32, report int32) {
	release, ok := w.gate.OfferKeys(req.StartMS, keys)
	if !ok {
		w.Limited++
		if report >= 0 {
			for int(report) >= len(w.keyLimited) {
				w.keyLimited = append(w.keyLimited, false)
			}
			if !w.keyLimited[report] {
				w.keyLimited[report] = true
				w.KeysLimited++
			}
		}
		return
	}
	if release > req.StartMS {
		w.Delayed++
		w.MaxDelayMS = max(w.MaxDelayMS, release-req.StartMS)
	}
	w.delays.Record(release - req.StartMS)
	w.releases.add(release)
	if !math.IsNaN(req.ServiceMS) {
		w.service.Record(req.ServiceMS)
	}
}

func (w *WhatIf) finish() {
	w.PassedPeakRPS = w.releases.peak
	if w.service.Count() > 0 {
		w.ServiceP99MS = float64(w.service.Quantile(99))
	}
	if w.delays.Count() > 0 {
		w.DelayP50MS, w.DelayP99MS = float64(w.delays.Quantile(50)), float64(w.delays.Quantile(99))
	}
}

// Setting is the setting's parameters as the registry writes them.
func (w *WhatIf) Setting() string {
	var out string
	for i, s := range w.Stages {
		if i > 0 {
			out += "; "
		}
		out += limiter.FormatParams(s.Type, s.Points()[0])
	}
	return out
}
