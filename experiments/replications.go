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
// curves are its first run's.

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

// aggregate turns a replicated run's points (replicas adjacent) into one
// point per setting with Stats, keeping every run in Replicas.
func (r *Result) aggregate() {
	reps := r.Config.Replicas()
	if reps <= 1 {
		return
	}
	cols := StatColumns(r.Config, r.Groups)
	all := r.Points
	out := make([]Point, 0, len(all)/reps)
	xs := make([]float64, 0, reps)
	for i := 0; i+reps <= len(all); i += reps {
		group := all[i : i+reps]
		p := group[0]
		p.Replica = 0
		if len(r.Config.Seeds) < 2 {
			p.Seed = "" // with a seed list it stays the listed seed (its first run's)
		}
		p.Stats = make([]Stat, 0, len(cols))
		for c := range cols {
			xs = xs[:0]
			for j := range group {
				if v, ok := cols[c].Value(&group[j]); ok {
					xs = append(xs, v)
				}
			}
			ci := metrics.MeanCI(xs)
			hw := ci.HalfWidth
			if math.IsNaN(hw) {
				hw = 0
			}
			p.Stats = append(p.Stats, Stat{Key: cols[c].Key, Mean: ci.Mean, HalfWidth: hw, N: ci.N})
		}
		out = append(out, p)
	}
	for i := range all {
		q := &all[i]
		q.Series, q.Clients, q.JainSeries, q.OutputCurve = Series{}, nil, nil, nil
	}
	r.Replicas = all
	r.Points = out
}
