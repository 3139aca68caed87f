package charts

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRecoverySectionOnFlashCrowdRunsOnly(t *testing.T) {
	var rec *Group
	for _, g := range presetView(t, "flash-crowd").Groups() {
		if g.ID == "recovery" {
			rec = g
		}
	}
	if rec == nil {
		t.Fatal("flash-crowd run page has no recovery section")
	}
	if len(rec.Charts) != 3 {
		t.Fatalf("recovery section has %d charts, want 3", len(rec.Charts))
	}
	// The bar chart carries the measured recovery times (flash-crowd
	// preset: token bucket 9400 ms, per-client bucket 1500 ms).
	for _, want := range []string{"9400", "1500", "token-bucket"} {
		if !strings.Contains(rec.Charts[0].Option, want) {
			t.Errorf("recovery chart option lacks %q", want)
		}
	}
	for _, g := range presetView(t, "boundary").Groups() {
		if g.ID == "recovery" {
			t.Error("boundary run (no flash crowd) has a recovery section")
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
					t.Errorf("%s: %s drawn in %q, its color elsewhere is %s", c.ID, v.pointLabel(&v.Res.Points[pi]), got, want)
				}
			}
		}
	}
}

// TestRecoveryChartSaysNoneRecovered: when no limiter recovers before the
// run ends the recovery-time chart has no bars, and its subtitle says why
// (it was an empty 0..1 axis).
func TestRecoveryChartSaysNoneRecovered(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":8000,"parts":[
		{"type":"clients","group":"web","clients":5,"rate_rps":15,"arrival":"poisson"},
		{"type":"flash-crowd","group":"crowd","clients":3,"base_rps":10,"multiplier":4,"start_ms":3000,"duration_ms":3000,"ramp_ms":500}]},
		"limiters":[{"type":"token-bucket","rate_rps":100,"burst":[200]}]}`)
	v := NewView(res, -1)
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
