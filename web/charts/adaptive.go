package charts

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// adaptiveSection shows the adaptive concurrency gates at the chosen step
// (experiments.AdaptiveMetrics, as the engine filed them): each one's
// limit over time against the server's ideal concurrency, and the mean
// RTT of its samples. Nil when no point of the step is adaptive.
func adaptiveSection(v *View) *Group {
	res := v.Res
	var pts []*experiments.Point
	for _, pi := range v.Step {
		if res.Points[pi].Metrics.Adaptive != nil {
			pts = append(pts, &res.Points[pi])
		}
	}
	if len(pts) == 0 {
		return nil
	}
	sw := res.Config.SeriesWindow()
	windows := len(pts[0].Metrics.Adaptive.Limit)
	bucket := max((windows+maxSeriesPoints-1)/maxSeriesPoints, 1)
	sub := fmt.Sprintf("per %s ms window, at its end; dashed: the server's ideal concurrency (capacity × latency)", format.Num(float64(bucket)*sw))
	g := &Group{ID: "adaptive", Title: "Adaptive limits" + v.firstRun(&res.Points[v.Chosen]),
		Intro: "Each adaptive limiter's concurrency limit over time against what the server can serve at once without queueing (its workers, its knee, a degrade's workers); and the mean RTT its samples saw."}
	// series is every bucket's last window of xs (a limit is a level, not a count).
	series := func(xs []int32, scale float64) []Item {
		out := make([]Item, 0, windows/bucket+1)
		for k := 0; k < windows; k += bucket {
			last := min(k+bucket, windows) - 1
			out = append(out, xy(float64(last+1)*sw, float64(experiments.At(xs, last))*scale))
		}
		return out
	}
	limit := newLine("Concurrency limit", sub, "time (ms)", "limit (requests)", "value")
	limit.addLine("ideal concurrency", series(pts[0].Metrics.Adaptive.Ideal, 1), styled("#888888", dashed, plain)...)
	rtt := newLine("Mean RTT of the samples", fmt.Sprintf("per %s ms window (the last of each %d)", format.Num(float64(bucket)*sw), bucket), "time (ms)", "RTT (ms)", "value")
	for _, p := range pts {
		a := p.Metrics.Adaptive
		limit.addLine(v.pointLabel(p), series(a.Limit, 1), styled(v.pointColor(p), solid, plain)...)
		rtt.addLine(v.pointLabel(p), series(a.RTTMeanUS, 0.001), styled(v.pointColor(p), solid, plain)...)
	}
	g.Charts = append(g.Charts, chart("chart-adaptive-limit", "Concurrency limit against the ideal concurrency", limit),
		chart("chart-adaptive-rtt", "Mean RTT of the samples", rtt))
	return g
}
