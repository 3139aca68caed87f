package deploy_test

import (
	"fmt"
	"github.com/ratelab/ratelab/internal/realtools"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// guavaJar is Debian's libguava-java jar, or RATELAB_GUAVA_JAR.
func guavaJar() string {
	if j := os.Getenv("RATELAB_GUAVA_JAR"); j != "" {
		return j
	}
	return "/usr/share/java/guava.jar"
}

// quickJVM are the JVM options of the test's javac and java: the client
// compiler only, one compiler thread and the serial collector. Both runs
// are short, so the optimizing compiler's and the parallel collector's
// threads would cost more CPU than they save (about 40% of the test's
// CPU, measured); what javac accepts and what the class does is the same.
func quickJVM() []string {
	return []string{"-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1", "-XX:+UseSerialGC"}
}

// TestGuavaExportsCompileAndRun compiles every Guava export with javac
// against Guava's jar and runs it once: the class loads, the RateLimiter
// takes its arguments, and the first request passes. So that one javac
// and one JVM do it all, each export goes in a package of its own (a
// package line before the text) and one Main calls them all.
func TestGuavaExportsCompileAndRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs javac and java")
	}
	javac, err1 := exec.LookPath("javac")
	java, err2 := exec.LookPath("java")
	if err1 != nil || err2 != nil {
		realtools.Missing(t, "no java/javac on PATH (apt-get install default-jdk-headless)")
	}
	jar := guavaJar()
	if _, err := os.Stat(jar); err != nil {
		realtools.Missing(t, fmt.Sprintf("no Guava jar at %s (apt-get install libguava-java)", jar))
	}
	dir := t.TempDir()
	srcs := []string{filepath.Join(dir, "Main.java")}
	var main strings.Builder
	main.WriteString("public class Main {\n    public static void main(String[] args) {\n")
	es := exports(t, "guava")
	for i, e := range es {
		pkg := fmt.Sprintf("p%02d", i)
		if err := os.MkdirAll(filepath.Join(dir, pkg), 0o755); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(dir, pkg, e.Format.File)
		if err := os.WriteFile(src, []byte("package "+pkg+";\n"+e.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, src)
		fmt.Fprintf(&main, "        System.out.println(new %s.RatelabLimiter().admit());\n", pkg)
	}
	main.WriteString("    }\n}\n")
	if err := os.WriteFile(srcs[0], []byte(main.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, o := range quickJVM() {
		args = append(args, "-J"+o)
	}
	args = append(args, "-Xlint:all", "-Werror", "-cp", jar, "-d", filepath.Join(dir, "classes"))
	args = append(args, srcs...)
	if out, err := exec.Command(javac, args...).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	out, err := exec.Command(java, append(quickJVM(), "-cp", jar+string(os.PathListSeparator)+filepath.Join(dir, "classes"), "Main")...).CombinedOutput()
	if err != nil {
		t.Fatalf("java: %v\n%s", err, out)
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(es) {
		t.Fatalf("java printed %d answers for %d exports:\n%s", len(lines), len(es), out)
	}
	for i, l := range lines {
		if l != "true" {
			t.Errorf("export %d %s: the first request got %s", i, label(es[i]), l)
		}
	}
}
