// Package charts turns a finished run's stored result into what the run
// page shows of it: echarts options (one file per section: sweep,
// fairness, time series, recovery, bounds), the results table and the
// bounds table. It computes no measure itself: every number is the
// engine's.
package charts

import (
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments"
)

// Page is what the run page shows of a finished run's result.
type Page struct {
	View *View
	// Groups are the chart sections above the results table, in page order.
	Groups []*Group
	Table  Table
	// Settings is the settings table, nil without objectives.
	Settings *Table
	// Bounds is the network-calculus section, nil for a run stored
	// without bounds.
	Bounds *Bounds
	// Answer is the recommendation for the config's objectives, nil
	// without objectives.
	Answer *Answer
	// Lead is the key chart the run page opens with, above the collapsed
	// sections: a group of one chart (with its group's title, intro and
	// axis choice) taken out of its group; nil for a run without charts.
	Lead *Group
}

// NewPage builds the run page's view of a result; chosen is the point
// whose time series it shows (< 0: a default, see NewView).
func NewPage(res *experiments.Result, chosen int, runID string) *Page {
	return NewPageQuery(res, Query{Point: chosen}, runID)
}

// Query is what a run page's address (its query parameters) asks of the
// page beyond the deploy section; Clean makes it a page-cache key.
type Query struct {
	// Point is the point of the time-series charts (< 0: the default).
	Point int
	// Sort is the results table's sort column (a TableKeys key, "": sweep
	// order), Desc its direction; Feasible shows only the points meeting
	// every objective, SettingFeasible only the points whose setting meets
	// every objective in every scenario (the answer's sense).
	Sort            string
	Desc            bool
	Feasible        bool
	SettingFeasible bool
	// ParetoX and ParetoY are the Pareto chart's columns (ParetoKeys; "":
	// the default).
	ParetoX, ParetoY string
	// Cols are the results table's columns, results.csv keys joined by
	// commas in cleanColumns' form ("": the default columns).
	Cols string
	// SettingsSort, SettingsDesc and SettingsFeasible are the settings
	// table's sort column (a header key, "": the settings' order), its
	// direction and its filter (only the settings meeting every
	// objective).
	SettingsSort     string
	SettingsDesc     bool
	SettingsFeasible bool
}

// Clean drops what the page would not use: an unknown sort or Pareto
// column, a direction without a sort; it writes the table's columns in
// one form.
func (q Query) Clean() Query {
	q.Cols = cleanColumns(q.Cols)
	if q.Sort == "" || !slices.Contains(TableKeys(), q.Sort) && !slices.Contains(strings.Split(q.Cols, ","), q.Sort) {
		q.Sort, q.Desc = "", false
	}
	if k := q.SettingsSort; k == "" || k == "point" || cleanColumns(k) != k {
		q.SettingsSort, q.SettingsDesc = "", false
	}
	if !slices.Contains(ParetoKeys(), q.ParetoX) {
		q.ParetoX = ""
	}
	if !slices.Contains(ParetoKeys(), q.ParetoY) {
		q.ParetoY = ""
	}
	return q
}

// NewPageQuery builds the run page's view of a result as q asks.
func NewPageQuery(res *experiments.Result, q Query, runID string) *Page {
	q = q.Clean()
	v := NewView(res, q.Point)
	v.Query = q
	p := &Page{View: v, Groups: v.Groups(), Table: newTable(v, runID), Settings: newSettingsTable(v), Bounds: newBounds(v, runID), Answer: newAnswer(v)}
	p.takeLead()
	return p
}

// leadCharts are the charts a run page leads with, the first the page has:
// with objectives the Pareto front (the trade-off the answer settles, the
// recommended settings pinned), else goodput, the question every sweep
// asks first.
var leadCharts = []string{"chart-pareto", "chart-goodput", "chart-series"}

// takeLead moves the key chart out of its group into Lead (with the
// group's axis choice); a group left without charts goes.
func (p *Page) takeLead() {
	ids := leadCharts
	if p.Answer == nil {
		ids = ids[1:]
	}
	take := func(gi, ci int) {
		g := p.Groups[gi]
		p.Lead = &Group{ID: "key", Title: g.Title, Intro: g.Intro, Charts: []Chart{g.Charts[ci]}, Axes: g.Axes}
		rest := *g
		rest.Charts, rest.Axes = slices.Delete(slices.Clone(g.Charts), ci, ci+1), nil
		if len(rest.Charts) == 0 {
			p.Groups = slices.Delete(slices.Clone(p.Groups), gi, gi+1)
			return
		}
		p.Groups = slices.Clone(p.Groups)
		p.Groups[gi] = &rest
	}
	for _, id := range ids {
		for gi, g := range p.Groups {
			for ci, c := range g.Charts {
				if c.ID == id {
					take(gi, ci)
					return
				}
			}
		}
	}
	if len(p.Groups) > 0 {
		take(0, 0)
	}
}

// sections are the chart sections above the results table, in page order;
// each returns nil when the run has nothing to show in it.
var sections = []func(v *View) *Group{
	throughputSection,
	delaySection,
	downstreamSection,
	fairnessSection,
	flowSection,
	timeSection,
	instancesSection,
	adaptiveSection,
	recoverySection,
	clientSection,
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
