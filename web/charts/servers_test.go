package charts

import (
	"encoding/json"
	"strings"
	"testing"
)

// The presets of the seed lab's posts draw what each post is about: the hangover (Post 4,
// log axis, a line per discipline), the shed wait per discipline (Post 4),
// per-class success through the bursts with the SLO line (Post 5); runs
// without the queue model draw none of them.
func TestServerSections(t *testing.T) {
	sections := func(name string) map[string]*Group {
		out := map[string]*Group{}
		for _, g := range presetView(t, name).Groups() {
			out[g.ID] = g
		}
		return out
	}
	type option struct {
		YAxis  []struct{ Type string }
		Series []struct{ Name string }
	}
	parse := func(c Chart) option {
		var o option
		if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	post4 := sections("load-shedding")
	h, s := post4["hangover"], post4["shedding"]
	if h == nil || s == nil {
		t.Fatalf("load-shedding: sections %v, want hangover and shedding", post4)
	}
	if o := parse(h.Charts[0]); o.YAxis[0].Type != "log" || len(o.Series) != 4 || o.Series[3].Name != "lifo" {
		t.Errorf("hangover chart: y axis %q, series %v; want log and fifo, tail-drop, expire, lifo", o.YAxis[0].Type, o.Series)
	}
	if o := parse(s.Charts[0]); len(o.Series) != 8 || !strings.HasPrefix(o.Series[0].Name, "fifo") {
		t.Errorf("shed wait chart: series %v, want p50 and p99 of 4 disciplines", o.Series)
	}
	post5 := sections("slo-load-control")
	c := post5["classes"]
	if c == nil {
		t.Fatalf("slo-load-control has no classes section")
	}
	if o := parse(c.Charts[0]); len(o.Series) != 5 || !strings.HasPrefix(o.Series[0].Name, "SLO: critical") {
		t.Errorf("class chart series %v, want the SLO line and 2 servers × 2 classes", o.Series)
	}
	for _, name := range []string{"token-vs-leaky", "admission-control"} {
		for id := range sections(name) {
			if id == "hangover" || id == "shedding" || id == "classes" {
				t.Errorf("%s draws the %s section", name, id)
			}
		}
	}
}
