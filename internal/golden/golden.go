// Package golden compares a test's output with a file kept under the
// package's testdata/, byte for byte. On a difference the test fails with
// a unified diff of the first differing lines; with the environment
// variable RATELAB_UPDATE=1 the file is rewritten instead, so
//
//	RATELAB_UPDATE=1 go test ./...
//
// regenerates every golden of every package (review them with git diff).
// Only tests import this package: it reads the environment and files.
package golden

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// UpdateVariable is the environment variable that, set to 1, makes Check
// rewrite the golden files instead of failing.
const UpdateVariable = "RATELAB_UPDATE"

// Updating reports whether RATELAB_UPDATE=1 is set.
func Updating() bool { return os.Getenv(UpdateVariable) == "1" }

// Check compares got with the golden file at path (relative to the
// test's package directory, normally under testdata/). Under
// RATELAB_UPDATE=1 it writes got to path when they differ (creating its
// directories) and logs it; a file already equal is left untouched.
// Otherwise a missing file or a difference fails the test with a
// unified diff (Diff) and how to regenerate.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(path)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		t.Fatalf("golden %s: %v", path, err)
	}
	if !missing && bytes.Equal(want, got) {
		return
	}
	if Updating() {
		if err := Write(path, got); err != nil {
			t.Fatalf("golden: %v", err)
		}
		t.Logf("golden: wrote %s (%d bytes)", path, len(got))
		return
	}
	if missing {
		t.Errorf("golden %s does not exist (got %d bytes); %s", path, len(got), Regenerate)
		return
	}
	t.Errorf("golden %s differs from what the test wrote\n%s%s", path, Diff(path, "got", want, got), Regenerate)
}

// Regenerate is the advice a failure ends with.
const Regenerate = "to accept what the test wrote, run it again with " + UpdateVariable + "=1 (e.g. " + UpdateVariable + "=1 go test ./...) and review git diff"

// Write writes data to path, creating its directories.
func Write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write golden %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write golden %s: %w", path, err)
	}
	return nil
}

// Diff limits.
const (
	// MaxChangedLines is how many removed plus added lines Diff prints.
	MaxChangedLines = 20
	// ContextLines is how many equal lines Diff prints around a change.
	ContextLines = 3
	// MaxLineBytes is how much of a long line Diff prints.
	MaxLineBytes = 400
	// window is how many lines from the first difference on, of each
	// side, Diff aligns (a longest common subsequence over them).
	window = 400
)

// Diff is a unified diff of want (named wantName) and got (gotName) from
// their first differing line, cut after MaxChangedLines changed lines:
// a head with both line counts and where the first difference is (line,
// and byte in that line), then hunks with line numbers. A line longer
// than MaxLineBytes is cut around the first difference of the pair. Equal
// inputs give "".
func Diff(wantName, gotName string, want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	a, b := splitLines(want), splitLines(got)
	// First differing line, and the common tail.
	first := 0
	for first < len(a) && first < len(b) && a[first] == b[first] {
		first++
	}
	endA, endB := len(a), len(b)
	for endA > first && endB > first && a[endA-1] == b[endB-1] {
		endA--
		endB--
	}
	col := 0
	if first < len(a) && first < len(b) {
		for col < len(a[first]) && col < len(b[first]) && a[first][col] == b[first][col] {
			col++
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s (%d lines, %d bytes)\n+++ %s (%d lines, %d bytes)\n", wantName, countLines(want), len(want), gotName, countLines(got), len(got))
	if first == len(a) && first == len(b) {
		fmt.Fprintf(&out, "the lines are equal; the final newline differs (%s %t, %s %t)\n", wantName, bytes.HasSuffix(want, []byte("\n")), gotName, bytes.HasSuffix(got, []byte("\n")))
		return out.String()
	}
	fmt.Fprintf(&out, "first difference: line %d, byte %d of the line\n", first+1, col+1)

	// Align a window of each side from the first difference.
	wa, wb := min(endA, first+window), min(endB, first+window)
	ops := align(a[first:wa], b[first:wb])
	// Lines past the window that still differ are shown as removed/added.
	for i := wa; i < endA; i++ {
		ops = append(ops, op{kind: '-', a: i - first})
	}
	for j := wb; j < endB; j++ {
		ops = append(ops, op{kind: '+', b: j - first})
	}
	// Back to absolute line indexes, with context from the common head
	// and tail.
	var full []op
	for i := max(0, first-ContextLines); i < first; i++ {
		full = append(full, op{kind: ' ', a: i, b: i})
	}
	for _, o := range ops {
		o.a += first
		o.b += first
		full = append(full, o)
	}
	for k := 0; k < ContextLines && endA+k < len(a); k++ {
		full = append(full, op{kind: ' ', a: endA + k, b: endB + k})
	}
	writeHunks(&out, full, a, b, col, first)
	if !strings.HasSuffix(string(want), "\n") && len(want) > 0 || !strings.HasSuffix(string(got), "\n") && len(got) > 0 {
		fmt.Fprintf(&out, "(final newline: %s %t, %s %t)\n", wantName, bytes.HasSuffix(want, []byte("\n")), gotName, bytes.HasSuffix(got, []byte("\n")))
	}
	return out.String()
}

// op is one line of an edit script: ' ' equal (a and b), '-' a's line a,
// '+' b's line b.
type op struct {
	kind byte
	a, b int
}

// align is a shortest edit script from a to b (a longest common
// subsequence, by dynamic programming: the inputs are windows).
func align(a, b []string) []op {
	n, m := len(a), len(b)
	// lcs[i][j]: the LCS length of a[i:] and b[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, op{kind: ' ', a: i, b: j})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
			ops = append(ops, op{kind: '+', a: i, b: j})
			j++
		default:
			ops = append(ops, op{kind: '-', a: i, b: j})
			i++
		}
	}
	return ops
}

// writeHunks prints ops as unified hunks with ContextLines of context.
// Each run of changed lines is printed as its removed lines, then its
// added ones; printing stops after MaxChangedLines changed lines, shared
// between the removed and the added lines of the run where it stops (so a
// file whose every line changed shows both sides).
func writeHunks(out *strings.Builder, ops []op, a, b []string, col, first int) {
	total := 0
	for _, o := range ops {
		if o.kind != ' ' {
			total++
		}
	}
	var shown []op
	budget := MaxChangedLines
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			shown = append(shown, ops[k])
			k++
			continue
		}
		if budget == 0 {
			break
		}
		var removed, added []op
		for ; k < len(ops) && ops[k].kind != ' '; k++ {
			if ops[k].kind == '-' {
				removed = append(removed, ops[k])
			} else {
				added = append(added, ops[k])
			}
		}
		if len(removed)+len(added) > budget {
			na := min(len(added), budget/2)
			nr := min(len(removed), budget-na)
			na = min(len(added), budget-nr)
			removed, added = removed[:nr], added[:na]
			budget = 0
			shown = append(shown, removed...)
			shown = append(shown, added...)
			break // no context after a run cut short
		}
		budget -= len(removed) + len(added)
		shown = append(shown, removed...)
		shown = append(shown, added...)
	}
	// Equal lines within ContextLines of a change are printed.
	keep := make([]bool, len(shown))
	for k, o := range shown {
		if o.kind == ' ' {
			continue
		}
		for c := max(0, k-ContextLines); c <= min(len(shown)-1, k+ContextLines); c++ {
			keep[c] = true
		}
	}
	for k := 0; k < len(shown); {
		if !keep[k] {
			k++
			continue
		}
		end := k
		for end < len(shown) && keep[end] {
			end++
		}
		hunk := shown[k:end]
		startA, startB, countA, countB := -1, -1, 0, 0
		for _, o := range hunk {
			if o.kind != '+' {
				if startA < 0 {
					startA = o.a
				}
				countA++
			}
			if o.kind != '-' {
				if startB < 0 {
					startB = o.b
				}
				countB++
			}
		}
		// A side with no line in the hunk is named by the line before.
		if startA < 0 {
			startA = hunk[0].a
		} else {
			startA++
		}
		if startB < 0 {
			startB = hunk[0].b
		} else {
			startB++
		}
		fmt.Fprintf(out, "@@ -%d,%d +%d,%d @@\n", startA, countA, startB, countB)
		for _, o := range hunk {
			var line string
			at := o.a
			if o.kind == '+' {
				line, at = b[o.b], o.b
			} else {
				line = a[o.a]
			}
			c := 0
			if at == first && o.kind != ' ' {
				c = col
			}
			fmt.Fprintf(out, "%c%s\n", o.kind, clip(line, c))
		}
		k = end
	}
	if printed := MaxChangedLines - budget; printed < total {
		fmt.Fprintf(out, "(cut after %d of %d changed lines)\n", printed, total)
	}
}

// clip shortens a line longer than MaxLineBytes to a window around byte
// col, marking what it left out.
func clip(line string, col int) string {
	if len(line) <= MaxLineBytes {
		return line
	}
	start := max(0, min(col-MaxLineBytes/4, len(line)-MaxLineBytes))
	end := start + MaxLineBytes
	s := line[start:end]
	if start > 0 {
		s = fmt.Sprintf("[%d bytes]…", start) + s
	}
	if end < len(line) {
		s += fmt.Sprintf("…[%d bytes]", len(line)-end)
	}
	return s
}

// splitLines splits text into lines without their "\n"; a final newline
// ends the last line rather than starting an empty one.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// countLines is the number of lines of text (a last line without a final
// newline counts).
func countLines(data []byte) int { return len(splitLines(data)) }
