package charts

import (
	"encoding/json"
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
	res := runPreset(t, "token-vs-leaky")
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
