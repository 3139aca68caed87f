package charts

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/web/format"
)

// Bounds is the run page's network-calculus section: a table of every
// point's bounds beside its measurements, the empirical arrival curves
// against alpha and beta, tandems' end-to-end bounds, and heatmaps of
// two-parameter sweeps.
type Bounds struct {
	RunID string
	Rows  []BoundsRow
	// Chosen is the chosen point's row when it is a chain (its hops).
	Chosen   *BoundsRow
	Chains   bool
	Groups   []*Group
	Deadline string
}

// BoundsRow is one point of the bounds table; cells are formatted, "" when
// the point has no such bound.
type BoundsRow struct {
	Limiter, Swept, Link string
	Chosen               bool
	Alpha, Beta, Note    string

	Backlog, BacklogBound, BacklogRatio string
	Sojourn, SojournBound, SojournRatio string
	Gate, GateBound                     string
	E2E, E2EBound, E2ERatio             string
	Concat, PerHop                      string
	// Hops are a chain's per-hop bounds; HopsText lists them in one line.
	Hops     []HopRow
	HopsText string
}

// HopRow is one hop of a chain and the bound on the time spent there (ms).
type HopRow struct{ Hop, BoundMS string }

func fmt1(v float64) string { return string(experiments.AppendValue(nil, experiments.Fixed1, v)) }

func ratio(m, b float64) string {
	return string(experiments.AppendValue(nil, experiments.Fixed4, experiments.Tightness(m, b)))
}

// curveText writes a curve in req/s, the unit of the lab's parameters.
func curveText(c *calculus.Curve) string {
	switch c.Kind {
	case calculus.KindAffine:
		return fmt.Sprintf("%s + %s req/s × d", format.Num(c.BurstReq), format.Num(calculus.RPS(c.RatePerMS)))
	case calculus.KindDual:
		return fmt.Sprintf("min(%s + %s req/s × d, %s req/s × d)", format.Num(c.BurstReq), format.Num(calculus.RPS(c.RatePerMS)), format.Num(calculus.RPS(c.PeakPerMS)))
	case calculus.KindStaircase:
		return fmt.Sprintf("%s × (⌊d / %s ms⌋ + %d)", format.Num(c.StepReq), format.Num(c.PeriodMS), c.Steps0)
	}
	return c.String()
}

// betaText writes a server's service curve; a server without one (a
// service distribution with no maximum: rate 0) gets "none", never a
// curve of 0 req/s.
func betaText(b calculus.RateLatency) string {
	if !hasBeta(b) {
		return "none (service time without a maximum)"
	}
	return fmt.Sprintf("%s req/s × [d − %s ms]⁺", format.Round(calculus.RPS(b.RatePerMS), 2), format.Round(b.LatencyMS, 2))
}

// hasBeta reports whether a server has a service curve.
func hasBeta(b calculus.RateLatency) bool { return b.RatePerMS > 0 }

// hasBounds reports whether a run was stored with bounds.
func hasBounds(v *View) bool {
	return len(v.Res.Points) > 0 && v.Res.Points[0].Bounds != nil
}

// newBounds builds the section, or nil for a run stored without bounds.
func newBounds(v *View, runID string) *Bounds {
	if !hasBounds(v) {
		return nil
	}
	bv := &Bounds{RunID: runID, Deadline: format.Num(v.Res.Config.Server.DeadlineMS)}
	extras := PointExtras(v.Res.Config, v.Res.Points)
	for i := range v.Res.Points {
		p := &v.Res.Points[i]
		if p.Bounds == nil {
			continue
		}
		row := boundsRow(p, fmt.Sprintf("/runs/%s?point=%d#bounds", runID, i), i == v.Chosen)
		if extra := extras[i]; extra != "" {
			row.Limiter += " (" + extra + ")"
		}
		bv.Chains = bv.Chains || len(row.Concat) > 0
		bv.Rows = append(bv.Rows, row)
	}
	for i := range bv.Rows {
		if bv.Rows[i].Chosen && len(bv.Rows[i].Hops) > 0 {
			bv.Chosen = &bv.Rows[i]
		}
	}
	for _, g := range []*Group{arrivalCurveGroup(v), tandemGroup(v), heatmapGroup(v)} {
		if g != nil {
			bv.Groups = append(bv.Groups, g)
		}
	}
	return bv
}

// PointExtras names, for each of the sweep's points pts, what tells it
// apart from the others beyond its limiter's parameters: its server,
// client policy and load, and the values of the swept workload, server and
// seed fields, each where it varies ("no-retry",
// "workload.parts[0].rate_rps=60"); "" when nothing. The bounds table and
// the Deploy menu label points with it.
func PointExtras(cfg *experiments.Config, pts []experiments.Point) []string {
	all := make([]*experiments.Point, len(pts))
	for i := range pts {
		all[i] = &pts[i]
	}
	axes := cfg.Axes()
	out := make([]string, len(pts))
	for i, p := range all {
		out[i] = strings.Join(append(variantSplit(all, p), axisSplit(axes, all, p, "")...), ", ")
	}
	return out
}

// boundsRow is a point's row of the bounds table.
func boundsRow(p *experiments.Point, link string, chosen bool) BoundsRow {
	b := p.Bounds
	row := BoundsRow{Limiter: p.Limiter, Swept: "—", Link: link, Chosen: chosen,
		Beta: betaText(b.Beta), Note: b.Note,
		Backlog: strconv.Itoa(b.BacklogMax), Sojourn: fmt1(b.SojournMaxMS), Gate: fmt1(b.GateDelayMaxMS), E2E: fmt1(b.EndToEndMaxMS)}
	if p.Swept != "" {
		row.Swept = formatParams(p)
	}
	if b.Alpha != nil {
		row.Alpha = curveText(b.Alpha)
	}
	if !b.Bounded {
		return row
	}
	row.BacklogBound, row.BacklogRatio = fmt1(b.BacklogBound), ratio(float64(b.BacklogMax), b.BacklogBound)
	row.SojournBound, row.SojournRatio = fmt1(b.SojournBoundMS), ratio(b.SojournMaxMS, b.SojournBoundMS)
	row.GateBound = fmt1(b.GateDelayBoundMS)
	row.E2EBound, row.E2ERatio = fmt1(b.EndToEndBoundMS), ratio(b.EndToEndMaxMS, b.EndToEndBoundMS)
	if !isChain(p) {
		return row
	}
	row.PerHop = fmt1(b.PerHopSumMS)
	var parts []string
	for _, h := range b.Hops {
		row.Hops = append(row.Hops, HopRow{Hop: h.Hop, BoundMS: fmt1(h.BoundMS)})
		parts = append(parts, fmt.Sprintf("%s: %s ms", h.Hop, fmt1(h.BoundMS)))
	}
	row.HopsText = strings.Join(parts, "; ")
	if b.ConcatenatedMS > 0 {
		row.Concat = fmt1(b.ConcatenatedMS)
	} else {
		row.Concat = "n/a (a gate follows a server)"
	}
	return row
}

// tandemGroup compares a chain's measured end-to-end maximum with its two
// bounds along the sweep; nil without a chain.
func tandemGroup(v *View) *Group {
	const title = "Tandem: end-to-end against the bounds"
	o := newLine(title, "solid: measured maximum; dashed: concatenated (pay bursts once); dotted: sum of per-hop bounds", v.sweptAxisName(), "arrival to finish (ms)", "value")
	o.keepX() // the swept values, as the config gives them
	o.measure("end_to_end_max_ms")
	found := false
	bound := func(f func(b *experiments.Bounds) (float64, bool)) metric {
		return func(p *experiments.Point) (float64, bool) {
			if p.Bounds == nil {
				return 0, false
			}
			return f(p.Bounds)
		}
	}
	for _, l := range v.Lines {
		if !isChain(l.Points[0]) {
			continue
		}
		found = true
		one := &View{Res: v.Res, Lines: []SweepLine{l}, parent: v}
		one.sweepLines(o, " measured", bound(func(b *experiments.Bounds) (float64, bool) { return b.EndToEndMaxMS, true }), solid)
		one.sweepLines(o, " concatenated", bound(func(b *experiments.Bounds) (float64, bool) {
			return b.ConcatenatedMS, b.Bounded && b.ConcatenatedMS > 0
		}), dashed)
		one.sweepLines(o, " per-hop sum", bound(func(b *experiments.Bounds) (float64, bool) { return b.PerHopSumMS, b.Bounded }), dotted)
	}
	if !found {
		return nil
	}
	return &Group{ID: "tandem", Title: "Tandem: pay bursts only once",
		Intro:  "Servers in series act as one server with the smallest rate and the summed latencies, so the burst is paid once; adding per-hop bounds pays it at every hop, grown by each hop's latency.",
		Charts: []Chart{chart("chart-tandem", title, o)}}
}
