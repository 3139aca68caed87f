package charts

import (
	"encoding/json"
	"strings"
	"testing"
)

// chartSeries finds a chart by id among a view's sections and decodes its
// series.
func chartSeries(t *testing.T, v *View, id string) []struct {
	Name      string
	Data      []struct{ Value []float64 }
	LineStyle *struct{ Type string }
} {
	t.Helper()
	for _, g := range v.Groups() {
		for _, c := range g.Charts {
			if c.ID != id {
				continue
			}
			var o struct {
				Series []struct {
					Name      string
					Data      []struct{ Value []float64 }
					LineStyle *struct{ Type string }
				}
			}
			if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
				t.Fatal(err)
			}
			return o.Series
		}
	}
	t.Fatalf("no chart %s", id)
	return nil
}

// TestRollingBoundIsTheArrivalCurve: a token bucket of 100 req/s and burst
// b releases at most 100 + b in any 1000 ms, not rate × window = 100.
func TestRollingBoundIsTheArrivalCurve(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":3000,"parts":[{"type":"constant","rate_rps":150}]},
		"limiters":[{"type":"token-bucket","rate_rps":100,"burst":[10,20]}]}`)
	for _, s := range chartSeries(t, NewView(res, -1), "chart-rolling") {
		if !strings.Contains(s.Name, "bound") {
			continue
		}
		if len(s.Data) != 2 || s.Data[0].Value[1] != 110 || s.Data[1].Value[1] != 120 {
			t.Fatalf("bound %+v, want 110 and 120", s.Data)
		}
		return
	}
	t.Fatal("no bound line")
}

// TestNoneSweepsNothing: the results table's swept cell of a limiter
// without parameters is empty.
func TestNoneSweepsNothing(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},
		"limiters":[{"type":"token-bucket","rate_rps":40,"burst":[2,4]},{"type":"none"}]}`)
	tb := newTable(NewView(res, -1), "r")
	if got := tb.Rows[2].Cells[1]; got != "" {
		t.Fatalf("none's swept cell %q, want empty", got)
	}
	if got := tb.Rows[0].Cells[1]; got != "burst = 2" {
		t.Fatalf("token bucket's swept cell %q", got)
	}
}

// TestLegendIconsShowTheLineType: the legend of a chart of lines has items
// wide and low enough that echarts' line icon (the series' own line type,
// its symbol in the middle at 0.8 × the height) shows the dashes; a chart
// with scatters keeps echarts' sizes.
func TestLegendIconsShowTheLineType(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},
		"limiters":[{"type":"token-bucket","rate_rps":40,"burst":[2,4]}]}`)
	seen := 0
	for _, g := range NewView(res, -1).Groups() {
		for _, c := range g.Charts {
			var o struct {
				Legend struct{ ItemWidth, ItemHeight int }
				Series []struct {
					Type      string
					LineStyle struct{ Type string }
				}
			}
			if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
				t.Fatal(err)
			}
			switch c.ID {
			case "chart-reject-late":
				seen++
				if o.Legend.ItemWidth != 30 || o.Legend.ItemHeight != 4 || o.Series[0].LineStyle.Type != "solid" || o.Series[1].LineStyle.Type != "dashed" {
					t.Errorf("%s: legend %+v, series %+v", c.ID, o.Legend, o.Series)
				}
			case "chart-pareto":
				seen++
				if o.Legend.ItemWidth != 0 {
					t.Errorf("%s: a chart with scatters sized its legend %+v", c.ID, o.Legend)
				}
			}
		}
	}
	if seen != 2 {
		t.Fatalf("saw %d of the two charts", seen)
	}
}
