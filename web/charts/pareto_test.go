package charts

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// paretoDoc: a token bucket at 40, 60, 80 req/s under a light and a heavy
// load; only 80 keeps reject_pct <= 30 under both (points: 40 light, 40
// heavy, 60 light, 60 heavy, 80 light, 80 heavy).
const paretoDoc = `{"version":1,"seed":1,
 "workload":{"duration_ms":4000,"parts":[{"type":"constant","rate_rps":50}]},
 "server":{"workers":1,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[40,60,80],"burst":2}],
 "loads":[{"name":"light"},{"name":"heavy","parts":[{"type":"constant","rate_rps":100}]}],
 "objectives":[{"metric":"reject_pct","op":"<=","value":30}%s]}`

type pointItem struct {
	Value []float64
	Point *int
	Tip   []string
}

// chartOption decodes chart id's option among a view's sections.
func chartOption(t *testing.T, v *View, id string, o any) {
	t.Helper()
	for _, g := range v.Groups() {
		for _, c := range g.Charts {
			if c.ID == id {
				if err := json.Unmarshal([]byte(c.Option), o); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
	}
	t.Fatalf("no chart %s", id)
}

// TestParetoNamesAndSelects: every dot says its point, its setting and
// its scenario, and carries the point a click selects; the recommended
// setting (in its binding scenario) is marked, and so is the point the
// page shows. Before: every dot was "every point" and a value.
func TestParetoNamesAndSelects(t *testing.T) {
	v := NewView(runDoc(t, strings.Replace(paretoDoc, "%s", "", 1)), -1)
	if v.Chosen != 5 {
		t.Errorf("the view opens on point %d, want the recommended setting's 5", v.Chosen)
	}
	var o struct {
		Series []struct {
			Name string
			Data []pointItem
		}
	}
	chartOption(t, v, "chart-pareto", &o)
	series := map[string][]pointItem{}
	for _, s := range o.Series {
		series[s.Name] = s.Data
	}
	all := series["every point"]
	if len(all) != 6 {
		t.Fatalf("%d dots", len(all))
	}
	for _, it := range all {
		if it.Point == nil || len(it.Tip) < 3 {
			t.Fatalf("dot %+v has no point or tip", it)
		}
	}
	want := []string{"point 5", "setting: token-bucket rate_rps=80 burst=2", "scenario: load heavy", "best overall (recommended)", "meets every objective here"}
	if !slices.Equal(all[5].Tip, want) || *all[5].Point != 5 {
		t.Errorf("dot 5: %d %q, want %q", *all[5].Point, all[5].Tip, want)
	}
	if all[0].Tip[2] != "scenario: load light" || all[0].Tip[1] != "setting: token-bucket rate_rps=40 burst=2" {
		t.Errorf("dot 0: %q", all[0].Tip)
	}
	if r := series["recommended"]; len(r) != 1 || *r[0].Point != 5 {
		t.Errorf("recommended marks %+v, want point 5", r)
	}
	if s := series["shown below"]; len(s) != 1 || *s[0].Point != 5 {
		t.Errorf("the shown point is %+v, want 5", s)
	}
	// Another point shown: the ring follows.
	o.Series = nil
	chartOption(t, NewView(v.Res, 2), "chart-pareto", &o)
	for _, s := range o.Series {
		if s.Name == "shown below" && (len(s.Data) != 1 || *s.Data[0].Point != 2) {
			t.Errorf("?point=2 rings %+v", s.Data)
		}
	}
}

// TestParallelSettings: with three objectives the Pareto section adds a
// parallel-coordinates chart: one axis per objective (the worst value
// over the scenarios, better up) and worst goodput, one line per
// setting, the feasible ones apart and the recommended one bold; with
// fewer objectives there is none.
func TestParallelSettings(t *testing.T) {
	res := runDoc(t, strings.Replace(paretoDoc, "%s", `,{"metric":"sojourn_p99_ms","op":"<=","value":500},{"metric":"admitted_rps","op":">=","value":30}`, 1))
	v := NewView(res, -1)
	var o struct {
		ParallelAxis []struct {
			Dim      int
			Name     string
			Inverse  bool
			Min, Max *float64
		}
		Series []struct {
			Name, Type string
			Data       []struct {
				Name  string
				Value []float64
				Point *int
				Tip   []string
			}
		}
	}
	chartOption(t, v, "chart-parallel", &o)
	var axes []string
	for _, a := range o.ParallelAxis {
		axes = append(axes, a.Name)
	}
	if want := []string{"reject_pct <= 30", "sojourn_p99_ms <= 500", "admitted_rps >= 30", "worst goodput_rps"}; !slices.Equal(axes, want) {
		t.Errorf("axes %q, want %q", axes, want)
	}
	if !o.ParallelAxis[0].Inverse || o.ParallelAxis[2].Inverse {
		t.Errorf("an upper bound is not drawn lower-is-up, or a lower bound is")
	}
	// Every line within every axis (echarts sized an axis by the first
	// series alone: the feasible lines ran off the chart).
	for _, s := range o.Series {
		for _, d := range s.Data {
			for k, ax := range o.ParallelAxis {
				if ax.Min == nil || ax.Max == nil || d.Value[k] < *ax.Min || d.Value[k] > *ax.Max {
					t.Errorf("%s: %s = %g outside its axis", d.Name, ax.Name, d.Value[k])
				}
			}
		}
	}
	a := v.Answer
	lines := map[string]int{}
	for _, s := range o.Series {
		if s.Type != "parallel" {
			t.Errorf("series %s is %s", s.Name, s.Type)
		}
		for _, d := range s.Data {
			lines[s.Name]++
			if len(d.Value) != 4 || d.Point == nil {
				t.Errorf("%s: %+v", s.Name, d)
			}
		}
	}
	if lines["recommended"] != 1 || lines["recommended"]+lines["meets every objective"] != a.Feasible ||
		lines["misses an objective"] != len(a.Settings)-a.Feasible {
		t.Errorf("lines %v for %d settings, %d feasible", lines, len(a.Settings), a.Feasible)
	}
	best := &a.Settings[a.Best]
	for _, s := range o.Series {
		if s.Name == "recommended" && (*s.Data[0].Point != best.Point(-1) || math.Abs(s.Data[0].Value[0]-best.Outcomes[0].Measured) > 0.051) {
			t.Errorf("the recommended line %+v is not the best setting at its worst value %g", s.Data[0], best.Outcomes[0].Measured)
		}
	}
	// Two objectives: no parallel chart.
	for _, g := range NewView(runDoc(t, strings.Replace(paretoDoc, "%s", `,{"metric":"admitted_rps","op":">=","value":30}`, 1)), -1).Groups() {
		for _, c := range g.Charts {
			if c.ID == "chart-parallel" {
				t.Error("a parallel chart with two objectives")
			}
		}
	}
}

// TestSettingsTableKeys: the settings table's columns are settings.csv's,
// each once: an objective on goodput_rps is worst_goodput_rps_ge_45, apart
// from the worst goodput (it was a second worst_goodput_rps, and sorting
// by either sorted by the last).
func TestSettingsTableKeys(t *testing.T) {
	v := NewView(runDoc(t, strings.Replace(paretoDoc, "%s", `,{"metric":"goodput_rps","op":">=","value":45}`, 1)), -1)
	var keys []string
	for _, h := range newSettingsTable(v).Header {
		if slices.Contains(keys, h.Key) {
			t.Errorf("column %s twice", h.Key)
		}
		keys = append(keys, h.Key)
	}
	if !slices.Contains(keys, "worst_goodput_rps_ge_45") || !slices.Contains(keys, "worst_reject_pct") || !slices.Contains(keys, "worst_goodput_rps") {
		t.Errorf("keys %v", keys)
	}
}

// TestParetoConfigColumn: an objective on a column of the config's own
// (critical_success_pct, from its classes) keeps the Pareto chart and the
// parallel chart, on that column. Before: experiments.ColumnByKey knew no
// such column and both charts vanished (slo-load-control had no Pareto).
func TestParetoConfigColumn(t *testing.T) {
	doc := `{"version":1,"seed":1,
 "workload":{"duration_ms":3000,"parts":[{"type":"constant","rate_rps":150}]},
 "server":{"workers":1,"service_ms":10,"deadline_ms":200},
 "classes":[{"name":"critical","share":0.25},{"name":"background"}],
 "limiters":[{"type":"token-bucket","rate_rps":[60,90,120],"burst":2}],
 "objectives":[{"metric":"critical_success_pct","op":">=","value":50},
  {"metric":"reject_pct","op":"<=","value":60},{"metric":"sojourn_p99_ms","op":"<=","value":500}]}`
	v := NewView(runDoc(t, doc), -1)
	var o struct {
		XAxis  []struct{ Name string }
		Series []struct {
			Name string
			Data []pointItem
		}
	}
	chartOption(t, v, "chart-pareto", &o)
	if len(o.XAxis) != 1 || !strings.HasPrefix(o.XAxis[0].Name, "critical_success_pct") {
		t.Errorf("x axis %+v, want critical_success_pct", o.XAxis)
	}
	for _, s := range o.Series {
		if s.Name == "every point" && len(s.Data) != 3 {
			t.Errorf("%d dots, want 3", len(s.Data))
		}
		if s.Name == "Pareto front" && len(s.Data) == 0 {
			t.Error("no Pareto front")
		}
	}
	var p struct{ ParallelAxis []struct{ Name string } }
	chartOption(t, v, "chart-parallel", &p)
	if len(p.ParallelAxis) == 0 || !strings.HasPrefix(p.ParallelAxis[0].Name, "critical_success_pct") {
		t.Errorf("parallel axes %+v", p.ParallelAxis)
	}
}

// TestScenarioText: the scenario sentence names the axes the sweep
// varies, not the ones decision.scenarios allows. Before: a seed list
// read "what you don't choose: loads, fields; seeds and replications".
func TestScenarioText(t *testing.T) {
	seeds := strings.Replace(strings.Replace(paretoDoc, "%s", "", 1), `"seed":1,`, `"seed":[1,2,3],`, 1)
	seeds = strings.Replace(seeds, `"loads":[{"name":"light"},{"name":"heavy","parts":[{"type":"constant","rate_rps":100}]}],`, "", 1)
	for _, c := range []struct{ doc, want string }{
		{strings.Replace(paretoDoc, "%s", "", 1), "2 scenarios (what you don't choose: 2 loads)"},
		{seeds, "3 scenarios (what you don't choose: 3 seeds)"},
		{strings.Replace(seeds, `"seed":[1,2,3],`, `"seed":[1,3,5],"replications":2,`, 1), "3 scenarios (what you don't choose: 3 seeds, each 2 replications judged as one)"},
	} {
		v := NewView(runDoc(t, c.doc), -1)
		if got := newAnswer(v).Scenarios; got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// TestParetoLayout: the Pareto title fits half the page (the columns go
// in a two-line subtitle), the recommended pin's tip is on its point
// (symbolOffset [0, -50%]), and every parallel axis has its name at the
// top (an inverse axis names its start). Before: "Pareto front: goodput
// (req/s) against sojourn p99 (ms)" was clipped at half width, the pin
// was centred on its point (head above it), and the inverse axes' names
// sat at the bottom.
func TestParetoLayout(t *testing.T) {
	doc := strings.Replace(paretoDoc, "%s", `,{"metric":"sojourn_p99_ms","op":"<=","value":500},{"metric":"goodput_rps","op":">=","value":1}`, 1)
	v := NewView(runDoc(t, doc), -1)
	var o struct {
		Title  struct{ Text, Subtext string }
		Series []struct {
			Name         string
			SymbolOffset []any
		}
	}
	chartOption(t, v, "chart-pareto", &o)
	if len(o.Title.Text) > 40 {
		t.Errorf("title %q is too long for half the page", o.Title.Text)
	}
	for _, line := range strings.Split(o.Title.Subtext, "\n") {
		if len(line) > 60 {
			t.Errorf("subtitle line %q is too long for half the page", line)
		}
	}
	pinned := false
	for _, s := range o.Series {
		if s.Name == "recommended" {
			pinned = len(s.SymbolOffset) == 2 && s.SymbolOffset[1] == "-50%"
		}
	}
	if !pinned {
		t.Errorf("the recommended pin is not offset onto its point: %+v", o.Series)
	}
	var p struct {
		Parallel struct {
			AxisDefault struct{ NameLocation string } `json:"parallelAxisDefault"`
		}
		ParallelAxis []struct {
			Name         string
			Inverse      bool
			NameLocation string
		}
	}
	chartOption(t, v, "chart-parallel", &p)
	for _, ax := range p.ParallelAxis {
		loc := ax.NameLocation
		if loc == "" {
			loc = p.Parallel.AxisDefault.NameLocation
		}
		if top := (loc == "end") != ax.Inverse; !top {
			t.Errorf("axis %q (inverse %v) names its %s: at the bottom", ax.Name, ax.Inverse, loc)
		}
	}
}
