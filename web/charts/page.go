// Package charts turns a finished run's stored result into what the run
// page shows of it: echarts options (one file per section: sweep,
// fairness, time series, recovery, bounds), the results table and the
// bounds table. It computes no measure itself: every number is the
// engine's.
package charts

import "github.com/ratelab/ratelab/experiments"

// Page is what the run page shows of a finished run's result.
type Page struct {
	View *View
	// Groups are the chart sections above the results table, in page order.
	Groups []*Group
	Table  Table
	// Bounds is the network-calculus section, nil for a run stored
	// without bounds.
	Bounds *Bounds
	// Answer is the recommendation for the config's objectives, nil
	// without objectives.
	Answer *Answer
}

// NewPage builds the run page's view of a result; chosen is the point
// whose time series it shows (< 0: a default, see NewView).
func NewPage(res *experiments.Result, chosen int, runID string) *Page {
	v := NewView(res, chosen)
	return &Page{View: v, Groups: v.Groups(), Table: newTable(v, runID), Bounds: newBounds(v, runID), Answer: newAnswer(res, runID)}
}

// sections are the chart sections above the results table, in page order;
// each returns nil when the run has nothing to show in it.
var sections = []func(v *View) *Group{
	throughputSection,
	delaySection,
	downstreamSection,
	fairnessSection,
	timeSection,
	recoverySection,
	hangoverSection,
	shedSection,
	classSection,
	paretoSection,
}

// Groups builds every section that has something to show.
func (v *View) Groups() []*Group {
	if len(v.Res.Points) == 0 {
		return nil
	}
	var out []*Group
	for _, s := range sections {
		if g := s(v); g != nil && len(g.Charts) > 0 {
			out = append(out, g)
		}
	}
	return out
}
