package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestMain lets the test binary stand in for lab: with LAB_TEST_MAIN=1 it
// runs the command line of its arguments, so tests start real lab
// processes without building the command.
func TestMain(m *testing.M) {
	if os.Getenv("LAB_TEST_MAIN") == "1" {
		if path := os.Getenv(heapWatchEnv); path != "" {
			go watchHeap(path)
		}
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func mustRun(t *testing.T, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("lab %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
}

// readDir maps each file name of dir to its bytes.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
	}
	return files
}

func sameDirs(t *testing.T, got, want string) {
	t.Helper()
	g, w := readDir(t, got), readDir(t, want)
	if len(w) == 0 {
		t.Fatalf("%s is empty", want)
	}
	for name, data := range w {
		if !bytes.Equal(g[name], data) {
			t.Errorf("%s differs from the unsharded run's (%d bytes, want %d)", name, len(g[name]), len(data))
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("merge wrote %s, the unsharded run did not", name)
		}
	}
}

// runShards runs the N shards of a preset and returns their directories.
func runShards(t *testing.T, dir, preset string, n int) []string {
	t.Helper()
	var dirs []string
	for k := range n {
		d := filepath.Join(dir, fmt.Sprintf("shard-%d", k))
		mustRun(t, "run", "-q", "--preset", preset, "--shard", fmt.Sprintf("%d/%d", k, n), "--out", d)
		dirs = append(dirs, d)
	}
	return dirs
}

// Merged shards are the unsharded run, byte for byte, whatever N (more
// shards than points included), for presets with one and many clients,
// the seed lab's presets (reports, decimals rule, queue model, classes), a
// flash crowd's recovery and objectives.
func TestShardsMergeToTheWholeRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		preset string
		n      int
	}{
		{"token-vs-leaky", 4},
		{"slo-load-control", 3},
		{"load-shedding", 4},
		{"admission-control", 2},
		{"heterogeneous", 4},
		{"weighted-tiers", 5},
		{"flash-crowd", 4},
		{"delay-budget", 4},
		{"boundary", 50},
		{"poisson-120", 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%d", c.preset, c.n), func(t *testing.T) {
			dir := t.TempDir()
			whole := filepath.Join(dir, "whole")
			mustRun(t, "run", "-q", "--preset", c.preset, "--out", whole)
			dirs := runShards(t, dir, c.preset, c.n)
			slices.Reverse(dirs) // the order on the command line does not matter
			merged := filepath.Join(dir, "merged")
			mustRun(t, append([]string{"merge", "--out", merged}, dirs...)...)
			sameDirs(t, merged, whole)
		})
	}
}

// Four lab processes run the shards at once (as four machines would), and
// their merge is the single run.
func TestShardProcesses(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const preset, n = "heterogeneous", 4
	whole := filepath.Join(dir, "whole")
	mustRun(t, "run", "-q", "--preset", preset, "--out", whole)
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		dirs[k] = filepath.Join(dir, fmt.Sprintf("shard-%d", k))
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(exe, "run", "-q", "--workers", "1", "--preset", preset, "--shard", fmt.Sprintf("%d/%d", k, n), "--out", dirs[k])
			cmd.Env = append(os.Environ(), "LAB_TEST_MAIN=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[k] = fmt.Errorf("shard %d: %w: %s", k, err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	merged := filepath.Join(dir, "merged")
	mustRun(t, append([]string{"merge", "--out", merged}, dirs...)...)
	sameDirs(t, merged, whole)
}

// The merge refuses shards that are not one whole run, names the fault,
// exits 2 and writes nothing.
func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := runShards(t, filepath.Join(dir, "a"), "heterogeneous", 3)
	b := runShards(t, filepath.Join(dir, "b"), "underloaded", 3)
	four := runShards(t, filepath.Join(dir, "four"), "heterogeneous", 4)

	// edited copies of shard a[2]
	edit := func(name string, change func(m map[string]any)) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, data := range readDir(t, a[2]) {
			if f == shardManifestFile {
				var m map[string]any
				if err := json.Unmarshal(data, &m); err != nil {
					t.Fatal(err)
				}
				change(m)
				var err error
				if data, err = json.Marshal(m); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(d, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	oldEngine := edit("old-engine", func(m map[string]any) { m["engine_version"] = "0.0.1" })
	wrongPoints := edit("wrong-points", func(m map[string]any) { m["points"] = []int{1} })
	tampered := edit("tampered", func(m map[string]any) {
		m["result"].(map[string]any)["sha256"] = strings.Repeat("0", 64)
	})
	unknownKey := edit("unknown-key", func(m map[string]any) { m["extra"] = true })

	cases := []struct {
		name string
		dirs []string
		want string
	}{
		{"missing", a[:2], "missing shard 2 of 3"},
		{"missing two", a[:1], "missing shard 1, 2 of 3"},
		{"duplicate", []string{a[0], a[1], a[2], a[1]}, "shard 1/3 given twice"},
		{"other config", []string{a[0], a[1], b[2]}, "another config"},
		{"other N", []string{a[0], a[1], four[2]}, "one of 4 shards"},
		{"other engine", []string{a[0], a[1], oldEngine}, "engine version 0.0.1"},
		{"points", []string{a[0], a[1], wrongPoints}, "holds points [1]"},
		{"tampered", []string{a[0], a[1], tampered}, "the shard manifest says 0000"},
		{"unknown key", []string{a[0], a[1], unknownKey}, `unknown field "extra"`},
		{"not a shard", []string{a[0], a[1], dir}, "shard.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"merge", "--out", out}, c.dirs...), &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("merge created %s", out)
			}
		})
	}
}

func TestParseShard(t *testing.T) {
	t.Parallel()
	good := map[string]shardSpec{"0/1": {0, 1}, "3/4": {3, 4}, "0/4": {0, 4}}
	for s, want := range good {
		if got, err := parseShard(s); err != nil || got != want {
			t.Errorf("parseShard(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "1", "4/4", "-1/4", "1/0", "a/b", "1/4/5", " 1/4", "1/1000001"} {
		if _, err := parseShard(s); err == nil {
			t.Errorf("parseShard(%q) accepted", s)
		}
	}
}

// Property: the shards of any N cover every point of any sweep exactly
// once, each shard's points increasing, and no shard holds more than one
// point more than another.
func TestShardPointsPartition(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		total, n := r.IntN(300), 1+r.IntN(40)
		seen := make([]int, total)
		lo, hi := total, 0
		for k := range n {
			pts := shardPoints(shardSpec{k, n}, total)
			if !slices.IsSorted(pts) {
				t.Fatalf("total %d, shard %d/%d: %v not increasing", total, k, n, pts)
			}
			for _, i := range pts {
				seen[i]++
			}
			lo, hi = min(lo, len(pts)), max(hi, len(pts))
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("total %d, N %d: point %d in %d shards", total, n, i, c)
			}
		}
		if hi-lo > 1 {
			t.Fatalf("total %d, N %d: shards of %d to %d points", total, n, lo, hi)
		}
	}
}
