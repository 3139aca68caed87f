package experiments_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// sweptDoc sweeps a workload rate, the service time and the seed beside a
// limiter parameter.
const sweptDoc = `{
  "version": 1,
  "seed": [7, 8],
  "workload": {"duration_ms": 2000, "parts": [
    {"type": "poisson", "rate_rps": [60, 120]},
    {"type": "flash-crowd", "group": "crowd", "clients": 3, "base_rps": 5, "multiplier": [2, 4], "start_ms": 500, "duration_ms": 300}
  ]},
  "server": {"workers": 1, "service_ms": [5, 10]},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": [5, 20]}]
}`

func TestSweptFieldsAxesAndColumns(t *testing.T) {
	cfg := enginetest.Decode(t, sweptDoc)
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
	cfg := enginetest.Decode(t, sweptDoc)
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
	cfg := enginetest.Decode(t, sweptDoc)
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

// seedListReplicatedDoc lists seeds with replications: seed 10 runs
// seeds 10, 11, 12 and seed 20 runs 20, 21, 22.
const seedListReplicatedDoc = `{
  "version": 1,
  "seed": [10, 20],
  "replications": 3,
  "workload": {"duration_ms": 2000, "parts": [{"type": "poisson", "rate_rps": [80, 140]}]},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": [2, 10]}]
}`

// The same config gives the same bytes at every worker count, with swept
// fields and replications.
func TestSweepsAndReplicationsSameBytesAnyWorkers(t *testing.T) {
	for _, doc := range []string{sweptDoc, enginetest.ReplicatedDoc, seedListReplicatedDoc} {
		cfg := enginetest.Decode(t, doc)
		base := enginetest.RunFiles(t, cfg, 1)
		for _, w := range []int{2, 3, 4, 8} {
			for i, f := range enginetest.RunFiles(t, cfg, w) {
				if f.Name != base[i].Name || !bytes.Equal(f.Data, base[i].Data) {
					t.Fatalf("%d workers: %s differs", w, f.Name)
				}
			}
		}
	}
}

// Property: in every replicated run, each mean of results.csv is the mean
// of the per-seed rows of replications.csv, and each half-width is
// t(0.975, n-1)·s/√n of them; each run equals the unreplicated config at
// its seed.
func TestReplicationMeansArePerSeedMeans(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 6 {
		reps := 2 + rng.IntN(6)
		seed := rng.Uint64N(1 << 40)
		rate := 50 + rng.IntN(150)
		doc := fmt.Sprintf(`{"version": 1, "seed": %d, "replications": %d,
  "workload": {"duration_ms": 2000, "parts": [{"type": "poisson", "rate_rps": %d}, {"type": "clients", "group": "g", "clients": 3, "rate_rps": 10, "arrival": "poisson"}]},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": [1, 8]}]}`, seed, reps, rate)
		cfg := enginetest.Decode(t, doc)
		files := enginetest.RunFiles(t, cfg, 1+trial%3)
		results := enginetest.CSVRows(t, enginetest.FileOf(t, files, experiments.FileResults))
		per := enginetest.CSVRows(t, enginetest.FileOf(t, files, experiments.FileReplications))
		if len(per) != 1+2*reps || len(results) != 3 {
			t.Fatalf("trial %d: %d replication rows, %d results rows", trial, len(per), len(results))
		}
		rh, ph := results[0], per[0]
		if got := per[2][slices.Index(ph, "seed")]; got != strconv.FormatUint(seed+1, 10) {
			t.Fatalf("second run's seed %s, want %d", got, seed+1)
		}
		for ci, key := range rh {
			if !slices.Contains(rh, key+"_ci95") {
				continue
			}
			pi := slices.Index(ph, key)
			for pt := range 2 {
				var xs []float64
				for r := range reps {
					cell := per[1+pt*reps+r][pi]
					if cell == "" {
						continue
					}
					v, _ := strconv.ParseFloat(cell, 64)
					xs = append(xs, v)
				}
				want := metrics.MeanCI(xs)
				mean, _ := strconv.ParseFloat(results[1+pt][ci], 64)
				hw, _ := strconv.ParseFloat(results[1+pt][ci+1], 64)
				// per-seed cells are printed rounded: compare within their rounding.
				tol := 0.051
				if strings.HasPrefix(key, "jain") {
					tol = 0.00051
				}
				if math.Abs(mean-want.Mean) > 2*tol || (len(xs) > 1 && math.Abs(hw-want.HalfWidth) > 2*tol*(1+metrics.T95(len(xs)-1))) {
					t.Errorf("trial %d point %d %s: mean %v ± %v, per-seed rows give %v ± %v", trial, pt, key, mean, hw, want.Mean, want.HalfWidth)
				}
			}
		}
		// Run r equals the unreplicated config at seed+r.
		r := rng.IntN(reps)
		single := strings.Replace(strings.Replace(doc, fmt.Sprintf(`"replications": %d,`, reps), "", 1), fmt.Sprintf(`"seed": %d`, seed), fmt.Sprintf(`"seed": %d`, seed+uint64(r)), 1)
		one := enginetest.CSVRows(t, enginetest.FileOf(t, enginetest.RunFiles(t, enginetest.Decode(t, single), 1), experiments.FileResults))
		oh := one[0]
		for _, key := range []string{"arrivals", "goodput_rps", "sojourn_p99_ms", "jain_index"} {
			if a, b := one[1][slices.Index(oh, key)], per[1+r][slices.Index(ph, key)]; a != b {
				t.Errorf("trial %d run %d %s: %s, unreplicated config %s", trial, r, key, b, a)
			}
		}
	}
}

// A seed list with replications: every listed seed s runs s … s+N-1; its
// results.csv row (seed column s, the _ci95 columns) is the row of the
// same config with the one seed s, and replications.csv has a row per run
// with the run's seed (and no second seed column).
func TestSeedListWithReplications(t *testing.T) {
	cfg := enginetest.Decode(t, seedListReplicatedDoc)
	files := enginetest.RunFiles(t, cfg, 2)
	results := enginetest.CSVRows(t, enginetest.FileOf(t, files, experiments.FileResults))
	per := enginetest.CSVRows(t, enginetest.FileOf(t, files, experiments.FileReplications))
	rh, ph := results[0], per[0]
	si := slices.Index(rh, "seed")
	if si < 0 || !slices.Contains(rh, "goodput_rps_ci95") {
		t.Fatalf("results.csv header %v", rh)
	}
	// 2 bursts × 2 rates × 2 seeds points, 3 runs each.
	if len(results) != 1+8 || len(per) != 1+8*3 {
		t.Fatalf("%d results rows, %d replication rows", len(results), len(per))
	}
	if n := strings.Count(strings.Join(ph, ","), "seed"); n != 1 {
		t.Errorf("replications.csv header %v names seed %d times", ph, n)
	}
	psi, pri := slices.Index(ph, "seed"), slices.Index(ph, "replica")
	for i, row := range per[1:] {
		listed := []uint64{10, 20}[(i/3)%2]
		want := strconv.FormatUint(listed+uint64(i%3), 10)
		if row[psi] != want || row[pri] != strconv.Itoa(i%3) {
			t.Errorf("replication row %d: seed %s replica %s, want %s %d", i, row[psi], row[pri], want, i%3)
		}
	}
	for _, seed := range []string{"10", "20"} {
		one := strings.Replace(seedListReplicatedDoc, `"seed": [10, 20]`, `"seed": `+seed, 1)
		single := enginetest.CSVRows(t, enginetest.FileOf(t, enginetest.RunFiles(t, enginetest.Decode(t, one), 1), experiments.FileResults))
		sh := single[0]
		var got [][]string
		for _, row := range results[1:] {
			if row[si] == seed {
				got = append(got, slices.Delete(slices.Clone(row), si, si+1))
			}
		}
		if len(got) != len(single)-1 || !slices.Equal(slices.Delete(slices.Clone(rh), si, si+1), sh) {
			t.Fatalf("seed %s: %d rows, header %v vs %v", seed, len(got), rh, sh)
		}
		for k := range got {
			if !slices.Equal(got[k][1:], single[1+k][1:]) { // all but the point index
				t.Errorf("seed %s row %d:\n%v\nthe config with seed %s alone:\n%v", seed, k, got[k], seed, single[1+k])
			}
		}
	}
}

// Property: exactly (bit for bit), each point's Stats are the mean and
// interval of its runs' values of the column.
func TestReplicationStatsAreExact(t *testing.T) {
	cfg := enginetest.Decode(t, enginetest.ReplicatedDoc)
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	reps := cfg.Replicas()
	if len(res.Replicas) != len(res.Points)*reps {
		t.Fatalf("%d runs of %d points", len(res.Replicas), len(res.Points))
	}
	cols := experiments.StatColumns(cfg, res.Groups)
	for i := range res.Points {
		p := &res.Points[i]
		for _, c := range cols {
			var xs []float64
			for r := range reps {
				if v, ok := c.Value(&res.Replicas[i*reps+r]); ok {
					xs = append(xs, v)
				}
			}
			want := metrics.MeanCI(xs)
			st, ok := p.Stat(c.Key)
			if !ok || st.Mean != want.Mean || st.N != want.N || (want.N > 1 && st.HalfWidth != want.HalfWidth) {
				t.Fatalf("point %d %s: %+v, want %+v", i, c.Key, st, want)
			}
			if v, ok := c.Value(p); want.N > 0 && (!ok || v != want.Mean) {
				t.Fatalf("point %d %s: column value %v, want the mean %v", i, c.Key, v, want.Mean)
			}
		}
	}
}

// Without replications and lists nothing new is written (see also the
// presets' byte identity).
func TestNoReplicationsNoNewFile(t *testing.T) {
	cfg := enginetest.Decode(t, `{"version": 1, "seed": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "poisson", "rate_rps": 50}]},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 4}]}`)
	for _, f := range enginetest.RunFiles(t, cfg, 1) {
		if f.Name == experiments.FileReplications {
			t.Error("replications.csv without replications")
		}
		if f.Name == experiments.FileResults && bytes.Contains(f.Data, []byte("_ci95")) {
			t.Error("confidence columns without replications")
		}
	}
	if bytes.Contains(cfg.JSON(), []byte("replications")) {
		t.Error("the document names replications")
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

// The client model's columns (attempts, amplification, ...) are
// measurements like the others: with replications results.csv gives the
// runs' mean with its interval, not the first run's value.
func TestReplicatedClientColumnsAreMeans(t *testing.T) {
	const reps = 4
	doc := fmt.Sprintf(`{"version": 1, "seed": 3, "replications": %d,
  "workload": {"duration_ms": 2000, "parts": [{"type": "poisson", "rate_rps": 150, "timeout_ms": 50, "retries": 2, "backoff_ms": 20, "jitter": "full"}]},
  "server": {"workers": 1, "service_ms": 8},
  "limiters": [{"type": "token-bucket", "rate_rps": 120, "burst": 5}]}`, reps)
	files := enginetest.RunFiles(t, enginetest.Decode(t, doc), 1)
	results := enginetest.CSVRows(t, enginetest.FileOf(t, files, experiments.FileResults))
	per := enginetest.CSVRows(t, enginetest.FileOf(t, files, experiments.FileReplications))
	rh, ph := results[0], per[0]
	differ := 0
	for _, key := range []string{"attempts", "retries", "attempts_rps", "amplification", "retry_share_pct", "success_pct", "abandoned", "wasted_work_ms", "queue_depth_mean"} {
		ci := slices.Index(rh, key)
		if ci < 0 || ci+1 >= len(rh) || rh[ci+1] != key+"_ci95" {
			t.Errorf("results.csv: %s has no %s_ci95 beside it (header %v)", key, key, rh)
			continue
		}
		var xs []float64
		for r := range reps {
			v, _ := strconv.ParseFloat(per[1+r][slices.Index(ph, key)], 64)
			xs = append(xs, v)
		}
		want := metrics.MeanCI(xs)
		mean, _ := strconv.ParseFloat(results[1][ci], 64)
		if math.Abs(mean-want.Mean) > 0.0051*max(1, math.Abs(want.Mean)) {
			t.Errorf("%s: results.csv %v, the runs' mean %v (%v)", key, mean, want.Mean, xs)
		}
		if xs[0] != want.Mean {
			differ++
		}
	}
	if differ == 0 {
		t.Error("every run measured the same: the test shows nothing")
	}
}
