package web

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
)

// TestTwoParameterSweepCharts: a limiter that sweeps two parameters draws
// one line per outer value in its own color (they all shared the
// limiter's), a legend that wraps past two rows gets room below the x axis
// name instead of covering it, and the time-series section names the outer
// value of its point.
func TestTwoParameterSweepCharts(t *testing.T) {
	cfg, err := experiments.DecodeConfig([]byte(`{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[
		{"type":"poisson","rate_rps":90}]},
		"limiters":[{"type":"token-bucket","rate_rps":[50,100,150],"burst":[1,5,10]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	v := NewResultView(res, -1)
	type option struct {
		Legend struct{ Type string }
		Grid   []struct{ Bottom string }
		Series []struct {
			Name      string
			LineStyle struct{ Color string }
		}
	}
	charts := map[string]option{}
	var timeline string
	for _, g := range v.Groups() {
		if g.ID == "timeline" {
			timeline = g.Title
		}
		for _, c := range g.Charts {
			var o option
			if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
				t.Fatalf("%s: %v", c.ID, err)
			}
			charts[c.ID] = o
		}
	}
	colors := map[string]string{}
	for _, s := range charts["chart-goodput"].Series {
		if strings.HasPrefix(s.Name, "token-bucket") {
			if other, ok := colors[s.LineStyle.Color]; ok {
				t.Errorf("%q and %q share the color %s", other, s.Name, s.LineStyle.Color)
			}
			colors[s.LineStyle.Color] = s.Name
		}
	}
	if len(colors) != 3 {
		t.Errorf("goodput chart: %d colored token-bucket lines, want 3", len(colors))
	}
	o := charts["chart-reject-late"]
	if len(o.Series) != 6 || len(o.Grid) == 0 {
		t.Fatalf("reject chart: %d series, %d grids", len(o.Series), len(o.Grid))
	}
	if b, _ := strconv.Atoi(o.Grid[0].Bottom); b <= 95 && o.Legend.Type != "scroll" {
		t.Errorf("six long legend entries with grid bottom %s and a %q legend: the legend covers the x axis name", o.Grid[0].Bottom, o.Legend.Type)
	}
	if !strings.Contains(timeline, "rate_rps=") {
		t.Errorf("time-series section %q does not say which rate its point has", timeline)
	}
}

func TestLegendRows(t *testing.T) {
	if r := legendRows([]string{"token-bucket", "leaky-bucket", "offered"}); r != 1 {
		t.Errorf("three short names: %d rows", r)
	}
	long := strings.Repeat("x", 30)
	if r := legendRows([]string{long, long, long, long, long, long}); r != 3 {
		t.Errorf("six 30-character names: %d rows, want 3", r)
	}
}

// TestChosenPointOfTwoParameterSweep: the time-series charts show the
// point chosen in the results table, not the first point of its limiter
// with the same swept value (rate_rps=50 burst=5 was shown for
// rate_rps=150 burst=5, under a title naming the chosen point).
func TestChosenPointOfTwoParameterSweep(t *testing.T) {
	cfg, err := experiments.DecodeConfig([]byte(`{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[
		{"type":"poisson","rate_rps":90}]},
		"limiters":[{"type":"token-bucket","rate_rps":[50,150],"burst":[1,5]},{"type":"leaky-bucket","rate_rps":100,"queue":[1,5]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Points {
		p := &res.Points[i]
		v := NewResultView(res, i)
		if got := v.Step[p.LimiterIndex]; got != i {
			q := &res.Points[got]
			t.Errorf("chose %s, the charts show %s", v.pointName(p), v.pointName(q))
		}
	}
}

// TestRecoveryChartsUseLimiterColors: the recovery section colors each
// limiter as every other chart does (it used echarts' default palette, so
// red was token-bucket there and sliding-window-log elsewhere).
func TestRecoveryChartsUseLimiterColors(t *testing.T) {
	v := presetView(t, "flash-crowd")
	for _, g := range v.Groups() {
		if g.ID != "recovery" {
			continue
		}
		for _, c := range g.Charts {
			var o struct {
				Series []struct {
					Name      string
					LineStyle struct{ Color string }
					Data      []struct {
						ItemStyle struct{ Color string }
					}
				}
			}
			if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
				t.Fatal(err)
			}
			for i, pi := range v.Step {
				want := v.pointColor(&v.Res.Points[pi])
				got := ""
				if c.ID == "chart-recovery" && len(o.Series) == 1 && i < len(o.Series[0].Data) {
					got = o.Series[0].Data[i].ItemStyle.Color
					if o.Series[0].Data[i].ItemStyle.Color == "" && v.Res.Points[pi].Metrics.Recovery.RecoveryMS == nil {
						continue // no bar
					}
				} else if i < len(o.Series) {
					got = o.Series[i].LineStyle.Color
				}
				if got != want {
					t.Errorf("%s: %s drawn in %q, its color elsewhere is %s", c.ID, v.pointName(&v.Res.Points[pi]), got, want)
				}
			}
		}
	}
}

// TestCategoricalGoodputTitle: a run of limiters at single settings sweeps
// nothing, so its goodput chart is not titled "against the swept parameter".
func TestCategoricalGoodputTitle(t *testing.T) {
	v := presetView(t, "boundary")
	if !v.Categorical() {
		t.Skip("boundary preset sweeps a parameter")
	}
	for _, g := range v.Groups() {
		for _, c := range g.Charts {
			if c.ID == "chart-goodput" && (strings.Contains(c.Option, "swept parameter") || strings.Contains(c.Title, "swept parameter")) {
				t.Errorf("categorical goodput chart titled %q", c.Title)
			}
		}
	}
}

// TestResultsTableNamesOuterParameter: in a sweep of two parameters each
// results row names the limiter's other value; rows such as
// "sliding-window-log | window_ms = 100" appeared twice with different
// numbers.
func TestResultsTableNamesOuterParameter(t *testing.T) {
	cfg, err := experiments.DecodeConfig([]byte(`{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[
		{"type":"poisson","rate_rps":90}]},
		"limiters":[{"type":"sliding-window-log","limit":[5,10],"window_ms":[100,200]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, row := range buildResultsTable(NewResultView(res, -1), "x").Rows {
		key := row.Cells[0] + " | " + row.Cells[1]
		if seen[key] {
			t.Errorf("two rows read %q", key)
		}
		seen[key] = true
	}
}

// TestRecoveryChartSaysNoneRecovered: when no limiter recovers before the
// run ends the recovery-time chart has no bars, and its subtitle says why
// (it was an empty 0..1 axis).
func TestRecoveryChartSaysNoneRecovered(t *testing.T) {
	cfg, err := experiments.DecodeConfig([]byte(`{"version":1,"seed":1,"workload":{"duration_ms":8000,"parts":[
		{"type":"clients","group":"web","clients":5,"rate_rps":15,"arrival":"poisson"},
		{"type":"flash-crowd","group":"crowd","clients":3,"base_rps":10,"multiplier":4,"start_ms":3000,"duration_ms":3000,"ramp_ms":500}]},
		"limiters":[{"type":"token-bucket","rate_rps":100,"burst":[200]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	v := NewResultView(res, -1)
	for _, pi := range v.Step {
		if r := res.Points[pi].Metrics.Recovery; r == nil || r.RecoveryMS != nil {
			t.Skipf("the point recovered (%+v): the case needs a run that does not", r)
		}
	}
	for _, g := range v.Groups() {
		for _, c := range g.Charts {
			if c.ID == "chart-recovery" && !strings.Contains(c.Option, "no limiter recovered") {
				t.Errorf("empty recovery chart without a word why: %s", c.Option[:min(300, len(c.Option))])
			}
		}
	}
}

// TestGroupSharesCountUngroupedClients: the group-share chart adds the
// clients outside any group, so a point's shares add up to 100% (one group
// and two ungrouped clients drew no chart; two groups showed 79% in all).
func TestGroupSharesCountUngroupedClients(t *testing.T) {
	cfg, err := experiments.DecodeConfig([]byte(`{"version":1,"seed":1,"workload":{"duration_ms":3000,"parts":[
		{"type":"clients","group":"web","clients":3,"rate_rps":20},
		{"type":"poisson","client":"batch","rate_rps":30},
		{"type":"constant","client":"steady","rate_rps":10}]},
		"limiters":[{"type":"token-bucket","rate_rps":60,"burst":[5,10]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var opt string
	for _, g := range NewResultView(res, -1).Groups() {
		for _, c := range g.Charts {
			if c.ID == "chart-shares" {
				opt = c.Option
			}
		}
	}
	if opt == "" {
		t.Fatal("no group-share chart for one group beside ungrouped clients")
	}
	var o struct {
		Series []struct {
			Name string
			Data []struct{ Value []float64 }
		}
	}
	if err := json.Unmarshal([]byte(opt), &o); err != nil {
		t.Fatal(err)
	}
	sum := map[float64]float64{}
	for _, s := range o.Series {
		for _, d := range s.Data {
			sum[d.Value[0]] += d.Value[1]
		}
	}
	if len(o.Series) != 2 || !strings.HasSuffix(o.Series[1].Name, "ungrouped") {
		t.Errorf("series %+v, want web and ungrouped", o.Series)
	}
	for x, s := range sum {
		if s < 99.9 || s > 100.1 {
			t.Errorf("burst %v: shares add up to %.2f%%", x, s)
		}
	}
}

// TestHeatmapRedIsBad: the goodput heatmap is red where goodput is low and
// the sojourn heatmap red where sojourn is high (one default scale made the
// best goodput the darkest red).
func TestHeatmapRedIsBad(t *testing.T) {
	v := presetView(t, "delay-budget")
	found := 0
	if g := heatmapGroup(v); g != nil {
		for _, c := range g.Charts {
			if !strings.HasPrefix(c.ID, "chart-heat-") {
				continue
			}
			var o struct {
				VisualMap struct {
					InRange struct{ Color []string }
				}
			}
			if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
				t.Fatal(err)
			}
			cs := o.VisualMap.InRange.Color
			if len(cs) < 2 {
				t.Errorf("%s: no color scale", c.ID)
				continue
			}
			found++
			low, high := cs[0], cs[len(cs)-1]
			if strings.HasSuffix(c.ID, "-goodput") && low != "#f87171" {
				t.Errorf("%s: low goodput is %s, not the bad red", c.ID, low)
			}
			if strings.HasSuffix(c.ID, "-sojourn") && high != "#f87171" {
				t.Errorf("%s: high sojourn is %s, not the bad red", c.ID, high)
			}
		}
	}
	if found < 2 {
		t.Errorf("%d heatmaps in the delay-budget preset", found)
	}
}

// TestSweepChartsSplitByUnit: limiters whose swept parameters have
// different units get one chart each per unit (an x axis named
// "rate_rps / window_ms / limit (req/s, ms, requests)" squeezed a limit of
// 1..10 against windows of 100..1000 ms), each limiter keeping its color.
func TestSweepChartsSplitByUnit(t *testing.T) {
	cfg, err := experiments.DecodeConfig([]byte(`{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[
		{"type":"poisson","rate_rps":90}]},
		"limiters":[{"type":"token-bucket","rate_rps":[50,100],"burst":10},
		{"type":"fixed-window","limit":10,"window_ms":[100,400]},
		{"type":"admission","limit":[1,5]},
		{"type":"leaky-bucket","rate_rps":100,"queue":[2,4]},
		{"type":"none"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	v := NewResultView(res, -1)
	byID := map[string]string{}
	for _, g := range v.Groups() {
		for _, c := range g.Charts {
			byID[c.ID] = c.Option
		}
	}
	for _, base := range []string{"chart-goodput", "chart-reject-late", "chart-waits", "chart-sojourn", "chart-peak", "chart-rolling"} {
		units := 0
		for _, id := range []string{base, base + "-2", base + "-3"} {
			opt, ok := byID[id]
			if !ok {
				t.Errorf("no chart %s", id)
				continue
			}
			var o struct {
				XAxis  []struct{ Name string }
				Series []struct {
					Name      string
					LineStyle struct{ Color string }
				}
			}
			if err := json.Unmarshal([]byte(opt), &o); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(o.XAxis[0].Name, ","); n > 0 {
				t.Errorf("%s: x axis %q mixes units", id, o.XAxis[0].Name)
			}
			units++
			for _, s := range o.Series {
				for li, l := range cfg.Limiters {
					if strings.HasPrefix(s.Name, l.Type) && s.LineStyle.Color != limiterColor(li) {
						t.Errorf("%s: %s in %s, its color is %s", id, s.Name, s.LineStyle.Color, limiterColor(li))
					}
				}
			}
		}
		if units != 3 {
			t.Errorf("%s: %d charts, want one per unit (req/s, ms, requests)", base, units)
		}
		if _, ok := byID[base+"-4"]; ok {
			t.Errorf("%s: a chart of its own for the limiter at one setting", base)
		}
		// The limiter at one setting is flat across the rate range, not a
		// point at x = 0 that stretches the axis.
		var o struct {
			XAxis  []struct{ Name string }
			Series []struct {
				Name string
				Data []struct{ Value []float64 }
			}
		}
		if err := json.Unmarshal([]byte(byID[base]), &o); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(o.XAxis[0].Name, "no parameter") {
			t.Errorf("%s: x axis %q", base, o.XAxis[0].Name)
		}
		for _, s := range o.Series {
			if strings.HasPrefix(s.Name, "none") {
				if len(s.Data) != 2 || s.Data[0].Value[0] != 50 || s.Data[1].Value[0] != 100 {
					t.Errorf("%s: %s drawn at %+v, want flat from 50 to 100", base, s.Name, s.Data)
				}
			}
		}
	}
}

// TestTandemChartLimiterColor: the tandem chart draws a chain in its
// limiter's color, as every other chart does.
func TestTandemChartLimiterColor(t *testing.T) {
	cfg, err := experiments.DecodeConfig([]byte(`{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":50}]},
		"limiters":[{"type":"token-bucket","rate_rps":60,"burst":[2,4]},
		{"type":"chain","name":"tandem","stages":[{"type":"token-bucket","rate_rps":60,"burst":[2,4]},{"type":"server","workers":1,"service_ms":5}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	g := tandemGroup(NewResultView(res, -1))
	if g == nil || len(g.Charts) == 0 {
		t.Fatal("no tandem chart")
	}
	var o struct {
		Series []struct {
			Name      string
			LineStyle struct{ Color string }
		}
	}
	if err := json.Unmarshal([]byte(g.Charts[0].Option), &o); err != nil {
		t.Fatal(err)
	}
	for _, s := range o.Series {
		if strings.HasPrefix(s.Name, "tandem") && s.LineStyle.Color != limiterColor(1) {
			t.Errorf("%s in %s, the chain's color is %s", s.Name, s.LineStyle.Color, limiterColor(1))
		}
	}
}
