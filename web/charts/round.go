package charts

import (
	"math"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// Rounding: a chart's values are rounded when its option is built, so a
// tooltip prints a number a person reads (73.2, not 73.16666666666667).
// A value rounds to its measure's places, those of its results column
// (experiments.Column.MeanFormat: what results.csv and the results table
// print), else the lab's Fixed1; a swept parameter on the x axis stays as
// the config gives it. Rounding never moves what is drawn by a pixel: where
// an axis' span is small, a value keeps the places that span needs
// (roundPlaces), and on a log axis its leading significant digits.

// A chart's plot is at most plotWidthPx wide (the page's main column is
// 1400 px, static/style.css) and plotHeightPx high (a chart is 380 px high
// and its grid leaves at least 70 px above and 95 px below, 215 px; with a
// margin): rounding moves no value by a pixel or more of these.
const (
	plotWidthPx  = 1400
	plotHeightPx = 240
)

// logDigits are the significant digits a value on a log axis keeps: its
// rounding then moves it by at most 0.05% (0.0002 decades).
const logDigits = 4

// rounding says how a chart's values round: x and y are the places of the
// measure on each axis; exactX keeps the x values as given (swept
// parameters: the config's values).
type rounding struct {
	x, y   int
	exactX bool
}

// defaultRounding is a chart's rounding until it names its measures: the
// lab's rates, percentages and delays (Fixed1) on both axes.
func defaultRounding() rounding {
	p := experiments.Fixed1.Places()
	return rounding{x: p, y: p}
}

// columnPlaces are the places of a results column's values on a chart
// (any column a "points" report can name but a class's): its mean's
// format (a mean of counts has a decimal), else Fixed1's.
func columnPlaces(key string) int {
	if c := experiments.PointColumn(&experiments.Config{}, key, ""); c != nil && c.Format != experiments.Text {
		return c.MeanFormat().Places()
	}
	return experiments.Fixed1.Places()
}

func (o *Option) rounds() *rounding {
	if o.round == nil {
		r := defaultRounding()
		o.round = &r
	}
	return o.round
}

// measure rounds the chart's y values at the places of results column key.
func (o *Option) measure(key string) { o.rounds().y = columnPlaces(key) }

// measureX rounds the chart's x values at the places of results column key.
func (o *Option) measureX(key string) { o.rounds().x, o.rounds().exactX = columnPlaces(key), false }

// keepX keeps the chart's x values as given (swept parameters).
func (o *Option) keepX() { o.rounds().exactX = true }

// roundPlaces are the places a value on a linear axis of px pixels
// spanning span keeps: the measure's places, more where half a unit of
// the last place would move it by a pixel or more.
func roundPlaces(places int, span, px float64) int {
	if span > 0 && !math.IsInf(span, 0) {
		// 0.5·10^-p / span · px < 1  ⇔  p > log10(px / (2·span))
		need := int(math.Floor(math.Log10(px/(2*span)))) + 1
		places = max(places, need)
	}
	return min(places, 15)
}

// roundLog rounds v on a log axis: its measure's places, or its first
// logDigits significant digits when those are more.
func roundLog(v float64, places int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	sig := logDigits - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	return format.RoundTo(v, min(max(places, sig), 15))
}

// axisRounder rounds the values of one axis of a chart.
type axisRounder struct {
	places int
	log    bool
	skip   bool
}

func (a axisRounder) round(v float64) float64 {
	switch {
	case a.skip:
		return v
	case a.log:
		return roundLog(v, a.places)
	}
	return format.RoundTo(v, a.places)
}

// roundData rounds every series' values as o.round says (heatmaps print
// their own values, at their column's precision, and are left alone).
func roundData(o *Option) {
	r := defaultRounding()
	if o.round != nil {
		r = *o.round
	}
	xLog := len(o.XAxis) > 0 && o.XAxis[0].Type == "log"
	yLog := len(o.YAxis) > 0 && o.YAxis[0].Type == "log"
	xScale := len(o.XAxis) > 0 && o.XAxis[0].Scale
	// The spans the data cover (a value axis starts at 0 unless it scales).
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), 0.0, 0.0
	if xScale {
		xlo, xhi = math.Inf(1), math.Inf(-1)
	} else {
		xlo, xhi = 0, 0
	}
	eachValue(o, func(_ int, dim int, v float64) float64 {
		if dim == 0 {
			xlo, xhi = math.Min(xlo, v), math.Max(xhi, v)
		} else {
			ylo, yhi = math.Min(ylo, v), math.Max(yhi, v)
		}
		return v
	})
	// Stacked series (an interval band) reach their sum.
	stacks := map[string][]float64{}
	for _, s := range o.Series {
		if s.Stack == "" {
			continue
		}
		sum := stacks[s.Stack]
		for i, it := range s.Data {
			if xy, ok := it.Value.([]float64); ok && len(xy) >= 2 {
				if i >= len(sum) {
					sum = append(sum, make([]float64, i+1-len(sum))...)
				}
				sum[i] += xy[1]
				ylo, yhi = math.Min(ylo, sum[i]), math.Max(yhi, sum[i])
			}
		}
		stacks[s.Stack] = sum
	}
	xs := axisRounder{places: roundPlaces(r.x, xhi-xlo, plotWidthPx), log: xLog, skip: r.exactX || categoricalX(o)}
	ys := axisRounder{places: roundPlaces(r.y, yhi-ylo, plotHeightPx), log: yLog}
	eachValue(o, func(si int, dim int, v float64) float64 {
		if dim == 0 {
			if !o.Series[si].exact {
				v = xs.round(v)
			}
			return v
		}
		if o.Series[si].exact {
			return v
		}
		return ys.round(v)
	})
	// An axis tooltip's header prints each x value as it is here
	// (static/app.js, exactAxisValues).
}

// categoricalX reports whether o's x axis names categories (its x values
// are category indices).
func categoricalX(o *Option) bool { return len(o.XAxis) > 0 && o.XAxis[0].Type == "category" }

// eachValue calls f on every number of every series' items but heatmaps'
// (dim 0: an [x, y] pair's x; 1: its y or a bar's value) and stores what
// f returns.
func eachValue(o *Option, f func(series, dim int, v float64) float64) {
	for si := range o.Series {
		s := &o.Series[si]
		if s.Type == "heatmap" || s.Type == "parallel" { // a parallel item's values are rounded per axis when built
			continue
		}
		for i := range s.Data {
			switch val := s.Data[i].Value.(type) {
			case float64:
				s.Data[i].Value = f(si, 1, val)
			case []float64:
				for d := range min(len(val), 2) {
					val[d] = f(si, d, val[d])
				}
			case []any:
				for d := range min(len(val), 2) {
					if x, ok := val[d].(float64); ok {
						val[d] = f(si, d, x)
					}
				}
			}
		}
	}
}
