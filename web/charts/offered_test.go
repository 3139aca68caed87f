package charts

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// offeredAt is the y of the chart's dotted offered series named name at x
// (NaN when it has no value there; a flat line's ends span the range).
func offeredAt(t *testing.T, v *View, name string, x float64) float64 {
	t.Helper()
	for _, s := range chartSeries(t, v, "chart-goodput") {
		if s.Name != name {
			continue
		}
		for i, d := range s.Data {
			if d.Value[0] == x {
				return d.Value[1]
			}
			if i > 0 && len(s.Data) == 2 && s.Data[0].Value[1] == d.Value[1] && s.Data[0].Value[0] <= x && x <= d.Value[0] {
				return d.Value[1] // flat
			}
		}
	}
	return math.NaN()
}

// TestOfferedFollowsTheSweptLoad: with the workload's rate swept, the
// goodput chart's dotted offered load follows each point's offered rate;
// it was drawn flat at the first point's, below the goodput of the others
// (collapse: offered 25 req/s under a goodput of 100).
func TestOfferedFollowsTheSweptLoad(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":2,"workload":{"duration_ms":3000,"parts":[
		{"type":"poisson","client":"api","rate_rps":[20,60,100]}]},
		"server":{"workers":4,"service_ms":5},
		"limiters":[{"type":"token-bucket","rate_rps":500,"burst":50}]}`)
	v := NewView(res, -1)
	for _, p := range v.points() {
		x := p.SweptValue()
		got := offeredAt(t, v, "offered", x)
		if !(math.Abs(got-p.Metrics.OfferedRPS) <= 0.05) {
			t.Errorf("at %s = %v: offered drawn %v, the point offers %v (goodput %v)", p.Swept, x, got, p.Metrics.OfferedRPS, p.Metrics.GoodputRPS)
		}
	}
}

// TestOfferedPerLineWhenLinesDiffer: a closed loop's offered load answers
// its limiter, so each line gets its own dotted offered line.
func TestOfferedPerLineWhenLinesDiffer(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":3000,"parts":[
		{"type":"users","group":"user","users":20,"think_ms":50,"think":"exponential","timeout_ms":500}]},
		"server":{"workers":2,"service_ms":10,"deadline_ms":200},
		"limiters":[{"type":"none"},{"type":"token-bucket","rate_rps":[50,100],"burst":5}]}`)
	v := NewView(res, -1)
	for _, p := range v.points() {
		name := "token-bucket offered"
		x := p.SweptValue()
		if p.Limiter == "none" {
			name, x = "none offered", 75
		}
		got := offeredAt(t, v, name, x)
		if !(math.Abs(got-p.Metrics.OfferedRPS) <= 0.05) {
			var names []string
			for _, s := range chartSeries(t, v, "chart-goodput") {
				names = append(names, s.Name)
			}
			t.Errorf("%s at %v: offered drawn %v, the point offers %v (series %s)", p.Limiter, x, got, p.Metrics.OfferedRPS, strings.Join(names, ", "))
		}
	}
}

// TestCapacityRounded: a drawn service time's capacity is printed rounded
// on the peak chart and in the server's service curve (was "server
// capacity (22.22222222222222 req/s)", beta 14.285714285714286 req/s).
func TestCapacityRounded(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":2000,"parts":[
		{"type":"poisson","client":"api","rate_rps":20}]},
		"server":{"workers":1,"service":"bimodal","service_slow_share":0.5,"service_fast_ms":20,"service_slow_ms":70},
		"limiters":[{"type":"token-bucket","rate_rps":[20,30],"burst":5}]}`)
	v := NewView(res, -1)
	long := func(s string) bool {
		for _, f := range strings.Fields(s) {
			if i := strings.IndexByte(f, '.'); i >= 0 && len(strings.TrimRight(f[i+1:], ")")) > 2 {
				return true
			}
		}
		return false
	}
	for _, g := range v.Groups() {
		for _, c := range g.Charts {
			if c.ID != "chart-peak" {
				continue
			}
			var o struct{ Title struct{ Subtext string } }
			if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
				t.Fatal(err)
			}
			if long(o.Title.Subtext) || !strings.Contains(o.Title.Subtext, "22.2 req/s") {
				t.Errorf("peak chart: %q", o.Title.Subtext)
			}
		}
	}
	b := newBounds(v, "x")
	if b == nil || len(b.Rows) == 0 {
		t.Fatal("no bounds rows")
	}
	if long(b.Rows[0].Beta) {
		t.Errorf("beta %q", b.Rows[0].Beta)
	}
}

// TestBoundsRowsSayWhichPoint: the bounds table names each row's policy
// and swept workload value; the five policies of retry-storm were five
// rows all named "token-bucket" with the same parameters.
func TestBoundsRowsSayWhichPoint(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":2,"workload":{"duration_ms":2000,"parts":[
		{"type":"poisson","client":"api","rate_rps":[40,80]}]},
		"server":{"workers":1,"service_ms":5,"deadline_ms":200},
		"limiters":[{"type":"token-bucket","rate_rps":100,"burst":10}],
		"policies":[{"name":"no-retry","timeout_ms":100},{"name":"retry","timeout_ms":100,"retries":2,"backoff_ms":10}]}`)
	b := newBounds(NewView(res, -1), "x")
	if b == nil || len(b.Rows) != 4 {
		t.Fatalf("bounds rows: %+v", b)
	}
	seen := map[string]bool{}
	for _, r := range b.Rows {
		label := r.Limiter + " " + r.Swept
		if seen[label] {
			t.Errorf("two rows read %q", label)
		}
		seen[label] = true
		if !strings.Contains(label, "retry") || !strings.Contains(label, "workload.parts[0].rate_rps=") {
			t.Errorf("row %q names neither its policy nor its load", label)
		}
	}
}

// TestClientRecoveryNotMeasuredSaysSo: a client-model run whose trigger
// (here a flash crowd from 500 ms) leaves no whole second before it has no
// recovery measurement; the section says so and draws no recovery chart.
// It drew empty bars titled "no point recovered within the run
// (metastable)".
func TestClientRecoveryNotMeasuredSaysSo(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":1,"workload":{"duration_ms":4000,"parts":[
		{"type":"clients","group":"web","clients":3,"rate_rps":20,"arrival":"poisson","timeout_ms":200,"retries":1,"backoff_ms":20},
		{"type":"flash-crowd","group":"crowd","clients":2,"base_rps":10,"multiplier":4,"start_ms":500,"duration_ms":1000,"ramp_ms":100,"timeout_ms":200}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":200},
		"limiters":[{"type":"token-bucket","rate_rps":100,"burst":[10,20]}]}`)
	for i := range res.Points {
		if res.Points[i].Metrics.Recovery != nil {
			t.Fatalf("point %d measured a recovery: the case needs one that cannot", i)
		}
	}
	for _, g := range NewView(res, -1).Groups() {
		if g.ID != "clients" {
			continue
		}
		if !strings.Contains(g.Intro, "not measured") {
			t.Errorf("intro %q does not say recovery is not measured", g.Intro)
		}
		for _, c := range g.Charts {
			if c.ID == "chart-clients-recovery" {
				t.Errorf("a recovery chart without a measurement: %s", c.Option[:min(len(c.Option), 300)])
			}
		}
		return
	}
	t.Fatal("no clients section")
}
