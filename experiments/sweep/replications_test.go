package sweep_test

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
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
)

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
	for _, doc := range []string{enginetest.SweptDoc, enginetest.ReplicatedDoc, seedListReplicatedDoc} {
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
