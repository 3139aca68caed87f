package deploy_test

import (
	"fmt"
	"github.com/ratelab/ratelab/internal/realtools"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// goFormats are the formats whose text is a Go file.
var goFormats = []string{"go-x-time-rate", "go-redis-rate", "go-uber-ratelimit"}

// goUse is what the main package beside the exports does with each one
// (its package imported as p): it calls what the export offers, so that
// the build checks the signatures a caller relies on.
var goUse = map[string]string{
	"go-x-time-rate":    "fmt.Println(p.Admit(p.NewLimiter()))",
	"go-redis-rate":     "fmt.Println(p.Admit(context.Background(), p.NewLimiter(redis.NewClient(&redis.Options{})), \"ratelab\"))\n\tfmt.Println(p.Limit)",
	"go-uber-ratelimit": "fmt.Println(p.Admit(p.NewLimiter()))",
}

func goTool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if bin, err := exec.LookPath("go"); err == nil {
		return bin
	}
	realtools.Missing(t, "no go command")
	return ""
}

// TestGoExportsBuildAndVet writes every Go export as package limits in a
// temporary directory inside this module (so it builds against the
// module's own x/time/rate, redis_rate and go.uber.org/ratelimit), with
// one main package that uses them all, runs go vet on them and checks
// that gofmt leaves them as they are. go vet builds them: it compiles
// every export (the main package imports them all, and vet reads their
// export data) and type-checks the main package, so a compile error or a
// signature the main package cannot call fails it; a separate go build
// would only add the link of a program nobody runs.
func TestGoExportsBuildAndVet(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds packages with the go command")
	}
	gobin := goTool(t)
	// A directory whose name starts with "_" is left out of ./... patterns.
	// It is the same folder every run, so the go command's cache holds
	// what it vetted before (exports unchanged: 3 CPU s instead of 9; a
	// new folder each run was a new package path each run); one another
	// run holds (or a killed run left less than an hour ago) sends this
	// run to a new temporary folder.
	root := "_gosnippets"
	if fi, err := os.Stat(root); err == nil && time.Since(fi.ModTime()) > time.Hour {
		os.RemoveAll(root)
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		if root, err = os.MkdirTemp(".", "_gosnippets"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	var pkgs, imports, calls []string
	n := 0
	for _, format := range goFormats {
		for _, e := range exports(t, format) {
			n++
			name := fmt.Sprintf("e%02d", n)
			dir := filepath.Join(root, name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "limiter.go"), []byte(e.Text), 0o644); err != nil {
				t.Fatal(err)
			}
			pkgs = append(pkgs, "./"+filepath.ToSlash(dir))
			imports = append(imports, fmt.Sprintf("\t%s %q", name, "github.com/ratelab/ratelab/experiments/deploy/"+filepath.ToSlash(dir)))
			calls = append(calls, "\t"+strings.ReplaceAll(goUse[format], "p.", name+"."))
		}
	}
	use := filepath.Join(root, "use")
	if err := os.MkdirAll(use, 0o755); err != nil {
		t.Fatal(err)
	}
	main := "package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\n\t\"github.com/redis/go-redis/v9\"\n\n" +
		strings.Join(imports, "\n") + "\n)\n\nfunc main() {\n" + strings.Join(calls, "\n") + "\n}\n"
	if err := os.WriteFile(filepath.Join(use, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	pkgs = append(pkgs, "./"+filepath.ToSlash(use))
	cmd := exec.Command(gobin, append([]string{"vet"}, pkgs...)...)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go vet: %v\n%s", err, out)
	}
	// gofmt: the text is formatted as gofmt writes it.
	gofmt := filepath.Join(filepath.Dir(gobin), "gofmt")
	os.RemoveAll(use) // the test's own file
	if out, err := exec.Command(gofmt, "-l", root).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("gofmt -l: %v\n%s", err, out)
	}
}
