// Package decide turns a sweep's results and its config's objectives into
// the answer: which points meet every objective, the setting to deploy per
// limiter, the objective that binds it and by how much, and, when no point
// of a limiter meets every objective, the point that comes closest and what
// it misses. It is pure: a stored Result in, an Answer out.
//
// The rule, per limiter:
//   - a point is feasible when it passes every objective (values compared
//     unrounded; a metric the point has no value of fails);
//   - the recommendation is the feasible point with the highest
//     goodput_rps; ties go to the smallest value of the limiter's size
//     parameter (limiter.Kind.Size), then of its other parameters in their
//     order, then to the earlier point;
//   - the binding objective is the one with the smallest relative slack,
//     (target - measured)/|target| for <= and <, (measured - target)/|target|
//     for >= and > (divided by 1 when the target is 0);
//   - with no feasible point, the closest point is the one with the fewest
//     objectives it has no value for, then the smallest total relative
//     violation (the sum of the negative slacks), then the rule's ties;
//   - with replications (a point's Stats), an objective is judged on the
//     pessimistic end of the metric's 95% confidence interval: the upper
//     end for <= and <, the lower end for >= and > (the mean when the
//     point has fewer than two values); goodput is its mean.
package decide

import (
	"math"
	"slices"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// Check is one objective at one point.
type Check struct {
	Objective experiments.Objective
	// Measured is the point's value (HasValue false: the point has none):
	// with replications, the pessimistic end of its interval.
	Measured float64
	HasValue bool
	// Mean and HalfWidth are the replications' mean and 95% half-width
	// when Interval (Measured is then Mean ± HalfWidth).
	Mean, HalfWidth float64
	Interval        bool
	Pass            bool
	// Slack is the relative margin: positive inside the target, negative
	// outside it (see the package doc); 0 without a value.
	Slack float64
}

// Verdict is every objective at one point.
type Verdict struct {
	Point    int // index into Result.Points
	Checks   []Check
	MeetsAll bool
}

// Evaluate checks every objective at a point.
func Evaluate(objs []experiments.Objective, p *experiments.Point) Verdict {
	v := Verdict{Point: p.Index, MeetsAll: true}
	for _, o := range objs {
		c := Check{Objective: o}
		if col := experiments.ColumnByKey(o.Metric); col != nil && col.Value != nil {
			c.Measured, c.HasValue = col.Value(p)
		}
		if st, ok := p.Stat(o.Metric); ok && st.N > 1 {
			c.Mean, c.HalfWidth, c.Interval = st.Mean, st.HalfWidth, true
			c.Measured = st.Mean - st.HalfWidth
			if o.Upper() {
				c.Measured = st.Mean + st.HalfWidth
			}
		}
		if c.HasValue {
			c.Slack = slack(o, c.Measured)
			c.Pass = c.Slack > 0 || (c.Slack == 0 && !o.Strict())
		}
		v.MeetsAll = v.MeetsAll && c.Pass
		v.Checks = append(v.Checks, c)
	}
	return v
}

func slack(o experiments.Objective, measured float64) float64 {
	d := o.Value - measured
	if !o.Upper() {
		d = -d
	}
	if den := math.Abs(o.Value); den > 0 {
		return d / den
	}
	return d
}

// Violation is the total relative violation of a verdict and the number of
// objectives the point has no value for.
func (v *Verdict) Violation() (total float64, missing int) {
	for _, c := range v.Checks {
		switch {
		case !c.HasValue:
			missing++
		case !c.Pass:
			total += max(-c.Slack, 0)
		}
	}
	return total, missing
}

// Binding is the passing check with the smallest slack (nil without checks).
func (v *Verdict) Binding() *Check {
	var b *Check
	for i := range v.Checks {
		c := &v.Checks[i]
		if c.Pass && (b == nil || c.Slack < b.Slack) {
			b = c
		}
	}
	return b
}

// Misses are the checks a point fails.
func (v *Verdict) Misses() []Check {
	var out []Check
	for _, c := range v.Checks {
		if !c.Pass {
			out = append(out, c)
		}
	}
	return out
}

// Choice is the answer for one limiter.
type Choice struct {
	LimiterIndex int
	Limiter      string
	Type         limiter.Type
	// Feasible counts the limiter's points that meet every objective.
	Feasible int
	Points   int
	// Point is the recommended point (Feasible > 0) or the closest one.
	Point   int
	Verdict Verdict
	// Binding is the recommendation's binding objective (nil when nothing
	// is feasible or there are no objectives).
	Binding *Check
	// Misses are what the closest point fails (empty for a recommendation).
	Misses []Check
}

// Answer is every limiter's choice and every point's verdict.
type Answer struct {
	Objectives []experiments.Objective
	Verdicts   []Verdict // per point, in point order
	Choices    []Choice  // per limiter, in the config's order
}

// Decide answers res's config's objectives; nil when it has none.
func Decide(res *experiments.Result) *Answer {
	objs := res.Config.Objectives
	if len(objs) == 0 {
		return nil
	}
	a := &Answer{Objectives: objs, Verdicts: make([]Verdict, len(res.Points))}
	for i := range res.Points {
		a.Verdicts[i] = Evaluate(objs, &res.Points[i])
	}
	for li := range res.Config.Limiters {
		spec := &res.Config.Limiters[li]
		var idx []int
		for i := range res.Points {
			if res.Points[i].LimiterIndex == li {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			continue
		}
		ch := Choice{LimiterIndex: li, Limiter: spec.Label(), Type: spec.Type, Points: len(idx)}
		order := paramOrder(spec)
		best := -1
		for _, i := range idx {
			if a.Verdicts[i].MeetsAll {
				ch.Feasible++
			}
		}
		for _, i := range idx {
			v := &a.Verdicts[i]
			if ch.Feasible > 0 && !v.MeetsAll {
				continue
			}
			if best < 0 || better(res, a, ch.Feasible > 0, order, i, best) {
				best = i
			}
		}
		ch.Point = best
		ch.Verdict = a.Verdicts[best]
		if ch.Feasible > 0 {
			ch.Binding = ch.Verdict.Binding()
		} else {
			ch.Misses = ch.Verdict.Misses()
		}
		a.Choices = append(a.Choices, ch)
	}
	return a
}

// better reports whether point i beats point j: among feasible points by
// goodput, else by closeness, then by the parameter ties.
func better(res *experiments.Result, a *Answer, feasible bool, order []string, i, j int) bool {
	pi, pj := &res.Points[i], &res.Points[j]
	if !feasible {
		ti, mi := a.Verdicts[i].Violation()
		tj, mj := a.Verdicts[j].Violation()
		if mi != mj {
			return mi < mj
		}
		if ti != tj {
			return ti < tj
		}
	}
	if gi, gj := goodput(pi), goodput(pj); gi != gj {
		return gi > gj
	}
	for _, name := range order {
		if vi, vj := pi.Params[name], pj.Params[name]; vi != vj {
			return vi < vj
		}
	}
	return i < j
}

// goodput is a point's goodput: its mean over replications.
func goodput(p *experiments.Point) float64 {
	if st, ok := p.Stat("goodput_rps"); ok && st.N > 0 {
		return st.Mean
	}
	return p.Metrics.GoodputRPS
}

// paramOrder is the tie order: the size parameter, then the others in the
// kind's order (a chain: its stages' parameters as its points name them).
func paramOrder(s *limiter.Spec) []string {
	k := s.Kind()
	if k != nil && k.Compound() {
		if j := s.SweptStage(); j >= 0 {
			return paramOrder(&s.Stages[j].Spec)
		}
		return nil
	}
	if k == nil {
		return nil
	}
	var names []string
	if k.Size != "" {
		names = append(names, k.Size)
	}
	for _, q := range k.Params {
		if !slices.Contains(names, q.Name) {
			names = append(names, q.Name)
		}
	}
	return names
}

// Guarantee is the network-calculus bound beside the measurement at a
// point: arrival to finish (end to end), or Note when the point has none.
type Guarantee struct {
	Bounded    bool
	BoundMS    float64
	MeasuredMS float64
	Note       string
}

// GuaranteeOf reads a point's end-to-end bound and its measured maximum.
func GuaranteeOf(p *experiments.Point) Guarantee {
	b := p.Bounds
	if b == nil {
		return Guarantee{Note: "no bound"}
	}
	if !b.Bounded {
		return Guarantee{Note: b.Note, MeasuredMS: b.EndToEndMaxMS}
	}
	return Guarantee{Bounded: true, BoundMS: b.EndToEndBoundMS, MeasuredMS: b.EndToEndMaxMS}
}

// Front is the Pareto front of points over two columns: the indexes of
// the points no other point beats on both (at least as good on each,
// better on one), ordered by x. xLower and yLower say whether less is
// better. Points without a value of either column are left out.
func Front(pts []experiments.Point, xKey string, xLower bool, yKey string, yLower bool) []int {
	xc, yc := experiments.ColumnByKey(xKey), experiments.ColumnByKey(yKey)
	if xc == nil || yc == nil || xc.Value == nil || yc.Value == nil {
		return nil
	}
	type xy struct {
		i    int
		x, y float64
	}
	var all []xy
	for i := range pts {
		x, okx := xc.Value(&pts[i])
		y, oky := yc.Value(&pts[i])
		if okx && oky {
			if !xLower {
				x = -x
			}
			if !yLower {
				y = -y
			}
			all = append(all, xy{i, x, y})
		}
	}
	var out []int
	for _, a := range all {
		beaten := false
		for _, b := range all {
			if b.x <= a.x && b.y <= a.y && (b.x < a.x || b.y < a.y) {
				beaten = true
				break
			}
		}
		if !beaten {
			out = append(out, a.i)
		}
	}
	slices.SortStableFunc(out, func(i, j int) int {
		xi, _ := xc.Value(&pts[i])
		xj, _ := xc.Value(&pts[j])
		switch {
		case xi < xj:
			return -1
		case xi > xj:
			return 1
		}
		return 0
	})
	return out
}

// LowerIsBetter says which way a column is better for a Pareto chart: the
// way the objectives on it point (an upper bound: lower is better), else
// lower for every column but goodput, admitted rate and Jain's index.
func LowerIsBetter(objs []experiments.Objective, key string) bool {
	for _, o := range objs {
		if o.Metric == key {
			return o.Upper()
		}
	}
	switch key {
	case "goodput_rps", "admitted_rps", "on_time", "admitted", "jain_index", "utilization_pct":
		return false
	}
	return true
}
