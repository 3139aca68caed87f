package experiments

import (
	"math"

	"github.com/ratelab/ratelab/experiments/metrics"
)

// Replications. A config with "replications": N runs every point N times,
// with seeds seed … seed+N-1 (each run deterministic: its own generated
// arrivals). Result.Replicas holds every run's row (replications.csv);
// Result.Points holds one point per setting whose Stats give, for every
// measured column of results.csv (Column.Measured, and the group shares),
// the mean over the runs and the half-width of its two-sided 95% Student-t
// confidence interval: mean ± t(0.975, n-1)·s/√n. results.csv prints the
// mean in the column's place and the half-width in <column>_ci95 beside it.
// A run without a value of a column (an empty cell) is left out of its
// mean; an interval needs two values. The point's series, clients and
// curves are its first run's; its Band holds, per series window, the sum
// and sum of squares over its runs of each count series (Offered,
// Released, Rejected, InSystemMax, Attempts, Goodput), so the run page
// draws their mean and 95% interval without keeping every run's series.

// Stat is one column's mean and 95% confidence half-width over a point's
// replications.
type Stat struct {
	Key  string  `json:"key"`
	Mean float64 `json:"mean"`
	// HalfWidth is the half-width of the 95% interval (NaN below 2 values,
	// stored as 0 with N < 2).
	HalfWidth float64 `json:"half_width"`
	N         int     `json:"n"`
}

// Stat finds the point's statistics of a column by key.
func (p *Point) Stat(key string) (Stat, bool) {
	for _, s := range p.Stats {
		if s.Key == key {
			return s, true
		}
	}
	return Stat{}, false
}

// Interval is the lower and upper end of the point's 95% interval of a
// column (ok false without statistics of it or an interval).
func (p *Point) Interval(key string) (lo, hi float64, ok bool) {
	s, found := p.Stat(key)
	if !found || s.N < 2 {
		return 0, 0, false
	}
	return s.Mean - s.HalfWidth, s.Mean + s.HalfWidth, true
}

// GroupShareColumns are results.csv's share_pct_<group> columns.
func GroupShareColumns(groups []string) []Column {
	cols := make([]Column, len(groups))
	for g, name := range groups {
		cols[g] = measured(Column{Key: "share_pct_" + name, Format: Fixed1, Value: func(p *Point) (float64, bool) {
			if g < len(p.Metrics.GroupSharePct) {
				return p.Metrics.GroupSharePct[g], true
			}
			return 0, false
		}})
	}
	return cols
}

// StatColumns are the columns a replicated sweep averages: the measured
// columns of results.csv, then the group shares.
func StatColumns(cfg *Config, groups []string) []Column {
	var out []Column
	for _, c := range ResultColumns(cfg) {
		if c.Measured {
			out = append(out, c)
		}
	}
	return append(out, GroupShareColumns(groups)...)
}

// SeriesBand is a replicated point's count series over its runs: per
// series window, each series' sum and sum of squares over the runs (a run
// without the window counts 0 there, as At reads it).
type SeriesBand struct {
	Runs        int        `json:"runs"`
	Offered     WindowSums `json:"offered"`
	Released    WindowSums `json:"released"`
	Rejected    WindowSums `json:"rejected"`
	InSystemMax WindowSums `json:"in_system_max"`
	Attempts    WindowSums `json:"attempts,omitempty"`
	Goodput     WindowSums `json:"goodput,omitempty"`
}

// WindowSums are one series' per-window sum and sum of squares over runs.
type WindowSums struct {
	Sum   []int64 `json:"sum,omitempty"`
	SumSq []int64 `json:"sum_sq,omitempty"`
}

// Lists are the band's series in a fixed order (storage writes them so).
func (b *SeriesBand) Lists() []*WindowSums {
	return []*WindowSums{&b.Offered, &b.Released, &b.Rejected, &b.InSystemMax, &b.Attempts, &b.Goodput}
}

// Windows is the number of windows the band covers.
func (w *WindowSums) Windows() int { return len(w.Sum) }

// At is the mean over runs runs of window k and the half-width of its 95%
// Student-t interval (0 past the end), exactly as MeanCI of the runs'
// counts would give up to rounding.
func (w *WindowSums) At(k, runs int) metrics.Interval {
	if k >= len(w.Sum) || runs < 1 {
		return metrics.Interval{N: runs}
	}
	return intervalOf(w.Sum[k], w.SumSq[k], runs)
}

// intervalOf is the mean and 95% half-width of n values with sum and sum
// of squares given (the variance's numerator in integers: exact).
func intervalOf(sum, sumSq int64, n int) metrics.Interval {
	mean := float64(sum) / float64(n)
	if n < 2 {
		return metrics.Interval{Mean: mean, N: n}
	}
	num := float64(int64(n)*sumSq - sum*sum) // n·Σx² − (Σx)² ≥ 0
	variance := max(num, 0) / float64(n) / float64(n-1)
	return metrics.Interval{Mean: mean, HalfWidth: metrics.T95(n-1) * math.Sqrt(variance/float64(n)), N: n}
}

// FirstSeed is the seed of point i's first run (its Series, clients and
// curves) in a replicated result, "" without replications.
func (r *Result) FirstSeed(i int) string {
	reps := r.Config.Replicas()
	if reps < 2 || (i+1)*reps > len(r.Replicas) {
		return ""
	}
	return r.Replicas[i*reps].Seed
}
