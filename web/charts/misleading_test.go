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
