package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/storage"
)

// NavLink is an entry of the top bar.
type NavLink struct{ Href, Label string }

// navLinks are extra top-bar entries after "New sweep" and "All runs"; a
// page added by another file appends its link here in an init function.
var navLinks []NavLink

func engineVersion() string { return experiments.EngineVersion }

func itoa(n int) string { return strconv.Itoa(n) }

func runName(r storage.Run) string {
	if strings.TrimSpace(r.Name) == "" {
		return "(unnamed) " + r.ID
	}
	return r.Name
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// fmtShortTime is the recent-runs sidebar's time: the full one did not fit
// its 380 px beside the name and status (the table ran out of its card).
func fmtShortTime(t time.Time) string { return t.UTC().Format("Jan 2 15:04") }

func progressText(r storage.Run) string {
	return fmt.Sprintf("%d / %d", r.PointsDone, r.PointsTotal)
}

func progressPct(r *storage.Run) int {
	if r.PointsTotal <= 0 {
		return 0
	}
	return r.PointsDone * 100 / r.PointsTotal
}

func joinLimiters(ls []string) string { return strings.Join(ls, ", ") }

func pageURL(page int) string { return "/runs?page=" + strconv.Itoa(page) }

func problemsText(n int) string {
	if n == 1 {
		return "1 problem"
	}
	return strconv.Itoa(n) + " problems"
}

// inputID is the element id of an input key.
func inputID(key string) string { return "f-" + strings.ReplaceAll(key, ".", "-") }

// rowKey is the key of an input of row i: "parts.2.rate_rps".
func rowKey(prefix string, i int, name string) string {
	return prefix + "." + strconv.Itoa(i) + "." + name
}

// partTypesFor lists the part types that use an input, space separated.
func partTypesFor(name string) string {
	var out []string
	for _, t := range workload.PartTypes() {
		if partHas(t, name) {
			out = append(out, string(t))
		}
	}
	return strings.Join(out, " ")
}

// limiterTypesFor lists the limiter types that take a parameter.
func limiterTypesFor(param string) string {
	var out []string
	for _, t := range limiter.Types() {
		for _, p := range limiter.ParamsOf(t) {
			if p == param {
				out = append(out, t)
			}
		}
	}
	return strings.Join(out, " ")
}

// formLimiterTypes lists the limiter types the form builds: all but chain,
// whose stages are edited as a config document (/calculus/edit/{id}).
func formLimiterTypes() []string {
	var out []string
	for _, t := range limiter.Types() {
		if t != limiter.TypeChain {
			out = append(out, t)
		}
	}
	return out
}

// hasChain reports whether a config has a limiter the form cannot show.
func hasChain(cfg *experiments.Config) bool {
	for _, l := range cfg.Limiters {
		if l.Type == limiter.TypeChain {
			return true
		}
	}
	return false
}

// editURL is where a run's config is edited: the form, or the config
// document editor for chains.
func (d *RunPageData) editURL() string {
	if d.Chain {
		return "/calculus/edit/" + d.Run.ID
	}
	return "/?from=" + d.Run.ID
}

// sharesTypes lists the limiter types that split their rate by shares.
func sharesTypes() string {
	var out []string
	for _, t := range limiter.Types() {
		if limiter.HasShares(t) {
			out = append(out, t)
		}
	}
	return strings.Join(out, " ")
}

func partTypeLabel(t workload.PartType) string {
	switch t {
	case workload.DemandCurve:
		return "demand curve (rate segments)"
	case workload.Constant:
		return "constant rate"
	case workload.Poisson:
		return "Poisson"
	case workload.Bursts:
		return "bursts"
	case workload.Clients:
		return "client group"
	case workload.FlashCrowd:
		return "flash crowd"
	case workload.Trace:
		return "trace replay (CSV)"
	}
	return string(t)
}

func rateHint(typ string) string {
	if workload.PartType(typ) == workload.Clients {
		return "per client"
	}
	return ""
}

// hasAdvancedErrors reports an error inside the folded "advanced" section.
func (f *SweepForm) hasAdvancedErrors() bool {
	return len(f.Err("metrics.rolling_window_ms"))+len(f.Err("metrics.fairness_window_ms"))+len(f.Err("reports")) > 0 || f.Reports != ""
}
