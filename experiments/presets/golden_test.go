package presets_test

import (
	"context"
	"testing"

	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/seedlab"
)

// The seed lab's published sha256 (internal/seedlab, from
// shared/seeds/token-vs-leaky-bucket.txt):
// the external contract, so sha256 that RATELAB_UPDATE=1 cannot rewrite,
// not goldens (the preset's own files are: outputs_test.go).
var publishedSHA256 = map[string]string{
	seedlab.Post3BurstSweepFile: seedlab.Post3BurstSweepSHA256,
	seedlab.Post3ShapingFile:    seedlab.Post3ShapingSHA256,
}

func TestTokenVsLeakyMatchesSeedLab(t *testing.T) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Arrivals != 566 {
		t.Errorf("arrivals = %d, want 566 (the seed lab's demand curve)", res.Arrivals)
	}
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range files {
		want, ok := publishedSHA256[f.Name]
		if !ok {
			continue
		}
		found++
		if got := f.SHA256(); got != want {
			t.Errorf("%s sha256 = %s, want %s\n%s", f.Name, got, want, f.Data)
		}
	}
	if found != len(publishedSHA256) {
		t.Errorf("wrote %d of the %d seed files", found, len(publishedSHA256))
	}
}

func TestEveryPresetDecodesAndRuns(t *testing.T) {
	for _, p := range presets.All() {
		t.Run(p.Name, func(t *testing.T) {
			_, err := presets.Config(p.Name)
			if err != nil {
				t.Fatal(err)
			}
			if p.Summary == "" {
				t.Error("preset has no description")
			}
			if testing.Short() {
				return
			}
			runPreset(t, p.Name)
		})
	}
}
