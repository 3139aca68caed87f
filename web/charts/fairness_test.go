package charts

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGroupSharesCountUngroupedClients: the group-share chart adds the
// clients outside any group, so a point's shares add up to 100% (one group
// and two ungrouped clients drew no chart; two groups showed 79% in all).
func TestGroupSharesCountUngroupedClients(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":3000,"parts":[
		{"type":"clients","group":"web","clients":3,"rate_rps":20},
		{"type":"poisson","client":"batch","rate_rps":30},
		{"type":"constant","client":"steady","rate_rps":10}]},
		"limiters":[{"type":"token-bucket","rate_rps":60,"burst":[5,10]}]}`)
	var opt string
	for _, g := range NewView(res, -1).Groups() {
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
