package charts

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
)

// TestBoundsViewTokenVsLeaky: the example on the run page, and
// every arrival-curve option is valid JSON.
func TestBoundsViewTokenVsLeaky(t *testing.T) {
	res := runPreset(t, "token-vs-leaky")
	bv := newBounds(NewView(res, -1), "x")
	found := false
	for _, r := range bv.Rows {
		if r.Limiter == "token-bucket" && strings.Contains(r.Swept, "burst=20") {
			found = true
			if r.Sojourn != "200.0" || r.SojournBound != "210.0" || r.SojournRatio != "0.9524" || r.BacklogBound != "21.0" {
				t.Errorf("token bucket burst 20 row: %+v", r)
			}
		}
	}
	if !found {
		t.Fatal("no token-bucket burst=20 row")
	}
	for _, g := range bv.Groups {
		for _, c := range g.Charts {
			var o map[string]any
			if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
				t.Errorf("%s: %v", c.ID, err)
			}
		}
	}
	if len(bv.Groups) == 0 || bv.Groups[0].ID != "arrival-curves" || len(bv.Groups[0].Charts) != 2 {
		t.Errorf("want the arrival curves of both limiters at the chosen step")
	}
}

// TestArrivalCurvesSkippedAreExplained: above MaxCurveArrivals the engine
// keeps no curves, and the page says so instead of dropping the section.
func TestArrivalCurvesSkippedAreExplained(t *testing.T) {
	res := runPresetAfresh(t, "token-vs-leaky")
	if g := arrivalCurveGroup(NewView(res, -1)); g == nil || len(g.Charts) == 0 {
		t.Fatalf("a small run has arrival-curve charts: %+v", g)
	}
	res.ArrivalCurves = nil
	res.Arrivals = experiments.MaxCurveArrivals + 1
	g := arrivalCurveGroup(NewView(res, -1))
	if g == nil || len(g.Charts) != 0 || !strings.Contains(g.Intro, "Not computed for this run") {
		t.Fatalf("skipped curves: %+v, want an explanation and no charts", g)
	}
}

// TestTandemChartLimiterColor: the tandem chart draws a chain in its
// limiter's color, as every other chart does.
func TestTandemChartLimiterColor(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":50}]},
		"limiters":[{"type":"token-bucket","rate_rps":60,"burst":[2,4]},
		{"type":"chain","name":"tandem","stages":[{"type":"token-bucket","rate_rps":60,"burst":[2,4]},{"type":"server","workers":1,"service_ms":5}]}]}`)
	g := tandemGroup(NewView(res, -1))
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

// heatOption is the part of a heatmap's option these tests read.
type heatOption struct {
	Title     struct{ Subtext string }
	VisualMap struct {
		Type      string
		Dimension int
		Pieces    []struct {
			Value float64
			Color string
		}
		InRange struct{ Color []string }
	}
	Series []struct {
		Data []struct {
			Value []any
			Label *struct{ Show bool }
		}
		Label struct{ Formatter string }
	}
}

// TestHeatmapScaleWithoutObjective: without an objective the goodput
// heatmap is orange (colour-blind safe, not red) where goodput is low and
// the sojourn heatmap orange where sojourn is high (one default scale made
// the best goodput the darkest red).
func TestHeatmapScaleWithoutObjective(t *testing.T) {
	v := presetView(t, "delay-budget")
	found := 0
	if g := heatmapGroup(v); g != nil {
		for _, c := range g.Charts {
			if !strings.HasPrefix(c.ID, "chart-heat-") {
				continue
			}
			var o heatOption
			if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
				t.Fatal(err)
			}
			cs := o.VisualMap.InRange.Color
			if len(cs) < 2 || o.VisualMap.Type == "piecewise" {
				t.Errorf("%s: no color scale", c.ID)
				continue
			}
			found++
			low, high := cs[0], cs[len(cs)-1]
			if strings.HasSuffix(c.ID, "-goodput") && low != "#e66101" {
				t.Errorf("%s: low goodput is %s, not the bad orange", c.ID, low)
			}
			if strings.HasSuffix(c.ID, "-sojourn") && high != "#e66101" {
				t.Errorf("%s: high sojourn is %s, not the bad orange", c.ID, high)
			}
			for _, s := range slices.Concat(cs) {
				if s == "#f87171" || s == "#86efac" {
					t.Errorf("%s: red/green scale %v", c.ID, cs)
				}
			}
		}
	}
	if found < 2 {
		t.Errorf("%d heatmaps in the delay-budget preset", found)
	}
}

// TestHeatmapByObjective: with an objective on a heatmap's measure, each
// cell is coloured by whether it meets the objective and how far from the
// target it is: its class agrees with decide's verdict at the point, blue
// pieces meet, orange ones miss; the measure without an objective keeps
// its scale. Labels print the value at its results.csv precision.
func TestHeatmapByObjective(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":90}]},
		"server":{"workers":1,"service_ms":10},
		"limiters":[{"type":"token-bucket","rate_rps":[60,80,100],"burst":[1,5,20,40]}],
		"objectives":[{"metric":"sojourn_p99_ms","op":"<=","value":30}]}`)
	v := NewView(res, -1)
	g := heatmapGroup(v)
	if g == nil {
		t.Fatal("no heatmaps")
	}
	pass, fail := 0, 0
	for _, c := range g.Charts {
		var o heatOption
		if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(c.ID, "-goodput") {
			if o.VisualMap.Type == "piecewise" {
				t.Errorf("goodput has no objective but is coloured by one")
			}
			continue
		}
		if o.VisualMap.Type != "piecewise" || o.VisualMap.Dimension != 3 || !strings.Contains(o.Title.Subtext, "sojourn_p99_ms <= 30") {
			t.Fatalf("sojourn heatmap not coloured by its objective: %+v", o.VisualMap)
		}
		colors := map[float64]string{}
		for _, p := range o.VisualMap.Pieces {
			colors[p.Value] = p.Color
		}
		for i, d := range o.Series[0].Data {
			p := &res.Points[i]
			class := d.Value[3].(float64)
			meets := p.Metrics.Sojourn.P99 <= 30
			if meets != (class > 0) {
				t.Errorf("point %d: p99 %v, class %v", i, p.Metrics.Sojourn.P99, class)
			}
			if meets {
				pass++
			} else {
				fail++
			}
			if c := colors[class]; class > 0 && !slices.Contains([]string{"#2166ac", "#67a9cf", "#d1e5f0"}, c) || class < 0 && !slices.Contains([]string{"#e66101", "#fdb863", "#fee0b6"}, c) {
				t.Errorf("class %v colour %s", class, c)
			}
			if got, want := d.Value[2], metricText("sojourn_p99_ms", float64(p.Metrics.Sojourn.P99)); strconv.FormatFloat(got.(float64), 'f', 1, 64) != want {
				t.Errorf("point %d: value %v, want %s", i, got, want)
			}
		}
	}
	if pass == 0 || fail == 0 {
		t.Errorf("the test sweep should both meet and miss: %d pass, %d fail", pass, fail)
	}
}

// TestHeatmapLabelsThinned: a heatmap of 100 columns labels every k-th
// column so that k cells hold the widest label; every value has at most
// its precision's decimals (no 42.93333333333333).
func TestHeatmapLabelsThinned(t *testing.T) {
	var bursts []string
	for b := 1; b <= 100; b++ {
		bursts = append(bursts, strconv.Itoa(b))
	}
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[{"type":"poisson","rate_rps":90}]},
		"server":{"workers":1,"service_ms":10},
		"limiters":[{"type":"token-bucket","rate_rps":[70,85],"burst":[`+strings.Join(bursts, ",")+`]}]}`)
	g := heatmapGroup(NewView(res, -1))
	if g == nil || len(g.Charts) == 0 {
		t.Fatal("no heatmaps")
	}
	for _, c := range g.Charts {
		var o heatOption
		if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
			t.Fatal(err)
		}
		widest, shown := 0, map[int]bool{}
		for _, d := range o.Series[0].Data {
			text := fmt.Sprint(d.Value[2])
			if i := strings.IndexByte(text, '.'); i >= 0 && len(text)-i-1 > 1 {
				t.Errorf("%s: value %s has more than one decimal", c.ID, text)
			}
			widest = max(widest, len(text))
			if d.Label == nil || d.Label.Show {
				shown[int(d.Value[0].(float64))] = true
			}
		}
		if len(shown) == 0 || len(shown) == 100 {
			t.Errorf("%s: %d of 100 columns labelled", c.ID, len(shown))
		}
		cols := slices.Sorted(maps.Keys(shown))
		cell := float64(heatGridWidthPx) / 100
		for i := 1; i < len(cols); i++ {
			if gap := float64(cols[i]-cols[i-1]) * cell; gap < float64(widest*heatCharPx) {
				t.Errorf("%s: labels %d and %d are %.1f px apart, the widest needs %d", c.ID, cols[i-1], cols[i], gap, widest*heatCharPx)
			}
		}
		if !strings.Contains(o.Title.Subtext, "labels: every") || o.Series[0].Label.Formatter != "{@[2]}" {
			t.Errorf("%s: %q", c.ID, o.Title.Subtext)
		}
	}
}
