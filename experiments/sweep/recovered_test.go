package sweep_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// A replicated point's recovered cell counts its runs: "yes" when every
// run recovered after the trigger, "no" when none did, "k of N" when some
// did (recovery_ms is then the mean of those k, so a bare "yes" beside it
// would say a mostly metastable point recovered).
func TestReplicatedRecoveredCountsRuns(t *testing.T) {
	cfg, err := presets.Config("metastable")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(cfg.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	const reps = 4
	doc["replications"] = reps
	data, _ := json.Marshal(doc)
	files := enginetest.RunFiles(t, enginetest.Decode(t, string(data)), 2)
	results := enginetest.CSVRows(t, enginetest.FileOf(t, files, experiments.FileResults))
	per := enginetest.CSVRows(t, enginetest.FileOf(t, files, experiments.FileReplications))
	rc, pc := slices.Index(results[0], "recovered"), slices.Index(per[0], "recovered")
	if rc < 0 || pc < 0 {
		t.Fatalf("no recovered column: %v", results[0])
	}
	some := false
	for i, row := range results[1:] {
		k := 0
		for r := range reps {
			switch cell := per[1+i*reps+r][pc]; cell {
			case "yes":
				k++
			case "no":
			default:
				t.Fatalf("point %d run %d: recovered %q", i, r, cell)
			}
		}
		want := fmt.Sprintf("%d of %d", k, reps)
		switch k {
		case 0:
			want = "no"
		case reps:
			want = "yes"
		default:
			some = true
		}
		if row[rc] != want {
			t.Errorf("point %d: recovered %q, its runs say %s", i, row[rc], want)
		}
	}
	if !some {
		t.Error("every point's runs agree: the test shows nothing")
	}
}
