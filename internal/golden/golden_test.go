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
	t.Parallel()
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

// A change of every line prints the first MaxChangedLines changed lines,
// half removed and half added, and says how many there were.
func TestDiffIsCut(t *testing.T) {
	t.Parallel()
	var want, got strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&want, "%d,old\n", i)
		fmt.Fprintf(&got, "%d,new\n", i)
	}
	d := Diff("want", "got", []byte(want.String()), []byte(got.String()))
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	var removed, added []string
	for _, l := range lines[3:] {
		switch l[0] {
		case '-':
			removed = append(removed, l)
		case '+':
			added = append(added, l)
		}
	}
	if len(removed) != MaxChangedLines/2 || len(added) != MaxChangedLines/2 || removed[0] != "-0,old" || added[0] != "+0,new" {
		t.Errorf("removed %q, added %q, want the first %d of each:\n%s", removed, added, MaxChangedLines/2, d)
	}
	if lines[0] != "--- want (5000 lines, 43890 bytes)" || lines[2] != "first difference: line 1, byte 3 of the line" || lines[3] != "@@ -1,10 +1,10 @@" {
		t.Errorf("head:\n%s", d)
	}
	if last := lines[len(lines)-1]; last != fmt.Sprintf("(cut after %d of 10000 changed lines)", MaxChangedLines) {
		t.Errorf("last line %q", last)
	}
}

// Separate changes are printed up to the cut, the last one's run split.
func TestDiffCutsAcrossHunks(t *testing.T) {
	t.Parallel()
	var want, got strings.Builder
	for i := range 100 {
		fmt.Fprintf(&want, "%d\n", i)
		if i%10 == 5 {
			fmt.Fprintf(&got, "%d changed\n%d added\n", i, i)
		} else {
			fmt.Fprintf(&got, "%d\n", i)
		}
	}
	d := Diff("want", "got", []byte(want.String()), []byte(got.String()))
	// 6 changes of 3 lines (-5, +5 changed, +5 added) make 18; the
	// seventh, at line 66, shows its 2 lines as -65 and +65 changed.
	if !strings.HasSuffix(d, "@@ -63,4 +69,4 @@\n 62\n 63\n 64\n-65\n+65 changed\n(cut after 20 of 30 changed lines)\n") {
		t.Errorf("diff:\n%s", d)
	}
	if n := strings.Count(d, "@@ -"); n != 7 {
		t.Errorf("%d hunks, want 7:\n%s", n, d)
	}
}

// A long line is printed around its first difference.
func TestDiffClipsLongLines(t *testing.T) {
	t.Parallel()
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
