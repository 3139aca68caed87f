package charts

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/metrics"
)

// bandDoc runs the client model (timeouts, retries) with several clients
// and a trigger, SEEDS and REPS filled in.
const bandDoc = `{"version":1,"seed":SEED,REPS
 "workload":{"duration_ms":3000,"parts":[{"type":"clients","group":"g","clients":4,"rate_rps":60,"arrival":"poisson","timeout_ms":80,"retries":2,"backoff_ms":30}]},
 "trigger":{"start_ms":1000,"end_ms":1500},
 "server":{"workers":1,"service_ms":5},
 "limiters":[{"type":"token-bucket","rate_rps":150,"burst":10}]}`

func bandRun(t *testing.T, seed uint64, reps int) *experiments.Result {
	r := ""
	if reps > 1 {
		r = fmt.Sprintf(`"replications":%d,`, reps)
	}
	return runDoc(t, strings.NewReplacer("SEED", fmt.Sprint(seed), "REPS", r).Replace(bandDoc))
}

type bandSeries struct {
	Name      string
	Stack     string
	Data      []struct{ Value any }
	AreaStyle *struct{ Opacity float64 }
}

// y is item k's y value.
func (s *bandSeries) y(k int) float64 { return s.Data[k].Value.([]any)[1].(float64) }

func chartOf(t *testing.T, v *View, id string) (title, subtitle string, series []bandSeries) {
	t.Helper()
	for _, g := range v.Groups() {
		for _, c := range g.Charts {
			if c.ID != id {
				continue
			}
			var o struct {
				Title  struct{ Text, Subtext string }
				Series []bandSeries
			}
			if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
				t.Fatal(err)
			}
			return c.Title, o.Title.Subtext, o.Series
		}
	}
	t.Fatalf("no chart %s", id)
	return "", "", nil
}

// With replications, the time series and the client model's lines over
// time are each window's mean over the runs, over a shaded band of its 95%
// interval, and say so; each equals the mean of the unreplicated runs at
// seeds seed … seed+N-1. Charts of one run say which.
func TestReplicatedSeriesAreMeansWithBands(t *testing.T) {
	const seed, reps = 5, 3
	v := NewView(bandRun(t, seed, reps), 0)
	singles := make([]*experiments.Result, reps)
	for r := range singles {
		singles[r] = bandRun(t, seed+uint64(r), 1)
	}
	sw := v.Res.Config.SeriesWindow()
	for _, c := range []struct {
		id   string
		line string
		get  func(s *experiments.Series) []int32
	}{
		{"chart-series", " released", func(s *experiments.Series) []int32 { return s.Released }},
		{"chart-rejected", "", func(s *experiments.Series) []int32 { return s.Rejected }},
		{"chart-clients-goodput", "", func(s *experiments.Series) []int32 { return s.Goodput }},
		{"chart-clients-attempts", "", func(s *experiments.Series) []int32 { return s.Attempts }},
	} {
		_, sub, series := chartOf(t, v, c.id)
		if !strings.Contains(sub, "mean of 3 runs, shaded: its 95% interval") {
			t.Errorf("%s: subtitle %q", c.id, sub)
		}
		var mean, lo, width *bandSeries
		for i := range series {
			s := &series[i]
			switch {
			case s.Stack != "" && s.AreaStyle == nil:
				lo = s
			case s.Stack != "":
				width = s
			case s.Name != "offered":
				mean = s
			}
		}
		if mean == nil || lo == nil || width == nil || lo.Stack != width.Stack || width.AreaStyle.Opacity == 0 {
			t.Fatalf("%s: no mean line over a shaded band: %+v", c.id, series)
		}
		checked := 0
		for k := range mean.Data {
			var xs []float64
			for _, one := range singles {
				xs = append(xs, float64(experiments.At(c.get(&one.Points[0].Series), k))*1000/sw)
			}
			want := metrics.MeanCI(xs)
			m, l, h := mean.y(k), lo.y(k), lo.y(k)+width.y(k)
			// The chart rounds each value to its places (round.go, here
			// 1): half a unit each, the band's top the sum of two.
			const unit = 0.05 + 1e-9
			if math.Abs(m-want.Mean) > unit || math.Abs(h-(want.Mean+want.HalfWidth)) > 2*unit || math.Abs(l-max(0, want.Mean-want.HalfWidth)) > unit {
				t.Fatalf("%s window %d: mean %v band [%v, %v]; the runs give %v ± %v (%v)", c.id, k, m, l, h, want.Mean, want.HalfWidth, xs)
			}
			if want.HalfWidth > 0 {
				checked++
			}
		}
		if checked == 0 {
			t.Errorf("%s: every window's runs agree: the test shows nothing", c.id)
		}
	}
	// Jain's index over time and the per-client bars are the first run's.
	for _, id := range []string{"chart-jain-time", "chart-clients", "chart-clients-recovery"} {
		if title, _, _ := chartOf(t, v, id); !strings.HasSuffix(title, "replication 1 of 3 (seed 5)") {
			t.Errorf("%s: title %q", id, title)
		}
	}
	// Without replications nothing changes: no band, no note.
	one := NewView(singles[0], 0)
	if _, sub, series := chartOf(t, one, "chart-series"); strings.Contains(sub, "runs") || strings.Contains(fmt.Sprint(series), "band") {
		t.Errorf("unreplicated: %q %+v", sub, series)
	}
	if title, _, _ := chartOf(t, one, "chart-jain-time"); strings.Contains(title, "replication") {
		t.Errorf("unreplicated title %q", title)
	}
}

// A replicated run stored before series blob format 4 has no bands: its
// lines over time are its points' first runs, and their titles say so; a
// chart of points whose first runs have other seeds (a seed list) names
// no seed. Amplification is the runs' mean either way.
func TestFirstRunsSayWhichWithoutBands(t *testing.T) {
	res := bandRun(t, 5, 3)
	for i := range res.Points {
		res.Points[i].Band = nil // as decoded from a format 2 blob
	}
	v := NewView(res, 0)
	for _, g := range v.Groups() {
		if g.ID == "timeline" && !strings.HasSuffix(g.Title, "replication 1 of 3 (seed 5)") {
			t.Errorf("timeline title %q", g.Title)
		}
	}
	for _, id := range []string{"chart-clients-goodput", "chart-clients-attempts"} {
		if title, sub, _ := chartOf(t, v, id); !strings.HasSuffix(title, "replication 1 of 3 (seed 5)") || strings.Contains(sub, "mean of") {
			t.Errorf("%s: title %q, subtitle %q", id, title, sub)
		}
	}
	_, sub, series := chartOf(t, v, "chart-clients-amplification")
	st, _ := res.Points[0].Stat("amplification")
	// The bar is the mean at amplification's places (Fixed4, round.go).
	if !strings.Contains(sub, "mean of 3 runs") || math.Abs(series[0].Data[0].Value.(float64)-st.Mean) > 0.00005+1e-12 {
		t.Errorf("amplification: subtitle %q, bar %v, mean %v", sub, series[0].Data[0].Value, st.Mean)
	}

	list := runDoc(t, strings.NewReplacer("SEED", "[5, 9]", "REPS", `"replications":3,`).Replace(bandDoc))
	if title, _, _ := chartOf(t, NewView(list, 0), "chart-clients-recovery"); !strings.HasSuffix(title, "replication 1 of 3") {
		t.Errorf("recovery of points at seeds 5 and 9: title %q", title)
	}
}

// With replications, the sweep charts of Jain's index, the downstream
// peak and the rolling maximum draw the runs' mean (the point's Metrics
// are its first run's), as results.csv prints it.
func TestReplicatedSweepChartsAreMeans(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":5,"replications":4,
 "workload":{"duration_ms":3000,"parts":[{"type":"clients","group":"g","clients":4,"rate_rps":40,"arrival":"poisson","timeout_ms":80,"retries":2,"backoff_ms":30}]},
 "server":{"workers":4,"service_ms":5},
 "limiters":[{"type":"token-bucket","rate_rps":300,"burst":100}]}`)
	v := NewView(res, 0)
	p := &res.Points[0]
	telling := 0 // cases whose first run and mean differ on the chart
	for _, c := range []struct {
		id, key string
		first   float64
		tol     float64 // half a unit of the chart's places
	}{
		{"chart-jain", "jain_index", p.Metrics.Jain, 0.00005},
		{"chart-peak", "downstream_peak_rps", p.Metrics.DownstreamPeakRPS, 0.05},
		{"chart-rolling", "rolling_max", float64(p.Metrics.RollingMax), 0.05},
	} {
		st, ok := p.Stat(c.key)
		if !ok {
			t.Fatalf("%s: no statistics of %s", c.id, c.key)
		}
		if math.Abs(st.Mean-c.first) > c.tol {
			telling++
		}
		_, _, series := chartOf(t, v, c.id)
		var got float64
		switch y := series[0].Data[0].Value.(type) {
		case float64:
			got = y
		case []any:
			got = y[1].(float64)
		default:
			t.Fatalf("%s: value %v", c.id, y)
		}
		if math.Abs(got-st.Mean) > c.tol+1e-9 {
			t.Errorf("%s: drew %v, the runs' mean is %v (first run %v)", c.id, got, st.Mean, c.first)
		}
	}
	if telling < 2 {
		t.Fatalf("only %d of the charts' first runs differ from their means: the test cannot tell them apart", telling)
	}
}
