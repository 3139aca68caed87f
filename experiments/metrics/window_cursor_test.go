package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A cursor answers what WindowIndex does, for times that wander, jump
// back, and sit on the float64 values around window edges.
func TestWindowCursorIsWindowIndex(t *testing.T) {
	widths := []float64{1, 33.3, 100, 0.1, 1000, 7.000000000000001, 1e-3, 86_400_000}
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 9))
		w := widths[int(seed)%len(widths)] * (1 + float64(seed%3)*rng.Float64())
		c := NewWindowCursor(w)
		tm := rng.Float64() * 10 * w
		for i := range 5000 {
			switch rng.IntN(6) {
			case 0: // an edge, or an ulp or two either side of it
				tm = math.Floor(tm/w) * w
				for range rng.IntN(5) {
					tm = math.Nextafter(tm, math.Inf(2*rng.IntN(2)-1))
				}
			case 1:
				tm -= rng.Float64() * w // back
			case 2:
				tm += rng.Float64() * 50 * w // a jump
			default:
				tm += rng.ExpFloat64() * w / 20
			}
			if got, want := c.Index(tm), WindowIndex(tm, w); got != want {
				t.Fatalf("seed %d step %d: w %v t %v: cursor %v, WindowIndex %v", seed, i, w, tm, got, want)
			}
		}
		for _, x := range []float64{math.Inf(1), math.Inf(-1), 0, -w / 3, math.NaN()} {
			got, want := c.Index(x), WindowIndex(x, w)
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("w %v t %v: cursor %v, WindowIndex %v", w, x, got, want)
			}
		}
	}
}
