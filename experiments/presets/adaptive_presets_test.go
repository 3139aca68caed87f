package presets_test

import (
	"math"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
)

// The adaptive presets' numbers (issue 28), each computed from the run's
// adaptive measures (experiments.AdaptiveMetrics) and results, and
// asserted as their descriptions state them.

func estimate(t *testing.T, a *experiments.AdaptiveMetrics, name string) []int32 {
	t.Helper()
	for _, e := range a.Estimates {
		if e.Name == name {
			return e.Values
		}
	}
	t.Fatalf("no estimate %s", name)
	return nil
}

// pointOn finds a point by limiter label and server name.
func pointOn(t *testing.T, res *experiments.Result, label, srv string) *experiments.Point {
	t.Helper()
	for i := range res.Points {
		if res.Points[i].Limiter == label && res.Points[i].ServerName == srv {
			return &res.Points[i]
		}
	}
	t.Fatalf("no limiter %q on server %q", label, srv)
	return nil
}

// bestStatic is the admission setting the answer rule recommends among
// the config's static limits ("static"): its point.
func bestStatic(t *testing.T, res *experiments.Result) *experiments.Point {
	t.Helper()
	a := decide.Decide(res)
	for _, c := range a.Choices {
		if c.Limiter == "static" && c.Setting >= 0 && c.Feasible > 0 {
			return &res.Points[c.Point]
		}
	}
	t.Fatal("no recommended static limit")
	return nil
}

func near(got, want float64) bool { return math.Abs(got-want) < 0.05+1e-9*math.Abs(want) }

func checkNumbers(t *testing.T, preset string, got, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok || !near(g, w) {
			t.Errorf("%s: %s = %.1f, the description says %.1f", preset, k, g, w)
		}
	}
	if testing.Verbose() {
		for k, g := range got {
			t.Logf("%s: %s = %.1f", preset, k, g)
		}
	}
}

// vegas-lucky-rtt: the limit's drop after one sample at half the steady
// RTT, and the samples until it is back.
func TestVegasLuckyRTTPreset(t *testing.T) {
	res := runPreset(t, "vegas-lucky-rtt")
	w := res.Config.SeriesWindow()
	steady, lucky := pointOn(t, res, "vegas", "steady").Metrics.Adaptive, pointOn(t, res, "vegas", "lucky").Metrics.Adaptive
	k0 := int(10237 / w)
	before := lucky.Limit[k0-1]
	low, samples, back := before, 0, -1
	for k := k0; k < len(lucky.Limit); k++ {
		low = min(low, lucky.Limit[k])
		samples += int(lucky.Samples[k])
		if lucky.Limit[k] >= before && low < before {
			back = k
			break
		}
	}
	noload := estimate(t, lucky, "rtt_noload_ms")
	got := map[string]float64{
		"limit_before":         float64(before),
		"limit_low":            float64(low),
		"drop_pct":             100 * float64(before-low) / float64(before),
		"samples_to_recover":   float64(samples),
		"recover_ms":           float64(back-k0+1) * w,
		"rtt_noload_lucky_ms":  float64(noload[k0]) / 1000,
		"steady_limit_min":     float64(minOf(steady.Limit[1:])),
		"lucky_rejected_extra": float64(pointOn(t, res, "vegas", "lucky").Metrics.Rejected - pointOn(t, res, "vegas", "steady").Metrics.Rejected),
	}
	checkNumbers(t, "vegas-lucky-rtt", got, map[string]float64{"limit_before": 20, "limit_low": 12, "drop_pct": 40, "samples_to_recover": 367, "recover_ms": 300, "rtt_noload_lucky_ms": 5, "steady_limit_min": 20, "lucky_rejected_extra": 122})
}

func minOf(xs []int32) int32 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

// gradient2-modest-overload: the limit's slope under 1.2× capacity and the
// p99 it costs against the best static limit.
func TestGradient2ModestOverloadPreset(t *testing.T) {
	res := runPreset(t, "gradient2-modest-overload")
	w := res.Config.SeriesWindow()
	got := map[string]float64{}
	for _, label := range []string{"gradient2", "gradient2-max-1000"} {
		p := point(t, res, label)
		a := p.Metrics.Adaptive
		at := func(ms float64) float64 { return float64(a.Limit[int(ms/w)-1]) }
		got[label+" slope_per_s 0-10s"] = (at(10000) - float64(a.Limit[0])) / 10
		got[label+" slope_per_s 10-60s"] = (at(60000) - at(10000)) / 50
		got[label+" limit_final"] = float64(a.LimitFinal)
		got[label+" p99_ms"] = float64(p.Metrics.Sojourn.P99)
		got[label+" goodput_rps"] = p.Metrics.GoodputRPS
	}
	b := bestStatic(t, res)
	got["static limit"] = b.Params["limit"]
	got["static p99_ms"] = float64(b.Metrics.Sojourn.P99)
	got["static goodput_rps"] = b.Metrics.GoodputRPS
	checkNumbers(t, "gradient2-modest-overload", got, map[string]float64{"gradient2 slope_per_s 0-10s": 18, "gradient2 slope_per_s 10-60s": 0, "gradient2 limit_final": 200, "gradient2 p99_ms": 200, "gradient2 goodput_rps": 1003.2, "gradient2-max-1000 slope_per_s 0-10s": 98, "gradient2-max-1000 slope_per_s 10-60s": 0, "gradient2-max-1000 limit_final": 1000, "gradient2-max-1000 p99_ms": 1000, "gradient2-max-1000 goodput_rps": 1016.5, "static limit": 20, "static p99_ms": 20, "static goodput_rps": 998.0})
}

// envoy-minrtt-window: the share of requests admitted in the series
// windows inside a minRTT window against those outside.
func TestEnvoyMinRTTWindowPreset(t *testing.T) {
	res := runPreset(t, "envoy-minrtt-window")
	p := point(t, res, "envoy")
	a := p.Metrics.Adaptive
	win := estimate(t, a, "min_rtt_window")
	var in, out [2]float64 // offered, released
	windows := 0
	for k := range a.Limit {
		o, r := float64(experiments.At(p.Series.Offered, k)), float64(experiments.At(p.Series.Released, k))
		if win[k] == 1000 || k > 0 && win[k-1] == 1000 {
			in[0] += o
			in[1] += r
			if k == 0 || win[k-1] != 1000 {
				windows++
			}
		} else {
			out[0] += o
			out[1] += r
		}
	}
	got := map[string]float64{
		"success_in_pct":  100 * in[1] / in[0],
		"success_out_pct": 100 * out[1] / out[0],
		"windows":         float64(windows),
		"limit_mean":      a.LimitMean,
	}
	checkNumbers(t, "envoy-minrtt-window", got, map[string]float64{"success_in_pct": 51.8, "success_out_pct": 99.7, "windows": 6, "limit_mean": 680.0})
}

// capacity-drop: each limiter through the 50% drop (20-40 s) and back.
func TestCapacityDropPreset(t *testing.T) {
	res := runPreset(t, "capacity-drop")
	got := map[string]float64{}
	for _, label := range []string{"aimd", "vegas", "gradient2", "gradient2-windowed", "envoy", "failsafe-go"} {
		p := point(t, res, label)
		a := p.Metrics.Adaptive
		got[label+" goodput_rps"] = p.Metrics.GoodputRPS
		got[label+" p99_ms"] = float64(p.Metrics.Sojourn.P99)
		got[label+" reconverge_ms"] = -1
		if a.ReconvergeMS != nil {
			got[label+" reconverge_ms"] = *a.ReconvergeMS
		}
	}
	b := bestStatic(t, res)
	got["static limit"] = b.Params["limit"]
	got["static goodput_rps"] = b.Metrics.GoodputRPS
	got["static p99_ms"] = float64(b.Metrics.Sojourn.P99)
	checkNumbers(t, "capacity-drop", got, map[string]float64{"aimd goodput_rps": 704.0, "aimd p99_ms": 400, "aimd reconverge_ms": 500, "vegas goodput_rps": 698.3, "vegas p99_ms": 36, "vegas reconverge_ms": -1, "gradient2 goodput_rps": 702.2, "gradient2 p99_ms": 214, "gradient2 reconverge_ms": -1, "gradient2-windowed goodput_rps": 700.8, "gradient2-windowed p99_ms": 68, "gradient2-windowed reconverge_ms": -1, "envoy goodput_rps": 696.4, "envoy p99_ms": 28, "envoy reconverge_ms": -1, "failsafe-go goodput_rps": 701.1, "failsafe-go p99_ms": 71, "failsafe-go reconverge_ms": -1, "static limit": 20, "static goodput_rps": 699.6, "static p99_ms": 40})
}

// latency-knee: the limit each settles at (its mean over the last 15 s)
// against the knee (8).
func TestLatencyKneePreset(t *testing.T) {
	res := runPreset(t, "latency-knee")
	w := res.Config.SeriesWindow()
	got := map[string]float64{}
	for _, label := range []string{"aimd", "vegas", "gradient2", "gradient2-windowed", "envoy", "failsafe-go"} {
		p := point(t, res, label)
		a := p.Metrics.Adaptive
		sum, n := 0.0, 0
		for k := int(15000 / w); k < len(a.Limit); k++ {
			sum += float64(a.Limit[k])
			n++
		}
		got[label+" settles_at"] = sum / float64(n)
		got[label+" goodput_rps"] = p.Metrics.GoodputRPS
		got[label+" p99_ms"] = float64(p.Metrics.Sojourn.P99)
	}
	b := bestStatic(t, res)
	got["static limit"] = b.Params["limit"]
	got["static goodput_rps"] = b.Metrics.GoodputRPS
	checkNumbers(t, "latency-knee", got, map[string]float64{"envoy settles_at": 11.3, "envoy goodput_rps": 627.9, "vegas settles_at": 15.0, "vegas goodput_rps": 587.9, "failsafe-go settles_at": 25.4, "failsafe-go goodput_rps": 473.4, "gradient2-windowed settles_at": 35.3, "gradient2-windowed goodput_rps": 466.7, "gradient2 settles_at": 51.3, "gradient2 goodput_rps": 464.0, "aimd settles_at": 200, "aimd goodput_rps": 463.8, "static limit": 8, "static goodput_rps": 661.1})
}
