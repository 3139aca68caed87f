package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB that records failures and logs instead of
// failing the test that runs it.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	logs   []string
	fatal  bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	runtime.Goexit()
}
func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

// check runs Check against a recorder, in its own goroutine (Fatalf
// ends it).
func check(t *testing.T, path string, got []byte) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Check(r, path, got)
	}()
	<-done
	return r
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		want, got string
		diff      string
	}{
		{
			name: "one line changed, context both sides",
			want: "h\n1\n2\n3\n4\n5\n6\n7\n8\n",
			got:  "h\n1\n2\n3\nX\n5\n6\n7\n8\n",
			diff: `--- want (9 lines, 18 bytes)
+++ got (9 lines, 18 bytes)
first difference: line 5, byte 1 of the line
@@ -2,7 +2,7 @@
 1
 2
 3
-4
+X
 5
 6
 7
`,
		},
		{
			name: "byte within a line",
			want: "a,b,c\n1,2,3\n",
			got:  "a,b,c\n1,2,4\n",
			diff: `--- want (2 lines, 12 bytes)
+++ got (2 lines, 12 bytes)
first difference: line 2, byte 5 of the line
@@ -1,2 +1,2 @@
 a,b,c
-1,2,3
+1,2,4
`,
		},
		{
			name: "line inserted and line removed",
			want: "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n",
			got:  "a\nb\nNEW\nc\nd\ne\nf\ng\nh\ni\nk\n",
			diff: `--- want (11 lines, 22 bytes)
+++ got (11 lines, 24 bytes)
first difference: line 3, byte 1 of the line
@@ -1,5 +1,6 @@
 a
 b
+NEW
 c
 d
 e
@@ -7,5 +8,4 @@
 g
 h
 i
-j
 k
`,
		},
		{
			name: "final newline",
			want: "a\nb\n",
			got:  "a\nb",
			diff: `--- want (2 lines, 4 bytes)
+++ got (2 lines, 3 bytes)
the lines are equal; the final newline differs (want true, got false)
`,
		},
		{
			name: "empty golden",
			want: "",
			got:  "a\n",
			diff: `--- want (0 lines, 0 bytes)
+++ got (1 lines, 2 bytes)
first difference: line 1, byte 1 of the line
@@ -0,0 +1,1 @@
+a
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Diff("want", "got", []byte(tc.want), []byte(tc.got)); got != tc.diff {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tc.diff)
			}
		})
	}
	if d := Diff("a", "b", []byte("same\n"), []byte("same\n")); d != "" {
		t.Errorf("equal inputs: %q", d)
	}
}

// A change of every line prints the first MaxChangedLines changed lines
// and says how many there were.
func TestDiffIsCut(t *testing.T) {
	var want, got strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&want, "%d,old\n", i)
		fmt.Fprintf(&got, "%d,new\n", i)
	}
	d := Diff("want", "got", []byte(want.String()), []byte(got.String()))
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	changed := 0
	for _, l := range lines {
		if (l[0] == '-' || l[0] == '+') && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			changed++
		}
	}
	if changed != MaxChangedLines {
		t.Errorf("%d changed lines printed, want %d:\n%s", changed, MaxChangedLines, d)
	}
	if !strings.Contains(d, "(5000 lines,") || !strings.Contains(d, "first difference: line 1, byte 3 of the line") {
		t.Errorf("head:\n%s", d)
	}
	if last := lines[len(lines)-1]; last != fmt.Sprintf("(cut after %d of 10000 changed lines)", MaxChangedLines) {
		t.Errorf("last line %q", last)
	}
	if len(d) > 2000 {
		t.Errorf("diff of %d bytes", len(d))
	}
}

// A long line is printed around its first difference.
func TestDiffClipsLongLines(t *testing.T) {
	long := strings.Repeat("x", 3000)
	want := long + "A" + long + "\n"
	got := long + "B" + long + "\n"
	d := Diff("want", "got", []byte(want), []byte(got))
	if !strings.Contains(d, "byte 3001 of the line") {
		t.Errorf("head:\n%s", d)
	}
	for _, l := range strings.Split(d, "\n") {
		if len(l) > MaxLineBytes+60 {
			t.Errorf("a line of %d bytes", len(l))
		}
	}
	if !strings.Contains(d, "-[2900 bytes]…"+strings.Repeat("x", 100)+"A") || !strings.Contains(d, "+[2900 bytes]…"+strings.Repeat("x", 100)+"B") {
		t.Errorf("the difference is not shown:\n%s", d)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(path, []byte("h\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(UpdateVariable, "")

	if r := check(t, path, []byte("h\n1\n")); len(r.errors) > 0 {
		t.Errorf("equal: %v", r.errors)
	}
	r := check(t, path, []byte("h\n2\n"))
	if len(r.errors) != 1 || r.fatal {
		t.Fatalf("different: %v", r.errors)
	}
	for _, want := range []string{path, "-1\n+2\n", "RATELAB_UPDATE=1"} {
		if !strings.Contains(r.errors[0], want) {
			t.Errorf("failure does not say %q:\n%s", want, r.errors[0])
		}
	}
	r = check(t, filepath.Join(dir, "none.csv"), []byte("x"))
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "does not exist") {
		t.Errorf("missing: %v", r.errors)
	}
	if data, _ := os.ReadFile(path); string(data) != "h\n1\n" {
		t.Errorf("a failing check wrote the golden: %q", data)
	}
}

func TestCheckUpdates(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(UpdateVariable, "1")
	// A new file in new directories.
	path := filepath.Join(dir, "testdata", "deep", "a.csv")
	if r := check(t, path, []byte("h\n1\n")); len(r.errors) > 0 || len(r.logs) != 1 {
		t.Fatalf("create: errors %v, logs %v", r.errors, r.logs)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "h\n1\n" {
		t.Fatalf("created %q, %v", data, err)
	}
	// A changed file is rewritten.
	if r := check(t, path, []byte("h\n2\n")); len(r.errors) > 0 || len(r.logs) != 1 {
		t.Fatalf("rewrite: errors %v, logs %v", r.errors, r.logs)
	}
	if data, _ := os.ReadFile(path); string(data) != "h\n2\n" {
		t.Fatalf("rewrote %q", data)
	}
	// An equal file is left alone.
	old := time.Unix(1e9, 0)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if r := check(t, path, []byte("h\n2\n")); len(r.errors) > 0 || len(r.logs) != 0 {
		t.Fatalf("equal: errors %v, logs %v", r.errors, r.logs)
	}
	if info, err := os.Stat(path); err != nil || !info.ModTime().Equal(old) {
		t.Errorf("an equal golden was written again")
	}
	// Only "1" updates.
	t.Setenv(UpdateVariable, "true")
	if r := check(t, path, []byte("h\n3\n")); len(r.errors) != 1 {
		t.Errorf("RATELAB_UPDATE=true updated: %v", r.logs)
	}
}
