package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
)

// TestChartOptions: every chart of a multi-client sweep has a unique id, a
// title, axis names with units, a legend and tooltips, and its series carry
// data.
func TestChartOptions(t *testing.T) {
	cfg, err := experiments.DecodeConfig([]byte(`{"version":1,"seed":3,"workload":{"duration_ms":3000,"parts":[
		{"type":"clients","group":"light","clients":3,"rate_rps":10},
		{"type":"clients","group":"heavy","clients":1,"rate_rps":60,"arrival":"poisson"}]},
		"limiters":[{"type":"token-bucket","rate_rps":[40,60],"burst":[1,5,10]},{"type":"per-client-token-bucket","rate_rps":60,"burst":[4,8]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	v := NewResultView(res, -1)
	if len(v.Lines) != 3 || !strings.Contains(v.Lines[0].Name, "rate_rps=40") {
		t.Errorf("lines %d (%v): a limiter sweeping two parameters needs one line per outer value", len(v.Lines), v.Lines[0].Name)
	}
	ids := map[string]bool{}
	for _, g := range v.Groups() {
		for _, c := range g.Charts {
			if ids[c.ID] {
				t.Errorf("chart id %s repeated", c.ID)
			}
			ids[c.ID] = true
			var o struct {
				Title   struct{ Text string }
				Legend  struct{ Show bool }
				Tooltip struct{ Show bool }
				XAxis   []struct{ Name string }
				YAxis   []struct{ Name string }
				Series  []struct {
					Name string
					Data []json.RawMessage
				}
			}
			if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
				t.Fatalf("%s: %v", c.ID, err)
			}
			if o.Title.Text == "" || !o.Legend.Show || !o.Tooltip.Show || len(o.XAxis) == 0 || len(o.YAxis) == 0 {
				t.Errorf("%s: title %q legend %v tooltip %v", c.ID, o.Title.Text, o.Legend.Show, o.Tooltip.Show)
				continue
			}
			if o.XAxis[0].Name == "" || !strings.Contains(o.YAxis[0].Name, "(") && !strings.Contains(o.YAxis[0].Name, "index") {
				t.Errorf("%s: axis names %q / %q lack units", c.ID, o.XAxis[0].Name, o.YAxis[0].Name)
			}
			if len(o.Series) == 0 {
				t.Errorf("%s: no series", c.ID)
			}
			for _, s := range o.Series {
				if s.Name == "" || len(s.Data) == 0 {
					t.Errorf("%s: series %q has %d values", c.ID, s.Name, len(s.Data))
				}
			}
		}
	}
	for _, id := range []string{"chart-goodput", "chart-reject-late", "chart-waits", "chart-peak", "chart-rolling", "chart-jain", "chart-shares", "chart-clients", "chart-jain-time", "chart-series"} {
		if !ids[id] {
			t.Errorf("no chart %s", id)
		}
	}
}

// TestCategoricalCharts: limiters at one setting each are compared as bars,
// one bar per limiter, with the limiters on the x axis.
func TestCategoricalCharts(t *testing.T) {
	cfg, err := experiments.DecodeConfig([]byte(`{"version":1,"workload":{"duration_ms":2000,"parts":[
		{"type":"clients","group":"a","clients":2,"rate_rps":30}]},
		"limiters":[{"type":"token-bucket","rate_rps":40,"burst":5},{"type":"sliding-window-log","limit":40,"window_ms":1000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	v := NewResultView(res, -1)
	if !v.Categorical() {
		t.Fatal("single-point limiters are not categorical")
	}
	var goodput *Chart
	for _, g := range v.Groups() {
		for i := range g.Charts {
			if g.Charts[i].ID == "chart-goodput" {
				goodput = &g.Charts[i]
			}
		}
	}
	var o struct {
		XAxis []struct {
			Type string
			Data []string
		}
		Series []struct {
			Type string
			Data []struct{ Value any }
		}
	}
	if err := json.Unmarshal([]byte(goodput.Option), &o); err != nil {
		t.Fatal(err)
	}
	if o.XAxis[0].Type != "category" || strings.Join(o.XAxis[0].Data, ",") != "token-bucket,sliding-window-log" {
		t.Errorf("x axis %+v", o.XAxis[0])
	}
	if len(o.Series) != 2 || o.Series[0].Type != "bar" || len(o.Series[0].Data) != 2 || o.Series[1].Type != "line" {
		t.Errorf("series %+v", o.Series)
	}
	if got, want := o.Series[0].Data[0].Value, res.Points[0].Metrics.GoodputRPS; got != want {
		t.Errorf("token-bucket goodput bar %v, want %v", got, want)
	}
}
