package charts

import (
	"encoding/json"
	"strings"
	"testing"

	"strconv"
)

// The chart-data tests: each chart drawn from the point's own data, no
// curve or bound text for a model that has none, axes that fit their data
// with the scale stated, "did not recover" drawn as such (issue 26, item 4).

// dataOptionOf decodes a chart's option, found by id among the run page's
// sections and the bounds section's groups.
func dataOptionOf(t *testing.T, v *View, id string) dataOption {
	t.Helper()
	groups := v.Groups()
	if b := newBounds(v, "r"); b != nil {
		groups = append(groups, b.Groups...)
	}
	for _, g := range groups {
		for _, c := range g.Charts {
			if c.ID == id {
				var o dataOption
				if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
					t.Fatal(err)
				}
				return o
			}
		}
	}
	t.Fatalf("no chart %s", id)
	return dataOption{}
}

type dataOption struct {
	Title struct{ Text, Subtext string }
	YAxis []struct {
		Name     string
		Min, Max *float64
	}
	Series []struct {
		Name string
		Type string
		Data []json.RawMessage
	}
}

// series is the chart's series named name (nil when it has none).
func (o dataOption) series(name string) []json.RawMessage {
	for _, s := range o.Series {
		if s.Name == name {
			return s.Data
		}
	}
	return nil
}

// ys are a series' y values (a bar's value, a point's second coordinate).
func ys(t *testing.T, data []json.RawMessage) []float64 {
	t.Helper()
	var out []float64
	for _, d := range data {
		var it struct{ Value any }
		if err := json.Unmarshal(d, &it); err != nil {
			t.Fatal(err)
		}
		switch v := it.Value.(type) {
		case float64:
			out = append(out, v)
		case []any:
			out = append(out, v[1].(float64))
		}
	}
	return out
}

// TestArrivalCurveOffersThePointsLoad: the arrival-curve chart's offered
// curve is the point's own load's. With no gate every request is released
// as it arrives, so released and offered are the same curve; the chart
// drew the first load's offered curve for every load (slo-load-control:
// released 2,500 against offered 821 under load 500).
func TestArrivalCurveOffersThePointsLoad(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[{"type":"constant","rate_rps":50}]},
		"server":{"workers":8,"service_ms":1,"deadline_ms":200},
		"limiters":[{"type":"none"}],
		"loads":[{"name":"low"},{"name":"high","parts":[{"type":"constant","rate_rps":400}]}]}`)
	checked := 0
	for pi := range res.Points {
		o := dataOptionOf(t, NewView(res, pi), "chart-arrival-"+itoa(pi))
		off, rel := ys(t, o.series("offered")), ys(t, o.series("released into the server"))
		if len(off) == 0 || len(off) != len(rel) {
			t.Fatalf("point %d: offered %v, released %v", pi, off, rel)
		}
		for i := range off {
			if off[i] != rel[i] {
				t.Fatalf("point %d (load %d): offered %v, released %v", pi, res.Points[pi].Load, off, rel)
			}
		}
		checked++
	}
	if checked != 2 {
		t.Fatalf("checked %d points", checked)
	}
}

// TestNoServiceCurveWithoutAMaximum: a service time without a maximum
// (lognormal) gives no service curve: no beta line and no "0 req/s" text
// (heavy-tail showed "beta = 0 req/s × [d − 0 ms]⁺").
func TestNoServiceCurveWithoutAMaximum(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":50}]},
		"server":{"workers":1,"service":"lognormal","service_p50_ms":5,"service_p99_ms":40,"deadline_ms":200},
		"limiters":[{"type":"token-bucket","rate_rps":60,"burst":10}]}`)
	v := NewView(res, 0)
	o := dataOptionOf(t, v, "chart-arrival-0")
	for _, s := range o.Series {
		if strings.HasPrefix(s.Name, "beta") {
			t.Fatalf("a beta line %q for a service without a maximum", s.Name)
		}
	}
	if o.series("alpha: 10 + 60 req/s × d") == nil {
		t.Fatalf("no alpha line: %+v", o.Series)
	}
	row := newBounds(v, "r").Rows[0]
	if strings.Contains(row.Beta, "0 req/s") || strings.Contains(o.Title.Subtext, "no arrival curve") {
		t.Fatalf("beta %q, subtitle %q", row.Beta, o.Title.Subtext)
	}
}

// TestTokenBucketKeepsItsCurveWhenUnbounded: a token bucket faster than
// the server has an arrival curve and no bound; its chart draws alpha
// and says why there is no bound, not "no arrival curve".
func TestTokenBucketKeepsItsCurveWhenUnbounded(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":150}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":200},
		"limiters":[{"type":"token-bucket","rate_rps":300,"burst":20}]}`)
	o := dataOptionOf(t, NewView(res, 0), "chart-arrival-0")
	if strings.Contains(o.Title.Subtext, "no arrival curve") || !strings.Contains(o.Title.Subtext, "r > R") {
		t.Fatalf("subtitle %q", o.Title.Subtext)
	}
	if o.series("alpha: 20 + 300 req/s × d") == nil {
		t.Fatalf("no alpha line: %+v", o.Series)
	}
}

// TestJainAxisFitsTheSpread: Jain's index of close clients varies in its
// third decimal; the axis starts near the data, not at 0, and says so.
func TestJainAxisFitsTheSpread(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":3,"workload":{"duration_ms":3000,"parts":[
		{"type":"poisson","client":"a","rate_rps":100},{"type":"poisson","client":"b","rate_rps":110}]},
		"server":{"workers":4,"service_ms":5,"deadline_ms":200},
		"limiters":[{"type":"token-bucket","rate_rps":[120,160,200,300],"burst":10}]}`)
	o := dataOptionOf(t, NewView(res, -1), "chart-jain")
	y := ys(t, o.series("token-bucket"))
	if len(y) != 4 {
		t.Fatalf("jain %v", o.Series)
	}
	lo := y[0]
	for _, j := range y {
		lo = min(lo, j)
	}
	if o.YAxis[0].Min == nil || *o.YAxis[0].Min <= 0.5 || *o.YAxis[0].Min > lo || *o.YAxis[0].Max > 1 {
		t.Fatalf("axis %+v for values %v", o.YAxis[0], y)
	}
	if !strings.Contains(o.Title.Subtext, "not 0") {
		t.Fatalf("subtitle %q does not state the scale", o.Title.Subtext)
	}
}

// TestRecoveryBarSaysDidNotRecover: a limiter that never recovers gets a
// labelled bar, not an empty slot that reads as 0 ms.
func TestRecoveryBarSaysDidNotRecover(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":8000,"parts":[
		{"type":"clients","group":"regular","clients":4,"rate_rps":20,"arrival":"poisson"},
		{"type":"flash-crowd","group":"crowd","clients":4,"base_rps":10,"multiplier":20,"start_ms":2000,"duration_ms":3000,"ramp_ms":500,"arrival":"poisson"}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":100000},
		"limiters":[{"type":"none"}]}`)
	if r := res.Points[0].Metrics.Recovery; r == nil || r.RecoveryMS != nil {
		t.Fatalf("the test wants a run that does not recover: %+v", r)
	}
	o := dataOptionOf(t, NewView(res, -1), "chart-recovery")
	var it struct {
		Value float64
		Label *struct {
			Show      bool
			Formatter string
		}
	}
	if err := json.Unmarshal(o.Series[0].Data[0], &it); err != nil {
		t.Fatal(err)
	}
	if it.Value <= 0 || it.Label == nil || !it.Label.Show || it.Label.Formatter != "did not recover" {
		t.Fatalf("bar %s", o.Series[0].Data[0])
	}
}

// TestRejectLateShowsTheShed: a server whose door sheds refuses what the
// gate passed; the chart of rejected and late requests draws the shed
// share, else it was an empty axis.
func TestRejectLateShowsTheShed(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":3000,"parts":[{"type":"poisson","rate_rps":300}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":200,"door":"tail-drop"},
		"limiters":[{"type":"none"}]}`)
	if res.Points[0].Metrics.ShedPct <= 0 {
		t.Fatal("the test wants a server that sheds")
	}
	o := dataOptionOf(t, NewView(res, -1), "chart-reject-late")
	shed := ys(t, o.series("shed"))
	if len(shed) == 0 || shed[0] <= 0 {
		t.Fatalf("no shed share drawn: %+v", o.Series)
	}
	if !strings.Contains(o.Title.Text, "shed") {
		t.Fatalf("title %q", o.Title.Text)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
