package sweep

import (
	"math"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/metrics"
)

// aggregate turns a replicated run's points (replicas adjacent) into one
// point per setting with Stats, keeping every run in Replicas.
func aggregate(r *experiments.Result) {
	reps := r.Config.Replicas()
	if reps <= 1 {
		return
	}
	cols := experiments.StatColumns(r.Config, r.Groups)
	all := r.Points
	out := make([]experiments.Point, 0, len(all)/reps)
	xs := make([]float64, 0, reps)
	for i := 0; i+reps <= len(all); i += reps {
		group := all[i : i+reps]
		p := group[0]
		p.Replica = 0
		if len(r.Config.Seeds) < 2 {
			p.Seed = "" // with a seed list it stays the listed seed (its first run's)
		}
		p.Stats = make([]experiments.Stat, 0, len(cols))
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
			p.Stats = append(p.Stats, experiments.Stat{Key: cols[c].Key, Mean: ci.Mean, HalfWidth: hw, N: ci.N})
		}
		p.Band = bandOf(group)
		out = append(out, p)
	}
	for i := range all {
		q := &all[i]
		q.Series, q.Clients, q.JainSeries, q.OutputCurve = experiments.Series{}, nil, nil, nil
	}
	r.Replicas = all
	r.Points = out
}

// bandOf sums a point's runs' count series.
func bandOf(runs []experiments.Point) *experiments.SeriesBand {
	b := &experiments.SeriesBand{Runs: len(runs)}
	get := func(s *experiments.Series) [][]int32 {
		return [][]int32{s.Offered, s.Released, s.Rejected, s.InSystemMax, s.Attempts, s.Goodput}
	}
	for li, dst := range b.Lists() {
		n := 0
		for j := range runs {
			n = max(n, len(get(&runs[j].Series)[li]))
		}
		if n == 0 {
			continue
		}
		dst.Sum, dst.SumSq = make([]int64, n), make([]int64, n)
		for j := range runs {
			for k, x := range get(&runs[j].Series)[li] {
				dst.Sum[k] += int64(x)
				dst.SumSq[k] += int64(x) * int64(x)
			}
		}
	}
	return b
}
