package simulate

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEndTimes: popThrough(t) removes exactly the ends at or before t,
// whatever the order they were pushed in.
func TestEndTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h endTimes
	var all []float64
	for range 500 {
		v := float64(rng.IntN(200))
		h.push(v)
		all = append(all, v)
	}
	slices.Sort(all)
	for cut := -1.0; cut <= 200; cut += 7 {
		n := h.popThrough(cut)
		k := 0
		for len(all) > 0 && all[0] <= cut {
			all = all[1:]
			k++
		}
		if n != k || len(h) != len(all) {
			t.Fatalf("through %g: popped %d, want %d (%d left, want %d)", cut, n, k, len(h), len(all))
		}
	}
}
