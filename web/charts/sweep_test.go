package charts

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestChartOptions: every chart of a multi-client sweep has a unique id, a
// title, axis names with units, a legend and tooltips, and its series carry
// data.
func TestChartOptions(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":3,"workload":{"duration_ms":3000,"parts":[
		{"type":"clients","group":"light","clients":3,"rate_rps":10},
		{"type":"clients","group":"heavy","clients":1,"rate_rps":60,"arrival":"poisson"}]},
		"limiters":[{"type":"token-bucket","rate_rps":[40,60],"burst":[1,5,10]},{"type":"per-client-token-bucket","rate_rps":60,"burst":[4,8]}]}`)
	v := NewView(res, -1)
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
	res := runDoc(t, `{"version":1,"workload":{"duration_ms":2000,"parts":[
		{"type":"clients","group":"a","clients":2,"rate_rps":30}]},
		"limiters":[{"type":"token-bucket","rate_rps":40,"burst":5},{"type":"sliding-window-log","limit":40,"window_ms":1000}]}`)
	v := NewView(res, -1)
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

// TestTwoParameterSweepCharts: a limiter that sweeps two parameters draws
// one line per outer value in its own color (they all shared the
// limiter's), a legend that wraps past two rows gets room below the x axis
// name instead of covering it, and the time-series section names the outer
// value of its point.
func TestTwoParameterSweepCharts(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[
		{"type":"poisson","rate_rps":90}]},
		"limiters":[{"type":"token-bucket","rate_rps":[50,100,150],"burst":[1,5,10]}]}`)
	v := NewView(res, -1)
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

// TestSweepChartsSplitByUnit: limiters whose swept parameters have
// different units get one chart each per unit (an x axis named
// "rate_rps / window_ms / limit (req/s, ms, requests)" squeezed a limit of
// 1..10 against windows of 100..1000 ms), each limiter keeping its color.
func TestSweepChartsSplitByUnit(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[
		{"type":"poisson","rate_rps":90}]},
		"limiters":[{"type":"token-bucket","rate_rps":[50,100],"burst":10},
		{"type":"fixed-window","limit":10,"window_ms":[100,400]},
		{"type":"admission","limit":[1,5]},
		{"type":"leaky-bucket","rate_rps":100,"queue":[2,4]},
		{"type":"none"}]}`)
	v := NewView(res, -1)
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
				for li, l := range res.Config.Limiters {
					if strings.HasPrefix(s.Name, string(l.Type)) && s.LineStyle.Color != limiterColor(li) {
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

// TestSweepShadesObjectives: a sweep chart of a measure with an objective
// draws the target as a line and shades the side that meets it: below a
// cap (<=), above a floor (>=).
func TestSweepShadesObjectives(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[{"type":"poisson","rate_rps":90}]},
		"server":{"workers":1,"service_ms":10},
		"limiters":[{"type":"token-bucket","rate_rps":80,"burst":[1,5,20]}],
		"objectives":[{"metric":"sojourn_p99_ms","op":"<=","value":50},{"metric":"goodput_rps","op":">=","value":70}]}`)
	v := NewView(res, -1)
	found := map[string]string{}
	for _, g := range v.Groups() {
		for _, c := range g.Charts {
			var o struct {
				Series []struct {
					Name     string
					MarkArea *struct {
						Data [][2]map[string]float64
					}
				}
			}
			if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
				t.Fatal(err)
			}
			for _, s := range o.Series {
				if s.MarkArea == nil {
					continue
				}
				a := s.MarkArea.Data[0]
				found[c.ID] = fmt.Sprintf("%s %v", s.Name, a)
			}
		}
	}
	if got := found["chart-sojourn"]; got != "meets sojourn_p99_ms <= 50 [map[] map[yAxis:50]]" {
		t.Errorf("sojourn chart: %q", got)
	}
	if got := found["chart-goodput"]; got != "meets goodput_rps >= 70 [map[yAxis:70] map[]]" {
		t.Errorf("goodput chart: %q", got)
	}
	if len(found) != 2 {
		t.Errorf("shaded charts: %v", found)
	}
}
