package presets_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/internal/golden"
)

// outputsDir holds every preset's outputs, one folder a preset, as the
// files themselves: results.csv, series.csv (whole), clients.csv and
// replications.csv when the preset writes them, its reports (bp-post*.csv),
// config.json, the preset's canonical document (Config.JSON of the
// normalized config), and source.json, the preset's document as written
// (experiments/presets/NAME.json). manifest.json is left out: it names the
// toolchain.
// ENGINE_VERSION is experiments.EngineVersion as the files were written.
// testdata/outputs/README.md says the same for a reader of the folder.
const outputsDir = "testdata/outputs"

// configFile is the preset's canonical document among its outputs, and
// sourceFile the preset's document as written: only a change of the
// source explains a change of the outputs at one EngineVersion (a change
// of config.json alone is a change of the engine's normalizing).
const (
	configFile = "config.json"
	sourceFile = "source.json"
)

var engineVersionFile = filepath.Join(outputsDir, "ENGINE_VERSION")

// TestPresetOutputs runs every preset and compares each of its files with
// its golden byte for byte (a unified diff of the first differing lines
// on failure). RATELAB_UPDATE=1 rewrites them, and the folders of presets
// that are gone, under one rule: a preset's outputs may change only with
// its source.json or with a new experiments.EngineVersion (outputsChange).
// Without RATELAB_UPDATE=1, an EngineVersion other than ENGINE_VERSION
// fails: the goldens must be regenerated at the new version.
func TestPresetOutputs(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(engineVersionFile)
	if err != nil && !(golden.Updating() && errors.Is(err, fs.ErrNotExist)) {
		t.Fatalf("%v: %s", err, golden.Regenerate)
	}
	stored := strings.TrimSpace(string(data))
	if !golden.Updating() && stored != experiments.EngineVersion {
		t.Fatalf("experiments.EngineVersion is %s but the goldens in %s were written at %s: regenerate them with RATELAB_UPDATE=1 go test ./experiments/presets/ and review git diff", experiments.EngineVersion, outputsDir, stored)
	}

	all := presets.All()
	entries, err := os.ReadDir(outputsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || slices.ContainsFunc(all, func(p presets.Preset) bool { return p.Name == e.Name() }) {
			continue
		}
		dir := filepath.Join(outputsDir, e.Name())
		if !golden.Updating() {
			t.Errorf("%s: there is no preset %s: %s", dir, e.Name(), golden.Regenerate)
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		t.Logf("golden: removed %s (no such preset)", dir)
	}

	t.Run("preset", func(t *testing.T) {
		for _, p := range all {
			t.Run(p.Name, func(t *testing.T) {
				t.Parallel()
				checkPresetOutputs(t, p.Name, stored)
			})
		}
	})
	if golden.Updating() && !t.Failed() {
		golden.Check(t, engineVersionFile, []byte(experiments.EngineVersion+"\n"))
	}
}

// checkPresetOutputs runs preset name and checks its files against
// outputsDir/name; storedVersion is ENGINE_VERSION.
func checkPresetOutputs(t *testing.T, name, storedVersion string) {
	cfg, err := presets.Config(name)
	if err != nil {
		t.Fatal(err)
	}
	res, files := runPostPreset(t, name, 0)
	checkBoundsOrNote(t, name, res)
	delete(files, experiments.FileManifest)
	files[configFile] = cfg.JSON()
	p, err := presets.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	files[sourceFile] = p.JSON

	dir := filepath.Join(outputsDir, name)
	old := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		old[e.Name()] = data
	}

	if golden.Updating() {
		if err := outputsChange(name, old, files, storedVersion, experiments.EngineVersion); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(old)) {
		if _, ok := files[n]; ok {
			continue
		}
		path := filepath.Join(dir, n)
		if !golden.Updating() {
			t.Errorf("golden %s: the preset no longer writes %s; %s", path, n, golden.Regenerate)
			continue
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		t.Logf("golden: removed %s (the preset no longer writes it)", path)
	}
	for _, n := range slices.Sorted(maps.Keys(files)) {
		golden.Check(t, filepath.Join(dir, n), files[n])
	}
}

// outputsChange says whether a preset's files may go from old to new (by
// name, source.json and config.json among them) when the goldens were
// written at storedVersion and the engine is engineVersion: always when
// the versions differ (the bump says the numbers moved) or when
// source.json, the preset as written, changed (or is new: a new preset),
// else only when every other file, config.json included, is unchanged:
// an engine change that moves the normalized document (a new default)
// moves the numbers of a run read back from an old manifest too.
func outputsChange(preset string, old, new map[string][]byte, storedVersion, engineVersion string) error {
	if storedVersion != engineVersion {
		return nil
	}
	if before, ok := old[sourceFile]; !ok || !bytes.Equal(before, new[sourceFile]) {
		return nil
	}
	var changed []string
	for n, data := range new {
		if before, ok := old[n]; !ok || !bytes.Equal(before, data) {
			changed = append(changed, n)
		}
	}
	for n := range old {
		if _, ok := new[n]; !ok {
			changed = append(changed, n)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	return fmt.Errorf("outputs of %s changed without an EngineVersion bump: bump experiments.EngineVersion (now %s) or revert (changed: %s)", preset, engineVersion, strings.Join(changed, ", "))
}

func TestOutputsChange(t *testing.T) {
	t.Parallel()
	files := func(kv ...string) map[string][]byte {
		m := map[string][]byte{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = []byte(kv[i+1])
		}
		return m
	}
	const refused = "outputs of p changed without an EngineVersion bump: bump experiments.EngineVersion (now 1.0.3) or revert"
	for _, tc := range []struct {
		name     string
		old, new map[string][]byte
		stored   string
		err      string // "" allowed, else the message's start
	}{
		{"unchanged", files("source.json", "s", "config.json", "c", "results.csv", "r"), files("source.json", "s", "config.json", "c", "results.csv", "r"), "1.0.3", ""},
		{"output changed", files("source.json", "s", "config.json", "c", "results.csv", "r"), files("source.json", "s", "config.json", "c", "results.csv", "r2"), "1.0.3", refused + " (changed: results.csv)"},
		{"output changed with a bump", files("source.json", "s", "config.json", "c", "results.csv", "r"), files("source.json", "s", "config.json", "c", "results.csv", "r2"), "1.0.2", ""},
		{"output changed with its source", files("source.json", "s", "config.json", "c", "results.csv", "r"), files("source.json", "s2", "config.json", "c2", "results.csv", "r2"), "1.0.3", ""},
		{"normalized config changed alone", files("source.json", "s", "config.json", "c", "results.csv", "r"), files("source.json", "s", "config.json", "c2", "results.csv", "r2"), "1.0.3", refused + " (changed: config.json, results.csv)"},
		{"file added", files("source.json", "s", "config.json", "c", "results.csv", "r"), files("source.json", "s", "config.json", "c", "results.csv", "r", "clients.csv", "x"), "1.0.3", refused + " (changed: clients.csv)"},
		{"file gone", files("source.json", "s", "config.json", "c", "results.csv", "r", "clients.csv", "x"), files("source.json", "s", "config.json", "c", "results.csv", "r"), "1.0.3", refused + " (changed: clients.csv)"},
		{"several", files("source.json", "s", "config.json", "c", "results.csv", "r", "series.csv", "s"), files("source.json", "s", "config.json", "c", "results.csv", "r2", "series.csv", "s2"), "1.0.3", refused + " (changed: results.csv, series.csv)"},
		{"new preset", files(), files("source.json", "s", "config.json", "c", "results.csv", "r"), "1.0.3", ""},
		{"no stored source", files("config.json", "c", "results.csv", "r"), files("source.json", "s", "config.json", "c", "results.csv", "r2"), "1.0.3", ""},
		{"first goldens", files(), files("source.json", "s", "config.json", "c"), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := outputsChange("p", tc.old, tc.new, tc.stored, "1.0.3")
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Errorf("error %v, want %s", err, tc.err)
			}
		})
	}
}

// checkBoundsOrNote: every point of a preset has its network-calculus
// bounds or a note saying why it has none (bound_note in results.csv):
// no point's bound columns are empty without a word.
func checkBoundsOrNote(t *testing.T, preset string, res *experiments.Result) {
	t.Helper()
	for i := range res.Points {
		pt := &res.Points[i]
		switch {
		case pt.Bounds == nil:
			t.Errorf("%s point %d (%s, server %q): no bounds and no note", preset, pt.Index, pt.Limiter, pt.ServerName)
		case !pt.Bounds.Bounded && pt.Bounds.Note == "":
			t.Errorf("%s point %d (%s, server %q): unbounded without a note", preset, pt.Index, pt.Limiter, pt.ServerName)
		case pt.Bounds.Bounded && !(pt.Bounds.SojournBoundMS > 0):
			t.Errorf("%s point %d (%s, server %q): bounded with a sojourn bound of %g", preset, pt.Index, pt.Limiter, pt.ServerName, pt.Bounds.SojournBoundMS)
		}
	}
}
