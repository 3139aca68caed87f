package output_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
)

func TestAppendValue(t *testing.T) {
	for _, c := range []struct {
		f    experiments.Format
		v    float64
		want string
	}{
		{experiments.Int, 3, "3"},
		{experiments.Int, 0, "0"},
		{experiments.Fixed1, 113.2, "113.2"},
		{experiments.Fixed1, 0.05, "0.1"}, // 0.05 is a hair above 0.05 in binary
		{experiments.Fixed1, 0.25, "0.2"}, // exactly half: round half to even
		{experiments.Fixed1, -0.0, "0.0"}, // never "-0.0"
		{experiments.Fixed1, -0.04, "-0.0"},
		{experiments.Fixed1, 60000, "60000.0"},
		{experiments.Fixed4, 0.12345, "0.1235"},
		{experiments.Fixed4, 1, "1.0000"},
		{experiments.Fixed4, -0.0, "0.0000"},
	} {
		if got := string(experiments.AppendValue(nil, c.f, c.v)); got != c.want {
			t.Errorf("AppendValue(%v, %g) = %q, want %q", c.f, c.v, got, c.want)
		}
	}
}

const doc = `{
  "version": 1,
  "seed": 3,
  "workload": {"duration_ms": 1000, "parts": [
    {"type": "constant", "client": "plain", "group": "g", "rate_rps": 200},
    {"type": "bursts", "client": "with \"quotes\", and commas", "bursts": [{"at_ms": 900, "count": 50}]}
  ]},
  "limiters": [
    {"type": "token-bucket", "name": "tb, quoted \"name\"", "rate_rps": 100, "burst": [5, 10]},
    {"type": "leaky-bucket", "rate_rps": 50, "queue": 30}
  ]
}`

func files(t *testing.T) (*experiments.Result, map[string][]byte, []output.File) {
	t.Helper()
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, f := range fs {
		m[f.Name] = f.Data
		if bytes.Contains(f.Data, []byte("\r")) || !bytes.HasSuffix(f.Data, []byte("\n")) {
			t.Errorf("%s: \\r inside or no final newline", f.Name)
		}
		if strings.HasSuffix(f.Name, ".csv") && bytes.Contains(f.Data, []byte("-0.0")) {
			t.Errorf("%s contains -0.0", f.Name)
		}
	}
	return res, m, fs
}

func parse(t *testing.T, name string, data []byte) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll() // also checks every row has the header's width
	if err != nil {
		t.Fatalf("%s is not valid CSV: %v", name, err)
	}
	return rows
}

func TestResultsCSV(t *testing.T) {
	res, m, _ := files(t)
	rows := parse(t, "results.csv", m["results.csv"])
	var want []string
	for _, c := range experiments.ResultColumns(res.Config) {
		want = append(want, c.Key)
	}
	want = append(want, "share_pct_g")
	if !slices.Equal(rows[0], want) {
		t.Fatalf("header %v, want %v", rows[0], want)
	}
	if len(rows) != 1+len(res.Points) {
		t.Fatalf("%d rows for %d points", len(rows)-1, len(res.Points))
	}
	col := func(key string) int { return slices.Index(rows[0], key) }
	// Labels survive quoting; parameters a limiter lacks are empty cells.
	if rows[1][col("limiter")] != `tb, quoted "name"` || rows[1][col("burst")] != "5" || rows[1][col("queue")] != "" {
		t.Errorf("row 1: limiter %q burst %q queue %q", rows[1][col("limiter")], rows[1][col("burst")], rows[1][col("queue")])
	}
	if rows[3][col("limiter")] != "leaky-bucket" || rows[3][col("queue")] != "30" || rows[3][col("burst")] != "" || rows[3][col("rate_rps")] != "50.0" {
		t.Errorf("row 3: %v", rows[3])
	}
	if rows[1][col("arrivals")] != "250" || rows[1][col("offered_rps")] != "250.0" {
		t.Errorf("arrivals %q offered %q, want 250 and 250.0", rows[1][col("arrivals")], rows[1][col("offered_rps")])
	}
}

// TestSeriesCSVRunsPastTheEnd: a shaper's releases after the arrival
// window extend its series (the leaky bucket's queue of 30 at 50 rps drains
// for 600 ms after the burst at 900 ms); the policer's stop at the window.
func TestSeriesCSVRunsPastTheEnd(t *testing.T) {
	res, m, _ := files(t)
	rows := parse(t, "series.csv", m["series.csv"])
	if !slices.Equal(rows[0], []string{"point", "limiter", "window_start_ms", "offered_rps", "released_rps", "rejected_rps", "in_system_max"}) {
		t.Fatalf("header %v", rows[0])
	}
	windows := map[string]int{}
	for _, r := range rows[1:] {
		windows[r[0]]++
	}
	if windows["0"] != 10 || windows["1"] != 10 {
		t.Errorf("token-bucket points have %d and %d windows, want 10", windows["0"], windows["1"])
	}
	leaky := res.Points[2].Series.Windows()
	if leaky <= 10 || windows["2"] != leaky {
		t.Errorf("leaky bucket: %d windows in the result, %d rows; want more than 10 and equal", leaky, windows["2"])
	}
}

func TestClientsCSVAndManifest(t *testing.T) {
	res, m, fs := files(t)
	rows := parse(t, "clients.csv", m["clients.csv"])
	if len(rows) != 1+len(res.Points)*len(res.Clients) {
		t.Errorf("clients.csv has %d rows, want %d", len(rows)-1, len(res.Points)*len(res.Clients))
	}
	if rows[2][2] != `with "quotes", and commas` {
		t.Errorf("client name came back as %q", rows[2][2])
	}
	if fs[len(fs)-1].Name != "manifest.json" {
		t.Fatalf("last file is %s, want manifest.json", fs[len(fs)-1].Name)
	}
	var man map[string]json.RawMessage
	if err := json.Unmarshal(m["manifest.json"], &man); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range man {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"config", "config_sha256", "engine_version", "go", "outputs", "seed", "source"}) {
		t.Errorf("manifest keys %v", keys)
	}
	// The manifest's config is the normalized document: it decodes to the
	// run's config.
	cfg, err := document.DecodeConfig(man["config"])
	if err != nil {
		t.Fatalf("manifest config does not decode: %v", err)
	}
	if !bytes.Equal(cfg.JSON(), res.Config.JSON()) {
		t.Error("manifest config differs from the run's config")
	}
}
