// Package realtools finds the real software the tests check models
// against (nginx, HAProxy, javac and Guava, the go command, a Go library
// built into a harness): a test fails
// when it is missing in CI (CI=true) or with RATELAB_E2E=1, as .ci/run
// installs it, and skips elsewhere. Tests only.
package realtools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Required reports whether a test that needs real software must fail
// instead of skipping when it is missing.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("RATELAB_E2E") == "1"
}

// Missing fails or skips a test whose real software is not installed;
// what says which and how to install it.
func Missing(t testing.TB, what string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s (CI=true or RATELAB_E2E=1: this test must run; see .ci/run)", what)
	}
	t.Skipf("%s; set RATELAB_E2E=1 to make this a failure", what)
}

// Server is the path of a server binary Debian installs in /usr/sbin
// (nginx, haproxy), found on PATH or there; else Missing names its
// package.
func Server(t testing.TB, name string) string {
	t.Helper()
	if bin, err := exec.LookPath(name); err == nil {
		return bin
	}
	if _, err := os.Stat("/usr/sbin/" + name); err == nil {
		return "/usr/sbin/" + name
	}
	Missing(t, "no "+name+" binary (apt-get install "+name+")")
	return ""
}

// Module is a Go module version in the module cache, as `go mod download
// -json` names it: the real library a model is checked against.
type Module struct {
	Path, Version      string
	Dir, Sum, GoModSum string
}

// goEnv is the environment of the go commands here: the module's own
// requirements from the proxy, no workspace.
func goEnv() []string { return append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off") }

// goCommand is the go command of the toolchain running the tests.
func goCommand(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		Missing(t, fmt.Sprintf("no go command (%v)", err))
	}
	return filepath.Join(strings.TrimSpace(string(out)), "bin", "go")
}

// Download finds path@version in the module cache, or downloads it from
// the module proxy; Missing when neither has it.
func Download(t testing.TB, pathAtVersion string) Module {
	t.Helper()
	dl := exec.Command(goCommand(t), "mod", "download", "-json", pathAtVersion)
	dl.Dir = t.TempDir()
	dl.Env = goEnv()
	raw, err := dl.Output()
	var m Module
	if jerr := json.Unmarshal(raw, &m); err != nil || jerr != nil || m.Dir == "" {
		Missing(t, fmt.Sprintf("%s is not in the module cache and the module proxy did not give it (%v %s)", pathAtVersion, err, bytes.TrimSpace(raw)))
	}
	return m
}

// CopyTo copies the module's files to dst, writable, to be patched.
func (m Module) CopyTo(t testing.TB, dst string) {
	t.Helper()
	err := filepath.WalkDir(m.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(m.Dir, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", m.Path, err)
	}
}

// BuildHarness builds main (a package main) in a temporary module that
// requires m — replaced by the copy in replaceDir when it is not "" — with
// the build tags given, and returns the binary's path. The module proxy
// unreachable for m's own requirements is Missing. A binary built once is
// kept in harnessCache under the sha256 of everything the build reads
// (the toolchain's go env, go.mod, go.sum, main, the tags and every file
// of replaceDir), so a later run with the same inputs runs the same
// binary without the go command's work (3 to 4 s of CPU a harness: the
// build cache's checks over the library's packages and the link).
func BuildHarness(t testing.TB, m Module, replaceDir string, main []byte, tags ...string) string {
	t.Helper()
	sum, err := os.ReadFile(filepath.Join(m.Dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	sum = fmt.Appendf(sum, "%s %s %s\n%s %s/go.mod %s\n", m.Path, m.Version, m.Sum, m.Path, m.Version, m.GoModSum)
	mod := fmt.Sprintf("module harness\n\ngo 1.22\n\nrequire %s %s\n", m.Path, m.Version)
	if replaceDir != "" {
		mod += fmt.Sprintf("\nreplace %s => %s\n", m.Path, replaceDir)
	}
	args := []string{"build", "-trimpath", "-ldflags=-s -w"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	gocmd := goCommand(t)
	cached := ""
	if dir := harnessCache(); dir != "" {
		// The replacement's folder is a new temporary one each run
		// (-trimpath keeps it out of the binary): its files count, not
		// its name.
		key, err := harnessKey(gocmd, args, strings.ReplaceAll(mod, replaceDir, "REPLACEMENT"), sum, main, replaceDir)
		if err != nil {
			t.Fatalf("the harness of %s: %v", m.Path, err)
		}
		cached = filepath.Join(dir, key)
		if _, err := os.Stat(cached); err == nil {
			now := time.Now()
			os.Chtimes(cached, now, now) // in use: prune keeps it
			return cached
		}
	}
	harness := t.TempDir()
	for name, text := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "main.go": main} {
		if err := os.WriteFile(filepath.Join(harness, name), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(harness, "harness.bin")
	// -trimpath leaves the directories out of the packages' build IDs, so
	// the copy in a new temporary directory each run compiles once and is
	// the build cache's after: only main and the link run again; -s -w
	// leaves out the symbol table and DWARF, most of the link's work, which
	// no harness needs.
	build := exec.Command(gocmd, append(args, "-o", bin, ".")...)
	build.Dir = harness
	build.Env = goEnv()
	if out, err := build.CombinedOutput(); err != nil {
		if bytes.Contains(out, []byte("dial tcp")) || bytes.Contains(out, []byte("no such host")) {
			Missing(t, fmt.Sprintf("the module proxy is unreachable for %s's requirements: %s", m.Path, out))
		}
		t.Fatalf("building the harness of %s: %v\n%s", m.Path, err, out)
	}
	if cached != "" {
		// Kept whole or not at all: written beside, then renamed. A
		// cache that cannot be written only costs the next run a build.
		if err := keep(bin, cached); err != nil {
			t.Logf("the harness of %s is not kept for later runs: %v", m.Path, err)
		}
		prune(filepath.Dir(cached))
	}
	return bin
}

// harnessCache is the folder of the binaries BuildHarness kept:
// $RATELAB_HARNESS_CACHE ("off": none kept, every run builds), else
// ratelab-harness in the user's cache folder (os.UserCacheDir).
func harnessCache() string {
	dir := os.Getenv("RATELAB_HARNESS_CACHE")
	if dir == "off" {
		return ""
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "ratelab-harness")
	}
	if os.MkdirAll(dir, 0o755) != nil {
		return ""
	}
	return dir
}

// harnessEnv are the go command's settings a harness binary depends on
// (go env prints each; not all of go env: GOGCCFLAGS names a new
// temporary folder every time).
var harnessEnv = []string{"GOROOT", "GOVERSION", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GO386", "GOEXPERIMENT",
	"GOFIPS140", "GOFLAGS", "GOPROXY", "GONOSUMDB", "GOPRIVATE", "CGO_ENABLED", "CC", "CGO_CFLAGS", "CGO_LDFLAGS"}

// harnessKey is the sha256 of what a harness build reads: the go
// command's settings (harnessEnv), the build's arguments, go.mod, go.sum,
// main and, when replaceDir is not "", the path and bytes of every file
// under it.
func harnessKey(gocmd string, args []string, mod string, sum, main []byte, replaceDir string) (string, error) {
	env := exec.Command(gocmd, append([]string{"env"}, harnessEnv...)...)
	env.Env = goEnv()
	goenv, err := env.Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	h := sha256.New()
	for _, part := range [][]byte{goenv, []byte(strings.Join(args, "\x00")), []byte(mod), sum, main} {
		fmt.Fprintf(h, "%d\n", len(part))
		h.Write(part)
	}
	if replaceDir != "" {
		err := filepath.WalkDir(replaceDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(replaceDir, path)
			fmt.Fprintf(h, "%s\x00%d\n", filepath.ToSlash(rel), len(data))
			h.Write(data)
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// harnessUnused is how long a kept harness binary stays unused before
// prune removes it (a Gubernator harness is 44 MB; every change of its
// inputs keeps a new one).
const harnessUnused = 14 * 24 * time.Hour

// prune removes the binaries of dir that no run used in harnessUnused,
// and temporary files a killed keep left.
func prune(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > harnessUnused {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// keep copies the binary bin to path: to a temporary file beside it,
// then renamed, so a reader never sees part of it.
func keep(bin, path string) error {
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
