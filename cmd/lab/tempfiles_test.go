package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A run over a trace file leaves no temp file behind (its spill, --sort's
// chunks), writes the same bytes with the spill and without, and removes
// the temp entries a killed lab left (its process gone), not a running
// one's.
func TestRunTraceTempFiles(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o755)
	t.Setenv("TMPDIR", tmp)

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no process to outlive:", err)
	}
	old := time.Now().Add(-time.Hour)
	stale := filepath.Join(tmp, tempPrefix+strconv.Itoa(dead.Process.Pid)+"-spill-123")
	live := filepath.Join(tmp, tempPrefix+strconv.Itoa(os.Getppid())+"-sort-456")
	other := filepath.Join(tmp, "someone-else")
	for _, p := range []string{stale, live, other} {
		os.Mkdir(p, 0o755)
		os.WriteFile(filepath.Join(p, "chunk"), []byte("x"), 0o644)
		os.Chtimes(p, old, old)
	}

	text := traceText(2000, 3)
	gz := writeTemp(t, dir, "day.csv.gz", gzipped(t, text))
	cfg := writeTemp(t, dir, "sweep.json", []byte(strings.Replace(traceSweep, "%s", `{"type":"constant","rate_rps":1}`, 1)))
	mustRun(t, "run", "-q", "--config", cfg, "--trace", gz, "--out", filepath.Join(dir, "spill"))
	mustRun(t, "run", "-q", "--config", cfg, "--trace", gz, "--spill=false", "--out", filepath.Join(dir, "text"))
	mustRun(t, "run", "-q", "--config", cfg, "--trace", gz, "--sort", "--out", filepath.Join(dir, "sorted"))
	sameDirs(t, filepath.Join(dir, "spill"), filepath.Join(dir, "text"))
	sorted, plain := readDir(t, filepath.Join(dir, "sorted")), readDir(t, filepath.Join(dir, "text"))
	if !bytes.Equal(sorted["results.csv"], plain["results.csv"]) { // the manifest names the sorted text
		t.Errorf("--sort wrote other results")
	}

	entries, _ := os.ReadDir(tmp)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{filepath.Base(live), "someone-else"}
	if strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("temp dir holds %v, want %v (the stale entry removed, the run's own gone)", left, want)
	}
}
