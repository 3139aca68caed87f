package presets_test

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/internal/enginetest"
	"github.com/ratelab/ratelab/internal/seedlab"
)

// postFiles are the seed lab's files by preset; postSums their sha256 at
// each duration. 5000 ms is the published run (the posts print the sums);
// the others come from the seed lab's own program
// (github.com/salgotraja/production-systems-labs, backpressure-playground,
// with HdrHistogram 2.2.2, run as --duration <N>ms): 1201 and 12345 ms are
// not multiples of 100 ms, and at 60 s the decimal rule shows
// (token-bucket,1,117.2,31.5 where %.1f prints 31.4).
//
// These stay sha256 rather than goldens under testdata/ (where the
// presets' own outputs are, outputs_test.go): they are hashes of the seed
// lab's files, made by the seed lab's program, not by this engine — the
// external contract — and RATELAB_UPDATE=1 must not be able to rewrite
// them.
var postFiles = map[string][]string{
	"admission-control": {"bp-post2-limit-sweep.csv", "bp-post2-plateau.csv"},
	"token-vs-leaky":    {"bp-post3-burst-sweep.csv", "bp-post3-shaping.csv"},
	"load-shedding":     {"bp-post4-shed-sweep.csv", "bp-post4-hangover.csv"},
	"slo-load-control":  {"bp-post5-protection.csv", "bp-post5-slo-burst.csv"},
}

var postSums = map[float64]map[string]string{
	5000: {
		"bp-post2-limit-sweep.csv": "35cc8107e84c0e60b0a7e2cd2d6476ef720e6892f7874583d81cd10864e05493",
		"bp-post2-plateau.csv":     "b0fd5a5518c669cc96a11c01f1026d3797f57e21a507d9927263557d20d3a238",
		"bp-post3-burst-sweep.csv": seedlab.Post3BurstSweepSHA256,
		"bp-post3-shaping.csv":     seedlab.Post3ShapingSHA256,
		"bp-post4-shed-sweep.csv":  "bc2ba213029757e0f7a86fd9b940ad35d7d787184b69d563c22b8ca0029e9609",
		"bp-post4-hangover.csv":    "2a2941d8f543cef2b563fab8ec83af554d4ab8378bc459c01ca89b2c9654d775",
		"bp-post5-protection.csv":  "203c11498ab8bb7c7ed9fdba300e977b5d8864341382af6ec9db495cac108ecc",
		"bp-post5-slo-burst.csv":   "15ae9d057e9bc224882a461eef3a80cdccaa668a13204b0e0f16f92b5cdcd3be",
	},
	1201: {
		"bp-post2-limit-sweep.csv": "7654b7a7bad00e4e443b19aca3d78d5a7c090e84d2c08beddef36ab6dc9f5b49",
		"bp-post2-plateau.csv":     "d122cb8caf611374914735fb5fb917737392a2c2b5f4272521cd01d83db5eed7",
		"bp-post3-burst-sweep.csv": "7d518a04f76ebaf1edff29ef44efdc919fadb23fd4418ad15e7f9580516587fd",
		"bp-post3-shaping.csv":     "0851350c6fc67a9d58844537077bce2ea18d2d48ee92d9aaac424b994b0821a1",
		"bp-post4-shed-sweep.csv":  "e6e5f160f73f4a7d957572e698c64fd47cceeb6bf4700e317bb08363cb45b59f",
		"bp-post4-hangover.csv":    "fb9e82ff3fa5d630d8516f520c332261f279707366fff5d81b5dc9bbd34dd15c",
		"bp-post5-protection.csv":  "3ab9b5ee9a278cf29426a889edc9c369c00f9af47c7e1144b9fe7718788754ff",
		"bp-post5-slo-burst.csv":   "d8cd1051aea0a41652cbfacfc14276b0bcde699d0884ab238304f1d50be0851c",
	},
	12345: {
		"bp-post2-limit-sweep.csv": "bc346f7f3630163070f004d7cdf994d4bc6da32a073e77ab1145014197976e72",
		"bp-post2-plateau.csv":     "63ba4aa57f5745deaf64429c6f29943297a30946c73172bdc10f86450a07bb60",
		"bp-post3-burst-sweep.csv": "c5d01bf9a6c102b7b169294d882022fca22601868c2b98f8f33738137c8b415d",
		"bp-post3-shaping.csv":     "38430a7e0a370c6b837505556359681337eea48652f73a930a06e357898373d7",
		"bp-post4-shed-sweep.csv":  "9cdd63062deeb4f1a85b436e393e8f34be6f3aca52542ab85995cbf9d0ee372b",
		"bp-post4-hangover.csv":    "e67f7c23112dd3d10a4411c4f0670861980047643bdf9e252388526e0a8a1c75",
		"bp-post5-protection.csv":  "de541b0c8e481896e3e1c73779f30f8c070e4902ee086e34fb276ba79e84cf83",
		"bp-post5-slo-burst.csv":   "bf7cba7e2d2655c073fa63a0d71bbaf0c94f03300cc40c666ae01b8a0d359404",
	},
	60000: {
		"bp-post2-limit-sweep.csv": "056243c5a4cd3a86c9515b8dcf1131f2bcdafc65e84c0b3078b75bda0eaccf2a",
		"bp-post2-plateau.csv":     "b1ff201d43e68d96f1f88f4326b426c93cf3d986b319d343d07a2cf9ddacb8d9",
		"bp-post3-burst-sweep.csv": "17d45f3463b92ff1156048ee3cbc1bb57c04a9a12eebccb7bfb0a4f3f371fbbf",
		"bp-post3-shaping.csv":     "2a29b97e1ca6bb35568fa1501659418c197e5e5f9aa509bdc937b531b40d3554",
		"bp-post4-shed-sweep.csv":  "463cf5147e284302c7ebbffb22605914bb48459a3b17a5d07b235fa538c1d28d",
		"bp-post4-hangover.csv":    "d70840fdee333249946f7ad24781f47d528c73685bb5ff3663237735d3793753",
		"bp-post5-protection.csv":  "a881a60094675d0b457c303edff9838ce619af908c029bf8e3336a23a87a4808",
		"bp-post5-slo-burst.csv":   "fa35b7a7987994ef03c4d861054caca4efd8dabbe0a9ad9d61cbc89464e30df3",
	},
}

// runPostPreset runs a preset at durationMS (0: as stored), once per test
// binary, and returns its result and files by name.
func runPostPreset(t *testing.T, name string, durationMS float64) (*experiments.Result, map[string][]byte) {
	t.Helper()
	return enginetest.PresetFiles(t, name, durationMS)
}

func TestPostPresetsMatchTheSeedLab(t *testing.T) {
	for _, d := range []float64{5000, 1201, 12345, 60000} {
		for name, files := range postFiles {
			t.Run(fmt.Sprintf("%s/%gms", name, d), func(t *testing.T) {
				if d == 60000 && testing.Short() {
					t.Skip("short")
				}
				_, out := runPostPreset(t, name, d)
				for _, f := range files {
					data, ok := out[f]
					if !ok {
						t.Fatalf("no %s", f)
					}
					got := output.File{Name: f, Data: data}.SHA256()
					if want := postSums[d][f]; got != want {
						t.Errorf("%s at %g ms: sha256 %s, want %s\n%s", f, d, got, want, data)
					}
				}
			})
		}
	}
}

// The three examples of the seed lab's rules, in the bytes.
func TestPostRulesInTheFiles(t *testing.T) {
	_, out := runPostPreset(t, "token-vs-leaky", 60000)
	if line := strings.Split(string(out["bp-post3-burst-sweep.csv"]), "\n")[1]; !strings.HasPrefix(line, "token-bucket,1,117.2,31.5,") {
		t.Errorf("burst sweep at 60 s: %s, want token-bucket,1,117.2,31.5,... (shortest form 31.45 half up)", line)
	}
	for _, d := range []float64{1201, 12345, 99, 100} {
		_, out := runPostPreset(t, "token-vs-leaky", d)
		rows := strings.Count(string(out["bp-post3-shaping.csv"]), "\n") - 1
		if want := int(d / 100); rows != want {
			t.Errorf("shaping at %g ms: %d rows, want floor(%g/100) = %d", d, rows, d, want)
		}
	}
	_, out = runPostPreset(t, "admission-control", 0)
	if !bytes.Contains(out["bp-post2-plateau.csv"], []byte("no-control,300.2,5.8,0.0,9911.0\n")) {
		t.Errorf("plateau: no-control at 300 rps should read p99 9911 (9910's bucket top)\n%s", out["bp-post2-plateau.csv"])
	}
}

// rows parses a CSV of the lab (no quoting) into header and rows.
func rows(t *testing.T, data []byte) (map[string]int, [][]string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	head := map[string]int{}
	for i, h := range strings.Split(lines[0], ",") {
		head[h] = i
	}
	var out [][]string
	for _, l := range lines[1:] {
		out = append(out, strings.Split(l, ","))
	}
	return head, out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}
