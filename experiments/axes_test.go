package experiments_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
)

func TestSweptFieldsAxesAndColumns(t *testing.T) {
	cfg := enginetest.Decode(t, enginetest.SweptDoc)
	axes := cfg.Axes()
	var paths []string
	for _, a := range axes {
		paths = append(paths, a.Path)
	}
	want := []string{"server.service_ms", "workload.parts[0].rate_rps", "workload.parts[1].multiplier", "seed"}
	if !slices.Equal(paths, want) {
		t.Fatalf("axes %v, want %v", paths, want)
	}
	pts := cfg.Points()
	if len(pts) != 2*2*2*2*2 {
		t.Fatalf("%d points, want 32", len(pts))
	}
	// Order: burst, then service, then rate, multiplier, seed (innermost).
	if got := pts[1].Axes; !slices.Equal(got, []float64{5, 60, 2, 8}) {
		t.Errorf("point 1 axes %v", got)
	}
	if got := pts[16].Params["burst"]; got != 20 {
		t.Errorf("point 16 burst %v", got)
	}
	if pts[1].Seed != "8" || pts[0].Seed != "7" {
		t.Errorf("seeds %q %q", pts[0].Seed, pts[1].Seed)
	}
	files := enginetest.RunFiles(t, cfg, 2)
	rows := enginetest.CSVRows(t, enginetest.FileOf(t, files, experiments.FileResults))
	head := rows[0]
	for _, p := range want {
		if !slices.Contains(head, p) {
			t.Errorf("results.csv has no %s column: %v", p, head)
		}
	}
	// The swept columns come before the first measurement.
	if i, j := slices.Index(head, "seed"), slices.Index(head, "arrivals"); i > j {
		t.Errorf("seed after arrivals: %v", head)
	}
	if len(rows) != 33 || rows[2][slices.Index(head, "seed")] != "8" || rows[2][slices.Index(head, "workload.parts[0].rate_rps")] != "60.0" {
		t.Errorf("rows: %v", rows[:3])
	}
}

// Every point of a swept config measures what the config with that value
// written in measures: the sweep is only the product.
func TestSweptPointEqualsItsOwnConfig(t *testing.T) {
	cfg := enginetest.Decode(t, enginetest.SweptDoc)
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 5, 13, 22, 31} {
		p := res.Points[i]
		single := fmt.Sprintf(`{"version": 1, "seed": %s,
  "workload": {"duration_ms": 2000, "parts": [
    {"type": "poisson", "rate_rps": %g},
    {"type": "flash-crowd", "group": "crowd", "clients": 3, "base_rps": 5, "multiplier": %g, "start_ms": 500, "duration_ms": 300}
  ]},
  "server": {"workers": 1, "service_ms": %g},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": %g}]}`, p.Seed, p.Axes[1], p.Axes[2], p.Axes[0], p.Params["burst"])
		one, err := sweep.Run(context.Background(), enginetest.Decode(t, single), sweep.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		got, want := p.Metrics, one.Points[0].Metrics
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("point %d: %+v\nits own config: %+v", i, got, want)
		}
	}
}

func TestSweptConfigRoundTrips(t *testing.T) {
	cfg := enginetest.Decode(t, enginetest.SweptDoc)
	doc := cfg.JSON()
	for _, s := range []string{`"seed": [`, `"rate_rps": [`, `"service_ms": [`, `"multiplier": [`} {
		if !bytes.Contains(doc, []byte(s)) {
			t.Errorf("document lost %s:\n%s", s, doc)
		}
	}
	again := enginetest.Decode(t, string(doc))
	if !bytes.Equal(again.JSON(), doc) {
		t.Errorf("round trip changed the document:\n%s\n%s", doc, again.JSON())
	}
}

func TestBadSweepsNameTheField(t *testing.T) {
	base := `{"version": 1, "seed": SEED, REPS "workload": {"duration_ms": 1000, "parts": [PART]},
  "server": SERVER, "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 4}]}`
	mk := func(seed, reps, part, srv string) string {
		return strings.NewReplacer("SEED", seed, "REPS", reps, "PART", part, "SERVER", srv).Replace(base)
	}
	okPart := `{"type": "poisson", "rate_rps": 50}`
	cases := []struct {
		name, doc, path string
	}{
		{"replications 0", mk("1", `"replications": 0,`, okPart, "{}"), "replications"},
		{"replications 1", mk("1", `"replications": 1,`, okPart, "{}"), "replications"},
		{"too many replications", mk("1", `"replications": 101,`, okPart, "{}"), "replications"},
		{"replications a list", mk("1", `"replications": [2, 3],`, okPart, "{}"), "replications"},
		{"overlapping seed ranges", mk("[1, 2]", `"replications": 3,`, okPart, "{}"), "seed[1]"},
		{"a seed range overlapping an earlier one", mk("[10, 20, 12]", `"replications": 3,`, okPart, "{}"), "seed[2]"},
		{"a seed run past the largest", mk("[1, 18446744073709551615]", `"replications": 2,`, okPart, "{}"), "seed[1]"},
		{"one seed run past the largest", mk("18446744073709551614", `"replications": 3,`, okPart, "{}"), "seed"},
		{"a seed list of text", mk(`["a"]`, "", okPart, "{}"), "seed"},
		{"an empty seed list", mk(`[]`, "", okPart, "{}"), "seed"},
		{"a list in a text field", mk("1", "", `{"type": "poisson", "rate_rps": 50, "client": ["a", "b"]}`, "{}"), "workload.parts[0].client"},
		{"a list in a choice field", mk("1", "", `{"type": "clients", "group": "g", "clients": 2, "rate_rps": 5, "arrival": ["poisson", "uniform"]}`, "{}"), "workload.parts[0].arrival"},
		{"a list in a field that takes one value", mk("1", "", `{"type": "clients", "group": "g", "clients": [2, 3], "rate_rps": 5}`, "{}"), "workload.parts[0].clients"},
		{"a list of text", mk("1", "", `{"type": "poisson", "rate_rps": [50, "x"]}`, "{}"), "workload.parts[0].rate_rps"},
		{"an empty list", mk("1", "", `{"type": "poisson", "rate_rps": []}`, "{}"), "workload.parts[0].rate_rps"},
		{"a bad value in a list", mk("1", "", `{"type": "poisson", "rate_rps": [50, -3]}`, "{}"), "workload.parts[0].rate_rps[1]"},
		{"a combination that fails", mk("1", "", `{"type": "constant", "rate_rps": 5, "start_ms": [0, 600], "end_ms": [500, 900]}`, "{}"), "workload.parts[0].end_ms[0]"},
		{"half a worker", mk("1", "", okPart, `{"workers": [1, 2.5]}`), "server.workers[1]"},
		{"a bad service time", mk("1", "", okPart, `{"service_ms": [5, 0, -1]}`), "server.service_ms[2]"},
		{"a list in a server word", mk("1", "", okPart, `{"discipline": ["fifo", "lifo"]}`), "server.discipline"},
		{"too many points", mk("1", "", `{"type": "poisson", "rate_rps": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}`, `{"service_ms": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], "deadline_ms": [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800, 1900, 2000, 2100, 2200, 2300, 2400, 2500, 2600, 2700, 2800, 2900, 3000, 3100, 3200, 3300, 3400, 3500, 3600, 3700, 3800, 3900, 4000, 4100, 4200, 4300, 4400, 4500, 4600, 4700, 4800, 4900, 5000, 5100]}`), "workload.parts[0].rate_rps"},
		{"too many replicated decisions", strings.Replace(mk("1", `"replications": 100,`, `{"type": "constant", "rate_rps": 100000}`, "{}"), `"duration_ms": 1000`, `"duration_ms": 86400000`, 1), "replications"},
		{"too many swept decisions", strings.Replace(mk("1", "", `{"type": "constant", "rate_rps": [100000, 200000, 300000, 400000, 500000, 600000, 700000, 800000, 900000, 1000000]}`, "{}"), `"duration_ms": 1000`, `"duration_ms": 86400000`, 1), "workload.parts[0].rate_rps"},
	}
	// One load of that size is within the budget: the product is what fails.
	if _, err := document.DecodeConfig([]byte(strings.Replace(mk("1", "", `{"type": "constant", "rate_rps": 100000}`, "{}"), `"duration_ms": 1000`, `"duration_ms": 86400000`, 1))); err != nil {
		t.Fatalf("one day at 100000 req/s: %v", err)
	}
	for _, c := range cases {
		_, err := document.DecodeConfig([]byte(c.doc))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		errs := field.Errors(err)
		if !slices.ContainsFunc(errs, func(e field.Error) bool { return e.Path == c.path }) {
			t.Errorf("%s: errors %v, want one at %s", c.name, errs, c.path)
		}
	}
}

// A list of one value is the value itself.
func TestListOfOneIsNoSweep(t *testing.T) {
	a := enginetest.Decode(t, `{"version": 1, "seed": [3], "workload": {"duration_ms": 1000, "parts": [{"type": "poisson", "rate_rps": [50]}]}, "server": {"service_ms": [4]},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 4}]}`)
	b := enginetest.Decode(t, `{"version": 1, "seed": 3, "workload": {"duration_ms": 1000, "parts": [{"type": "poisson", "rate_rps": 50}]}, "server": {"service_ms": 4},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 4}]}`)
	if len(a.Axes()) != 0 || !bytes.Equal(a.JSON(), b.JSON()) {
		t.Errorf("a list of one sweeps:\n%s\n%s", a.JSON(), b.JSON())
	}
}

// A field added to a section's table later sweeps with no other edit: the
// service distributions' settings (server.Numbers).
func TestDistributionSettingsSweep(t *testing.T) {
	cfg := enginetest.Decode(t, `{"version": 1, "seed": 2, "workload": {"duration_ms": 2000, "parts": [{"type": "poisson", "rate_rps": 60}]},
  "server": {"service": "lognormal", "service_ms": 5, "service_p50_ms": 4, "service_p99_ms": [8, 30]},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 5}]}`)
	if a := cfg.Axes(); len(a) != 1 || a[0].Path != "server.service_p99_ms" {
		t.Fatalf("axes %+v", a)
	}
	rows := enginetest.CSVRows(t, enginetest.FileOf(t, enginetest.RunFiles(t, cfg, 2), experiments.FileResults))
	at := slices.Index(rows[0], "server.service_p99_ms")
	if at < 0 || len(rows) != 3 || rows[1][at] != "8.0" || rows[2][at] != "30.0" {
		t.Fatalf("results: %v", rows)
	}
	if rows[1][slices.Index(rows[0], "sojourn_p99_ms")] == rows[2][slices.Index(rows[0], "sojourn_p99_ms")] {
		t.Errorf("the swept p99 changed nothing: %v", rows)
	}
	_, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 2, "workload": {"duration_ms": 2000, "parts": [{"type": "poisson", "rate_rps": 60}]},
  "server": {"service": "lognormal", "service_p50_ms": 4, "service_p99_ms": [8, 3]},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 5}]}`))
	if errs := field.Errors(err); !slices.ContainsFunc(errs, func(e field.Error) bool { return e.Path == "server.service_p99_ms[1]" }) {
		t.Errorf("a p99 below the p50 in a list: %v", errs)
	}
}

// A client behaviour field (a row of workload.Behaviour marked Sweep)
// sweeps: retries [0, 3] runs the client model at both values, and a
// point equals its own config.
func TestBehaviourFieldSweeps(t *testing.T) {
	doc := `{"version": 1, "seed": 4, "workload": {"duration_ms": 3000, "parts": [{"type": "constant", "rate_rps": 150, "backoff_ms": 20, "retries": RETRIES}]},
  "server": {"service_ms": 8}, "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 5}]}`
	cfg := enginetest.Decode(t, strings.Replace(doc, "RETRIES", "[0, 3]", 1))
	if a := cfg.Axes(); len(a) != 1 || a[0].Path != "workload.parts[0].retries" || !a[0].Integer {
		t.Fatalf("axes %+v", a)
	}
	swept := enginetest.CSVRows(t, enginetest.FileOf(t, enginetest.RunFiles(t, cfg, 2), experiments.FileResults))
	for i, r := range []string{"0", "3"} {
		one := enginetest.CSVRows(t, enginetest.FileOf(t, enginetest.RunFiles(t, enginetest.Decode(t, strings.Replace(doc, "RETRIES", r, 1)), 1), experiments.FileResults))
		for _, key := range []string{"arrivals", "goodput_rps", "reject_pct", "sojourn_p99_ms"} {
			a, b := swept[1+i][slices.Index(swept[0], key)], one[1][slices.Index(one[0], key)]
			if a != b {
				t.Errorf("retries %s %s: swept %s, own config %s", r, key, a, b)
			}
		}
	}
}
