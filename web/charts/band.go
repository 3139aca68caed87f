package charts

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments"
)

// Replications on the sections that are not sweep charts. A replicated
// point keeps its first run's series (Series, clients, curves) and, in its
// Band, each count series' sum and sum of squares per window over all its
// runs (experiments/replications.go). A line over time of a count series
// (offered, released, rejected, in system, goodput, attempts) is then the
// mean over the runs with a shaded band of its 95% interval; a chart or
// section drawn from other series (Jain's index, p99s, per-class
// success, per-client shares, recovery) shows the first run and says
// "replication 1 of N (seed s)" in its title.

// bandOpacity is the shade of an interval band.
const bandOpacity = 0.18

// replicas is the number of runs of each point, 0 without replications
// (or without the runs' bands, as in a run stored before them).
func (v *View) replicas() int {
	if !v.Res.Config.Replicated() || len(v.Res.Points) == 0 {
		return 0
	}
	for i := range v.Res.Points {
		if v.Res.Points[i].Band == nil {
			return 0 // stored without bands, or merged from shards that were
		}
	}
	return v.Res.Config.Replicas()
}

// firstRun is what a title adds for a chart of point p's first run only:
// " — replication 1 of N (seed s)", "" without replications; without the
// seed for a chart of several points' (p nil).
func (v *View) firstRun(p *experiments.Point) string {
	if !v.Res.Config.Replicated() {
		return ""
	}
	s := fmt.Sprintf(" — replication 1 of %d", v.Res.Config.Replicas())
	if p == nil {
		return s
	}
	if seed := v.Res.FirstSeed(p.Index); seed != "" {
		s += " (seed " + seed + ")"
	}
	return s
}

// firstRunOf is firstRun for a chart of several points: with their
// first runs' seed when they share it, else without a seed (a seed list
// gives points of other seeds).
func (v *View) firstRunOf(pts []*experiments.Point) string {
	if len(pts) == 0 {
		return v.firstRun(nil)
	}
	for _, p := range pts[1:] {
		if v.Res.FirstSeed(p.Index) != v.Res.FirstSeed(pts[0].Index) {
			return v.firstRun(nil)
		}
	}
	return v.firstRun(pts[0])
}

// bandNote is what a subtitle adds for a line that is a mean over runs.
func bandNote(runs, bucket int) string {
	s := fmt.Sprintf("; mean of %d runs, shaded: its 95%% interval", runs)
	if bucket > 1 {
		s += " (windows merged: the sum of their intervals, wider than the merged one)"
	}
	return s
}

// bandItems are a band's mean, lower and upper ends per bucket of windows
// (k*bucket … (k+1)*bucket-1, for windows windows), times scale: the
// bucket's sum of the windows' means and of their half-widths (an upper
// bound of the merged sum's), or with most the largest of them (a
// window's "most in system"). The lower end stops at 0 (counts).
func bandItems(w *experiments.WindowSums, runs, windows, bucket int, sw, scale float64, most bool) (mean, lo, hi []Item) {
	for k := 0; k < windows; k += bucket {
		var m, l, h float64
		for j := k; j < min(k+bucket, windows); j++ {
			ci := w.At(j, runs)
			if most {
				m, l, h = max(m, ci.Mean), max(l, ci.Mean-ci.HalfWidth), max(h, ci.Mean+ci.HalfWidth)
				continue
			}
			m, l, h = m+ci.Mean, l+ci.Mean-ci.HalfWidth, h+ci.Mean+ci.HalfWidth
		}
		x := float64(k) * sw
		mean = append(mean, xy(x, m*scale))
		lo = append(lo, xy(x, max(l, 0)*scale))
		hi = append(hi, xy(x, h*scale))
	}
	return mean, lo, hi
}

// addBand shades the band between lo and hi (of the same x values) in a
// line's color: a transparent line at lo and, stacked on it, the width
// hi - lo filled. Both are named name, so the legend toggles them as one.
func (o *Option) addBand(name, color string, lo, hi []Item, opts ...seriesOption) {
	width := make([]Item, len(hi))
	for i := range hi {
		x, h, l := hi[i].Value.([]float64), hi[i].Value.([]float64)[1], lo[i].Value.([]float64)[1]
		width[i] = xy(x[0], h-l)
	}
	stack := "band " + name
	hidden := func(s *Series) {
		s.Stack = stack
		s.ShowSymbol = boolPtr(false)
		s.LineStyle = &LineStyle{Color: color, Width: 1, Opacity: floatPtr(0)}
		s.ItemStyle = &ItemStyle{Color: color}
		s.Tooltip = &SeriesTooltip{Show: false}
	}
	o.addLine(name, lo, append(opts, hidden)...)
	o.addLine(name, width, append(opts, hidden, func(s *Series) {
		s.AreaStyle = &AreaStyle{Color: color, Opacity: bandOpacity}
	})...)
}
