package presets_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/presets"
)

// The heavy-tail preset's description states its measured numbers: each
// mean and 95% interval is a cell of its results.csv, and every point says
// there is no bound (lognormal service has no maximum).
func TestHeavyTailSaysWhatItMeasures(t *testing.T) {
	_, out := runPostPreset(t, "heavy-tail", 0)
	recs, err := csv.NewReader(bytes.NewReader(out["results.csv"])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	p, err := presets.Get("heavy-tail")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := presets.Config("heavy-tail")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Replications != 20 {
		t.Fatalf("replications %d, want 20", cfg.Replications)
	}
	desc := string(p.JSON)
	for _, c := range []struct{ row, goodput, ci, p99 string }{
		{"none", "47.9", "4.2", "553.5"},
		{"60.0", "56.5", "0.9", "342.6"},
		{"70.0", "53.7", "2.6", "453.9"},
		{"4", "57.6", "0.4", "153.8"},
		{"8", "63.1", "0.6", "229.2"},
		{"16", "61.7", "1.0", "356.7"},
	} {
		var row []string
		for _, r := range recs[1:] {
			if r[col["limiter"]] == c.row || r[col["rate_rps"]] == c.row || r[col["limit"]] == c.row {
				row = r
			}
		}
		if row == nil {
			t.Fatalf("no row %s", c.row)
		}
		for k, want := range map[string]string{"goodput_rps": c.goodput, "goodput_rps_ci95": c.ci, "sojourn_p99_ms": c.p99} {
			if got := row[col[k]]; got != want {
				t.Errorf("%s %s = %s, the description says %s", c.row, k, got, want)
			}
		}
		if s := c.goodput + " ± " + c.ci; !strings.Contains(desc, s) || !strings.Contains(desc, "p99 "+c.p99+" ms") {
			t.Errorf("the description does not say %q with p99 %s ms", s, c.p99)
		}
		if got := row[col["bound_note"]]; got != experiments.NoServiceBound {
			t.Errorf("%s bound_note %q, want %q", c.row, got, experiments.NoServiceBound)
		}
	}
	if mean := cfg.Server.ServiceMS; mean < 13.05 || mean > 13.06 || !strings.Contains(desc, "mean 13.1 ms") || !strings.Contains(desc, "76.6 requests/s") {
		t.Errorf("mean service %g ms: the description's mean and capacity do not match", mean)
	}
}
