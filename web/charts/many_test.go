package charts

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
)

// legibleOption is what the legibility checks read of a chart's option.
type legibleOption struct {
	Title     json.RawMessage
	Legend    json.RawMessage
	VisualMap json.RawMessage
	Grid      []struct{ Top string }
	Series    []struct {
		Name       string
		Type       string
		Symbol     string
		XAxisIndex int
		Data       []json.RawMessage
		LineStyle  *struct {
			Color string
			Width float64
			Type  any
		}
	}
}

type legibleTitle struct {
	Text, Subtext string
	TextStyle     *struct{ LineHeight int }
	SubtextStyle  *struct{ LineHeight int }
}

type legibleLegend struct {
	Type string
	Show *bool
	Data []string
}

// titles are the option's titles: the chart's first, then its small
// charts'.
func (o legibleOption) titles(t *testing.T) []legibleTitle {
	var ts []legibleTitle
	if err := json.Unmarshal(o.Title, &ts); err == nil {
		return ts
	}
	var one legibleTitle
	if err := json.Unmarshal(o.Title, &one); err != nil {
		t.Fatal(err)
	}
	return []legibleTitle{one}
}

func (o legibleOption) legends(t *testing.T) []legibleLegend {
	if len(o.Legend) == 0 {
		return nil
	}
	var ls []legibleLegend
	if err := json.Unmarshal(o.Legend, &ls); err == nil {
		return ls
	}
	var one legibleLegend
	if err := json.Unmarshal(o.Legend, &one); err != nil {
		t.Fatal(err)
	}
	return []legibleLegend{one}
}

// keyless names a series no key needs to list: an interval's bars and
// band (their line's legend entry toggles them).
func keyless(name string) bool {
	return strings.HasSuffix(name, " 95% CI") || strings.HasSuffix(name, " 95% interval")
}

// checkLegible checks one chart's option: no legend pages; past
// maxKeyedLines series a colour key (visualMap) or a legend naming every
// series; in one plot two lines of one colour differ in dash; lines of
// several widths say which is widest in the subtitle; the title and
// subtitle end above the plot.
func checkLegible(t *testing.T, where string, c Chart) {
	t.Helper()
	var o legibleOption
	if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	legends := o.legends(t)
	for _, l := range legends {
		if l.Type == "scroll" {
			t.Errorf("%s: a legend of type scroll", where)
		}
	}
	var names []string
	for _, s := range o.Series {
		if s.Name != "" && !keyless(s.Name) && len(s.Data) > 0 && !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	if len(names) > maxKeyedLines && len(o.VisualMap) == 0 {
		covered := false
		for _, l := range legends {
			if l.Show != nil && !*l.Show {
				continue
			}
			covered = l.Data == nil || !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(l.Data, n) })
		}
		if !covered {
			t.Errorf("%s: %d series, no colour key and no legend naming each", where, len(names))
		}
	}
	// Lines of one colour in one plot differ in dash.
	looks := map[string]string{}
	widths := map[float64]bool{}
	for _, s := range o.Series {
		if s.Type != "line" || s.LineStyle == nil || len(s.Data) == 0 || keyless(s.Name) {
			continue
		}
		dash, _ := json.Marshal(s.LineStyle.Type)
		look := fmt.Sprintf("%d %s %s", s.XAxisIndex, s.LineStyle.Color, dash)
		if other, ok := looks[look]; ok && other != s.Name {
			t.Errorf("%s: %q and %q look alike (%s)", where, other, s.Name, look)
		}
		looks[look] = s.Name
		if s.Symbol == "circle" {
			widths[s.LineStyle.Width] = true
		}
	}
	titles := o.titles(t)
	if len(widths) > 1 && !strings.Contains(titles[0].Subtext, "widest") {
		t.Errorf("%s: lines of %d widths; the subtitle %q does not say which is widest", where, len(widths), titles[0].Subtext)
	}
	// The title block (5 px padding, the title's line, a 10 px gap, the
	// subtitle's lines) ends above the plot or the small charts' titles.
	tt := titles[0]
	if tt.TextStyle == nil || tt.TextStyle.LineHeight == 0 || tt.Subtext != "" && (tt.SubtextStyle == nil || tt.SubtextStyle.LineHeight == 0) {
		t.Errorf("%s: title without line heights (echarts lays a subtitle of several lines over its title)", where)
		return
	}
	bottom := 5 + tt.TextStyle.LineHeight
	if tt.Subtext != "" {
		bottom += 10 + tt.SubtextStyle.LineHeight*(strings.Count(tt.Subtext, "\n")+1)
	}
	top := 0
	if len(titles) > 1 {
		top = panelHeaderPx
	} else if len(o.Grid) > 0 {
		fmt.Sscan(o.Grid[0].Top, &top)
	}
	if top > 0 && bottom > top {
		t.Errorf("%s: the title block ends at %d px, the plot starts at %d", where, bottom, top)
	}
}

// TestChartsLegible checks every chart of every preset's run page
// (checkLegible).
func TestChartsLegible(t *testing.T) {
	for _, name := range presets.Names() {
		v := NewView(runPreset(t, name), -1)
		groups := v.Groups()
		if b := newBounds(v, "r"); b != nil {
			groups = append(groups, b.Groups...)
		}
		for _, g := range groups {
			for _, c := range g.Charts {
				checkLegible(t, name+" "+c.ID, c)
			}
		}
	}
}

// TestManyLinesSmallCharts: admission-control's sweep charts draw 32
// lines (4 limiters × 8 loads): a small chart per limiter, the lines
// coloured by load with a colour key naming "load" and each load, the
// measures' dashes in the legend.
func TestManyLinesSmallCharts(t *testing.T) {
	v := presetView(t, "admission-control")
	for _, id := range []string{"chart-goodput", "chart-reject-late"} {
		var c Chart
		for _, g := range v.Groups() {
			for _, gc := range g.Charts {
				if gc.ID == id {
					c = gc
				}
			}
		}
		var o struct {
			Title     []Title
			Grid      []Grid
			Legend    Legend
			VisualMap []struct {
				Type        string
				Text        []string
				Pieces      []Piece
				SeriesIndex []int
			}
			Series []Series
		}
		if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		var panels []string
		for _, tt := range o.Title[1:] {
			panels = append(panels, tt.Text)
		}
		if want := []string{"admission", "none", "no-control", "admission-limited"}; !slices.Equal(panels, want) || len(o.Grid) != 4 {
			t.Errorf("%s: small charts %q (%d grids), want %q", id, panels, len(o.Grid), want)
		}
		var labels []string
		for _, row := range o.VisualMap {
			for _, p := range row.Pieces {
				labels = append(labels, p.Label)
			}
			if row.SeriesIndex == nil || len(row.SeriesIndex) != 0 {
				t.Errorf("%s: a colour key row colours series: %+v", id, row)
			}
		}
		if len(o.VisualMap) == 0 || !slices.Contains(o.VisualMap[0].Text, "load") || len(labels) != 8 || labels[0] != "50" || labels[7] != "bursty" {
			t.Errorf("%s: colour key %+v", id, o.VisualMap)
		}
		if !strings.Contains(o.Title[0].Subtext, "colour: load") {
			t.Errorf("%s: subtitle %q does not say what colour means", id, o.Title[0].Subtext)
		}
		if c.Height <= chartHeightPx {
			t.Errorf("%s: height %d for 4 small charts", id, c.Height)
		}
	}
}

// TestClientLinesColouredByRate: collapse's 12 client lines (rates 25 to
// 300, two retry policies) are coloured by the rate on the sequential
// palette and dashed by policy, each line still named by its whole
// setting.
func TestClientLinesColouredByRate(t *testing.T) {
	v := presetView(t, "collapse")
	o := dataOptionOf(t, v, "chart-clients-goodput")
	raw := ""
	for _, g := range v.Groups() {
		for _, c := range g.Charts {
			if c.ID == "chart-clients-goodput" {
				raw = c.Option
			}
		}
	}
	var full struct {
		Legend    Legend
		VisualMap []VisualMap
		Series    []struct {
			Name      string
			LineStyle struct {
				Color string
				Type  any
			}
		}
	}
	if err := json.Unmarshal([]byte(raw), &full); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(full.Legend.Data, []string{"no-retry", "retry"}) || len(full.VisualMap) == 0 || !slices.Contains(full.VisualMap[0].Text, "workload.parts[0].rate_rps") {
		t.Fatalf("legend %+v, colour key %+v", full.Legend, full.VisualMap)
	}
	style := map[string]string{}
	for _, s := range full.Series {
		style[s.Name] = fmt.Sprint(s.LineStyle.Color, s.LineStyle.Type)
	}
	a, b := style["queue-capacity limit=100000 workload.parts[0].rate_rps=25 · no-retry"], style["queue-capacity limit=100000 workload.parts[0].rate_rps=25 · retry"]
	if a == "" || b == "" || a == b || a[:7] != b[:7] {
		t.Errorf("rate 25: no-retry %q, retry %q: want one colour, two dashes", a, b)
	}
	if !strings.Contains(o.Title.Subtext, "colour: workload.parts[0].rate_rps; dash: policy") {
		t.Errorf("subtitle %q", o.Title.Subtext)
	}
}
