package charts

import (
	"fmt"
	"strconv"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// maxSeriesPoints bounds a time-series line: longer runs are shown in
// buckets of several series windows (Config.SeriesWindow; rates stay rates), at most about
// 2,000 to a line; series.csv keeps every window.
const maxSeriesPoints = 2000

// offeredColor draws the offered load of the time series, under the
// limiters' lines.
const offeredColor = "#9ca3af"

// timeSection shows the chosen point's time series beside the other
// limiters at the same step: offered against released, rejected, and the
// requests at the server.
func timeSection(v *View) *Group {
	res := v.Res
	chosen := &res.Points[v.Chosen]
	windows := 0
	for _, pi := range v.Step {
		windows = max(windows, res.Points[pi].Series.Windows())
	}
	bucket := max((windows+maxSeriesPoints-1)/maxSeriesPoints, 1)
	sw := int(res.Config.SeriesWindow())
	width := float64(bucket * sw)
	sub := fmt.Sprintf("per %s ms window", format.Num(width))
	if bucket > 1 {
		sub = fmt.Sprintf("per %s ms window (%d of the %d ms windows merged; %s has each)", format.Num(width), bucket, sw, experiments.FileSeries)
	}
	runs := v.replicas()
	if runs > 0 {
		for _, pi := range v.Step {
			windows = max(windows, res.Points[pi].Band.Released.Windows(), res.Points[pi].Band.Offered.Windows())
		}
		bucket = max((windows+maxSeriesPoints-1)/maxSeriesPoints, 1)
		width = float64(bucket * sw)
		sub = fmt.Sprintf("per %s ms window", format.Num(width)) + bandNote(runs, bucket)
	}
	title := "Over time, at " + v.pointLabel(chosen)
	if runs == 0 {
		// A replicated run stored without its bands (before series blob
		// format 4) has its first runs' series only.
		title += v.firstRun(chosen)
	}
	g := &Group{ID: "timeline", Title: title,
		Intro: "Pick a point in the results table (\"show\") to see its time series; the other limiters are shown at the same swept value."}
	// buckets folds each bucket of windows into one value at its start.
	buckets := func(fold func(from, to int) float64) []Item {
		data := make([]Item, 0, windows/bucket+1)
		for k := 0; k < windows; k += bucket {
			data = append(data, xy(float64(k*sw), fold(k, k+bucket)))
		}
		return data
	}
	rate := func(xs []int32) []Item {
		return buckets(func(from, to int) float64 {
			sum := 0
			for j := from; j < to; j++ {
				sum += int(experiments.At(xs, j))
			}
			return float64(sum) * 1000 / width
		})
	}
	// banded is, with replications, the mean over the runs of a band's
	// series and its interval (ok false without replications).
	banded := func(p *experiments.Point, sums func(b *experiments.SeriesBand) *experiments.WindowSums, most bool) (mean, lo, hi []Item, ok bool) {
		if runs == 0 || p.Band == nil {
			return nil, nil, nil, false
		}
		scale := 1000 / width
		if most {
			scale = 1
		}
		mean, lo, hi = bandItems(sums(p.Band), runs, windows, bucket, float64(sw), scale, most)
		return mean, lo, hi, true
	}
	// perLimiter is a chart of one series per limiter at the chosen step,
	// after the series that before adds; with replications each line is
	// the mean of the runs over its shaded 95% interval.
	perLimiter := func(id, title, subtitle, yName, suffix string, values func(p *experiments.Point) []Item,
		sums func(b *experiments.SeriesBand) *experiments.WindowSums, most bool, before ...func(o *Option)) Chart {
		if len(v.Step) > 1 {
			subtitle = "colour: limiter; " + subtitle
		}
		o := newLine(title, subtitle, "time (ms)", yName, "value")
		zoomable(o, id)
		for _, add := range before {
			add(o)
		}
		// A colour a second time (past the palette's ten limiters) is
		// dashed, a third time dotted, so no two lines look alike.
		seen := map[string]int{}
		for _, pi := range v.Step {
			p := &res.Points[pi]
			c := v.pointColor(p)
			line := func(s *Series) {
				ls := dashStyles[seen[c]%len(dashStyles)]
				ls.Width, ls.Color = 2, c
				s.LineStyle = &ls
			}
			seen[c]++
			if mean, lo, hi, ok := banded(p, sums, most); ok {
				o.addBand(v.pointLabel(p)+suffix+" 95% interval", c, lo, hi, steps)
				o.addLine(v.pointLabel(p)+suffix, mean, styled(c, line, steps)...)
				continue
			}
			o.addLine(v.pointLabel(p)+suffix, values(p), styled(c, line, steps)...)
		}
		return chart(id, title, o)
	}

	offered := func(o *Option) {
		data := rate(chosen.Series.Offered)
		if mean, _, _, ok := banded(chosen, func(b *experiments.SeriesBand) *experiments.WindowSums { return &b.Offered }, false); ok {
			data = mean
		}
		o.addLine("offered", data, steps, func(s *Series) {
			s.LineStyle, s.ItemStyle = &LineStyle{Color: offeredColor, Width: 1}, &ItemStyle{Color: offeredColor}
			s.AreaStyle = &AreaStyle{Opacity: 0.15}
		})
	}
	g.Charts = append(g.Charts,
		perLimiter("chart-series", "Offered against released", sub+"; releases after the arrival window extend the line", "rate (req/s)", " released",
			func(p *experiments.Point) []Item { return rate(p.Series.Released) },
			func(b *experiments.SeriesBand) *experiments.WindowSums { return &b.Released }, false, offered),
		perLimiter("chart-rejected", "Rejected over time", sub, "rejected (req/s)", "",
			func(p *experiments.Point) []Item { return rate(p.Series.Rejected) },
			func(b *experiments.SeriesBand) *experiments.WindowSums { return &b.Rejected }, false),
		perLimiter("chart-insystem", "Requests at the server", sub+"; the most waiting or in service, seen at releases", "in system (requests)", "",
			func(p *experiments.Point) []Item {
				return buckets(func(from, to int) float64 {
					m := int32(0)
					for j := from; j < to; j++ {
						m = max(m, experiments.At(p.Series.InSystemMax, j))
					}
					return float64(m)
				})
			},
			func(b *experiments.SeriesBand) *experiments.WindowSums { return &b.InSystemMax }, true))
	return g
}

// zoomable lets a time-series chart zoom (the wheel or a drag on the plot,
// and a slider under it) and save itself as a PNG.
func zoomable(o *Option, name string) {
	o.DataZoom = []DataZoom{{Type: "inside", FilterMode: "none"}, {Type: "slider", FilterMode: "none", Bottom: "30", Height: 18}}
	o.Toolbox = &Toolbox{Right: "10", Feature: &ToolboxFeature{SaveAsImage: &SaveAsImage{Name: name, Title: "save as image"}}}
	if b, err := strconv.Atoi(o.Grid[0].Bottom); err == nil {
		o.Grid[0].Bottom = strconv.Itoa(b + 20)
	}
}
