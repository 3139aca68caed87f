package charts

import (
	"fmt"
	"math"
	"slices"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// parallelChart draws, for a config with three objectives or more, every
// setting (experiments/decide: a limiter at one value of each swept
// parameter, over its scenarios) as a line across one axis per objective,
// at its worst value over its scenarios, and its worst-scenario goodput
// when no objective is on goodput: the settings meeting every objective
// in colour, the others grey, the recommended ones bold. Each axis points
// the way its objective is better (an upper bound: lower values higher).
// Settings without a point in every scenario are left out. Nil with fewer
// than three objectives.
func parallelChart(v *View) *Chart {
	a := v.Answer
	if a == nil || len(a.Objectives) < 3 {
		return nil
	}
	o := &Option{
		Title:    Title{Text: "Settings over every objective", Subtext: "each setting's worst value over its scenarios; up is better on every axis", Left: "center"},
		Tooltip:  Tooltip{Show: boolPtr(true), Trigger: "item"},
		Legend:   &Legend{Type: "plain", Show: boolPtr(true), Bottom: "0"},
		Parallel: &Parallel{Left: "70", Right: "90", Top: "90", Bottom: "60", AxisDefault: &ParallelAxisDefault{NameLocation: "end", NameGap: 20}},
	}
	goodput := !slices.ContainsFunc(a.Objectives, func(ob experiments.Objective) bool { return ob.Metric == "goodput_rps" })
	for j, ob := range a.Objectives {
		ax := ParallelAxis{Dim: j, Name: ob.String(), Type: "value", Scale: true, Inverse: ob.Upper()}
		if ax.Inverse {
			ax.NameLocation = "start" // an inverse axis's end is at the bottom
		}
		o.ParallelAxis = append(o.ParallelAxis, ax)
	}
	if goodput {
		o.ParallelAxis = append(o.ParallelAxis, ParallelAxis{Dim: len(a.Objectives), Name: "worst goodput_rps", Type: "value", Scale: true})
	}
	recommended := map[int]bool{}
	for _, ch := range a.Choices {
		if ch.Feasible > 0 && ch.Setting >= 0 {
			recommended[ch.Setting] = true
		}
	}
	var meets, misses, picks []Item
	for si := range a.Settings {
		s := &a.Settings[si]
		if !s.Complete {
			continue
		}
		var vals []float64
		for _, out := range s.Outcomes {
			if !out.HasValue {
				vals = nil
				break
			}
			vals = append(vals, format.RoundTo(out.Measured, columnPlaces(out.Objective.Metric)))
		}
		if vals == nil {
			continue
		}
		if goodput {
			vals = append(vals, format.RoundTo(s.WorstGoodputRPS, columnPlaces("goodput_rps")))
		}
		name := s.Limiter
		if n := s.Name(); n != "" {
			name += " " + n
		}
		point := s.Point(-1)
		tip := []string{"setting: " + name, fmt.Sprintf("point %d in its binding scenario", point)}
		switch {
		case s.BestOverall && s.MeetsAll:
			tip = append(tip, "best overall (recommended)")
		case recommended[si]:
			tip = append(tip, "recommended for its limiter")
		}
		it := Item{Name: name, Value: vals, Point: &point, Tip: tip}
		switch {
		case recommended[si]:
			picks = append(picks, it)
		case s.MeetsAll:
			meets = append(meets, it)
		default:
			misses = append(misses, it)
		}
	}
	line := func(color string, width float32, opacity float64) seriesOption {
		return func(s *Series) {
			s.LineStyle = &LineStyle{Color: color, Width: width, Opacity: &opacity}
			s.ItemStyle = &ItemStyle{Color: color}
		}
	}
	for _, s := range []struct {
		name  string
		items []Item
		style seriesOption
	}{
		{"misses an objective", misses, line(referenceColor, 1, 0.35)},
		{"meets every objective", meets, line("#16a34a", 2, 0.9)},
		{"recommended", picks, line(recommendedColor, 4, 1)},
	} {
		if len(s.items) > 0 {
			o.add(s.name, "parallel", s.items, s.style)
		}
	}
	if len(o.Series) == 0 {
		return nil
	}
	// Each axis spans every series' values, out to round numbers.
	for d := range o.ParallelAxis {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range o.Series {
			for _, it := range s.Data {
				v := it.Value.([]float64)[d]
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		lo, hi = roundExtent(lo, hi)
		o.ParallelAxis[d].Min, o.ParallelAxis[d].Max = &lo, &hi
	}
	c := chart("chart-parallel", o.Title.Text, o)
	return &c
}

// roundExtent widens [lo, hi] to multiples of the power of ten below its
// span (a span of 0: the value ± 1).
func roundExtent(lo, hi float64) (float64, float64) {
	if hi-lo <= 0 {
		return lo - 1, hi + 1
	}
	step := math.Pow(10, math.Floor(math.Log10(hi-lo)))
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step
}
