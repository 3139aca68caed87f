package experiments_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// TestSeriesWindowAdapts: 100 ms up to 5000 windows, then the narrowest of
// 200, 500, 1000, 2000, ... ms; series_window_ms wins; a flash crowd or a
// series report keeps 100 ms.
func TestSeriesWindowAdapts(t *testing.T) {
	for _, c := range []struct {
		duration float64
		extra    string
		want     float64
	}{
		{5000, "", 100},
		{500_000, "", 100},
		{500_001, "", 200},
		{9_900_000, "", 2000},
		{86_400_000, "", 20000},
		{9_900_000, `, "metrics": {"series_window_ms": 250}`, 250},
		{9_900_000, `, "reports": [{"type": "series", "file": "s.csv", "columns": [{"header": "t", "value": "window_start_ms"}]}]`, 100},
	} {
		cfg, err := document.DecodeConfig([]byte(enginetest.WindowDoc(c.duration, c.extra)))
		if err != nil {
			t.Fatalf("%g %s: %v", c.duration, c.extra, err)
		}
		if got := cfg.SeriesWindow(); got != c.want {
			t.Errorf("%g ms%s: window %g, want %g", c.duration, c.extra, got, c.want)
		}
	}
	crowd := `{"version": 1, "workload": {"duration_ms": 9900000, "parts": [{"type": "flash-crowd", "base_rps": 1, "multiplier": 5, "start_ms": 5000, "duration_ms": 1000, "arrival": "uniform"}]},
  "limiters": [{"type": "token-bucket", "rate_rps": 25, "burst": 5}]%s}`
	cfg, err := document.DecodeConfig([]byte(fmt.Sprintf(crowd, "")))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.SeriesWindow(); got != 100 {
		t.Errorf("flash crowd: window %g, want 100", got)
	}
	for _, c := range []struct{ doc, msg string }{
		{fmt.Sprintf(crowd, `, "metrics": {"series_window_ms": 200}`), "with a flash crowd"},
		{enginetest.WindowDoc(5000, `, "metrics": {"series_window_ms": 0.5}`), "whole number"},
		{enginetest.WindowDoc(5000, `, "metrics": {"series_window_ms": 150.5}`), "whole number"},
	} {
		_, err := document.DecodeConfig([]byte(c.doc))
		var errs field.List
		if !asList(err, &errs) || len(errs) == 0 || errs[0].Path != "metrics.series_window_ms" || !strings.Contains(errs[0].Msg, c.msg) {
			t.Errorf("error %v, want metrics.series_window_ms: %s", err, c.msg)
		}
	}
}

func asList(err error, out *field.List) bool {
	l, ok := err.(field.List)
	if ok {
		*out = l
	}
	return ok
}

// TestMetricsDoNotDependOnTheSeriesWindow: every scalar metric (downstream
// peak on 100 ms windows, rolling maximum, percentiles, Jain) is the same
// whatever the series' width; the series' totals are too.
func TestMetricsDoNotDependOnTheSeriesWindow(t *testing.T) {
	var base []experiments.Point
	for _, w := range []string{"100", "300", "1000", "7000"} {
		cfg, err := document.DecodeConfig([]byte(enginetest.WindowDoc(60_000, `, "metrics": {"series_window_ms": `+w+`}`)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if base == nil {
			base = res.Points
			continue
		}
		for i := range base {
			if !reflect.DeepEqual(res.Points[i].Metrics, base[i].Metrics) {
				t.Fatalf("window %s ms: point %d metrics\n%+v\nwant\n%+v", w, i, res.Points[i].Metrics, base[i].Metrics)
			}
			if enginetest.Sum(res.Points[i].Series.Released) != enginetest.Sum(base[i].Series.Released) || enginetest.Sum(res.Points[i].Series.Offered) != enginetest.Sum(base[i].Series.Offered) {
				t.Fatalf("window %s ms: point %d series totals differ", w, i)
			}
		}
	}
}
