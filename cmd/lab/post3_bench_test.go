package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/presets"
)

// BenchmarkPost3Process is the second row as a whole process, at
// a tenth of its size (990 s, 116,000 arrivals × 20 points;
// scripts/bench.sh runs 9,900 s): this test binary as lab (TestMain),
// started anew each time so that its memory is fresh, as a user's lab
// run's is, with the heap on huge pages (the default) and without
// (GODEBUG=disablethp=1). Reported: the process's CPU (user + system) and
// minor page faults per run, beside the wall time.
func BenchmarkPost3Process(b *testing.B) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Workload.DurationMS = 990_000
	doc, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	config := filepath.Join(dir, "post3.json")
	if err := os.WriteFile(config, doc, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, huge := range []bool{true, false} {
		name := "huge-pages"
		if !huge {
			name = "disablethp"
		}
		b.Run(name, func(b *testing.B) {
			var cpu time.Duration
			var faults int64
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "run", "-q", "--config", config, "--out", filepath.Join(dir, "out"))
				cmd.Env = append(os.Environ(), "LAB_TEST_MAIN=1")
				if !huge {
					cmd.Env = append(cmd.Env, "GODEBUG=disablethp=1")
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("lab run: %v: %s", err, out)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					faults += ru.Minflt
				}
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(faults)/float64(b.N), "faults/op")
		})
	}
}
