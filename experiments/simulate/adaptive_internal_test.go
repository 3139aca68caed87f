package simulate

import "testing"

// convergedFrom: the first window whose limit and the next 10 s of
// windows (to the next change at most, half the time to it at least) lie
// within ±10% of their median.
func TestConvergedFrom(t *testing.T) {
	w := 1000.0
	climb := []int32{2, 4, 8, 16, 20, 21, 20, 19, 20, 22, 20, 20, 21, 20, 19, 20, 20}
	if got := convergedFrom(climb, w, 0, 17_000); got != 4 {
		t.Fatalf("a climb to 20: converged from window %d, want 4", got)
	}
	// Up to the next change only: at 8 s, windows 4..7 (4 s, at least half of 8 s) are within 10% of 20.
	if got := convergedFrom(climb, w, 0, 8000); got != 4 {
		t.Fatalf("to a change at 8 s: window %d, want 4", got)
	}
	saw := []int32{10, 20, 10, 20, 10, 20, 10, 20, 10, 20, 10, 20}
	if got := convergedFrom(saw, w, 0, 12_000); got != -1 {
		t.Fatalf("a sawtooth of ±33%% converged at window %d", got)
	}
	// Past half the time to the next change: never.
	if got := convergedFrom([]int32{1, 2, 3, 4, 5, 5, 5}, 1000, 0, 7000); got != -1 {
		t.Fatalf("a flat tail of 3 s of 7 converged at %d", got)
	}
}
