package experiments_test

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
)

const modelsBase = `{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 50}]},
  "limiters": [{"type": "none"}]`

// TestModelFieldErrors: every new field goes through the strict
// decoder and reports its path.
func TestModelFieldErrors(t *testing.T) {
	for _, c := range []struct{ extra, path, msg string }{
		{`"servers": [{"name": "a", "door": "closed"}]`, "servers[0].door", "must be one of"},
		{`"servers": [{"name": "a", "queue": 3}]`, "servers[0].queue", "not a known field"},
		{`"servers": [{"name": "a"}, {"name": "a"}]`, "servers[1].name", "also called"},
		{`"servers": [{"door": "tail-drop"}]`, "servers[0].name", "is required"},
		{`"server": {"door": "priority"}`, "server.door", "give the workload classes"},
		{`"server": {"bound": 5}`, "server.bound", "a door that sheds"},
		{`"server": {"occupancy": "busy-ceil", "end": "cut"}`, "server.occupancy", "plain server"},
		{`"loads": [{"name": "x", "parts": [{"type": "constant", "rate_rps": -1}]}]`, "loads[0].parts[0].rate_rps", "must be a rate"},
		{`"loads": [{"name": "x", "parts": [{"type": "constant", "rate": 1}]}]`, "loads[0].parts[0].rate", "not a field"},
		{`"loads": [{"name": "x"}, {"name": "y", "parts": [{"type": "constant", "client": "other", "rate_rps": 5}]}]`, "loads[1].parts", "same clients"},
		{`"classes": [{"name": "c", "share": 1.5}, {"name": "b"}]`, "classes[0].share", "at most 1"},
		{`"classes": [{"name": "c", "share": 0.5}, {"name": "b", "share": 0.5}]`, "classes[1].share", "takes the rest"},
		{`"classes": [{"name": "c", "share": 0.5}, {"name": "b"}], "class_draw": {"generator": "xorshift"}`, "class_draw.generator", "must be one of"},
		{`"classes": [{"name": "c", "share": 0.5}, {"name": "b"}], "slo": {"class": "gold", "success_pct": 99}`, "slo.class", "one of the classes"},
		{`"output": {"decimals": "java"}`, "output.decimals", "must be one of"},
		{`"output": {"windows": 3}`, "output.windows", "must be a string"},
		{`"metrics": {"percentiles": "hdr"}`, "metrics.percentiles", "must be one of"},
		{`"server": {"deadline_ms": 1000}, "metrics": {"score_until": "end-minus-deadline"}`, "workload.duration_ms", "longer than the deadline"},
		{`"reports": [{"type": "points", "file": "a.csv", "select": {"loads": [1]}, "columns": [{"header": "x", "value": "offered_rps"}]}]`, "reports[0].select.loads[0]", "index of one of the loads"},
		{`"reports": [{"type": "points", "file": "a.csv", "columns": [{"header": "x", "value": "class_success_pct"}]}]`, "reports[0].columns[0].value", "give the config classes"},
		{`"classes": [{"name": "c", "share": 0.5}, {"name": "b"}], "reports": [{"type": "series", "file": "a.csv", "columns": [{"header": "x", "value": "class_success_pct", "limiter": 0, "class": "d"}]}]`, "reports[0].columns[0].class", "one of the classes"},
		{`"reports": [{"type": "series", "file": "a.csv", "columns": [{"header": "x", "value": "sojourn_p99_ms", "limiter": 0, "server": 2}]}]`, "reports[0].columns[0].server", "index of a server"},
		{`"reports": [{"type": "series", "file": "a.csv", "columns": [{"header": "x", "value": "shed_pct", "limiter": 0}]}]`, "reports[0].columns[0].value", "must be one of"},
	} {
		_, err := document.DecodeConfig([]byte(modelsBase + ", " + c.extra + "}"))
		found := false
		for _, e := range field.Errors(err) {
			if e.Path == c.path && strings.Contains(e.Msg, c.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: errors %v, want one at %s containing %q", c.extra, err, c.path, c.msg)
		}
	}
}

// A config with every new section reads back from its own JSON unchanged.
func TestModelRoundTrip(t *testing.T) {
	doc := modelsBase + `, "server": {"end": "cut", "expire": "at-dequeue"},
  "servers": [{"name": "blind", "door": "tail-drop", "bound": 12}, {"name": "priority", "door": "priority", "deadline_ms": 200}],
  "loads": [{"name": "base"}, {"name": "high", "parts": [{"type": "constant", "rate_rps": 500}]}],
  "classes": [{"name": "gold", "share": 0.1}, {"name": "silver", "share": 0.3}, {"name": "bronze"}],
  "slo": {"class": "gold", "success_pct": 99.5},
  "metrics": {"percentiles": "hdr-3", "score_until": "end-minus-deadline"},
  "output": {"decimals": "shortest-half-up", "windows": "whole"},
  "reports": [{"type": "points", "file": "a.csv", "select": {"servers": [1], "loads": [0, 1]},
    "columns": [{"header": "s", "value": "server"}, {"header": "g", "value": "class_success_pct", "class": "gold"}, {"header": "slo", "value": "slo_met"}]}]}`
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClassDraw == nil || cfg.ClassDraw.Generator != experiments.DrawJavaRandom {
		t.Errorf("class_draw not normalized: %+v", cfg.ClassDraw)
	}
	again, err := document.DecodeConfig(cfg.JSON())
	if err != nil {
		t.Fatalf("%v\n%s", err, cfg.JSON())
	}
	if string(again.JSON()) != string(cfg.JSON()) {
		t.Errorf("round trip changed the document:\n%s\n%s", cfg.JSON(), again.JSON())
	}
	if n := len(cfg.Points()); n != 4 {
		t.Errorf("%d points, want 1 limiter × 2 servers × 2 loads", n)
	}
}
