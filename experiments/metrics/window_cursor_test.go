package metrics

import (
	"math"
	"math/rand/v2"
	"strconv"
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

// windowEdge's exact product is the edge its search finds: at widths
// whose products are exact (whole ones) and not (33.3, 0.1), at edges near
// and far from 0.
func TestWindowEdgeOfAnExactProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	exact := 0
	for _, w := range []float64{1, 100, 250, 33.3, 0.1, 0.5, 1e-3, 7.000000000000001, 86_400_000} {
		for i := range 20000 {
			k := float64(i)
			if i >= 10000 {
				k = math.Floor(rng.Float64() * float64(uint64(1)<<52) / w)
			}
			if math.FMA(k, w, -k*w) == 0 {
				exact++
			}
			if got, want := windowEdge(k, w), searchEdge(k*w, k, w); got != want {
				t.Fatalf("windowEdge(%v, %v) = %v, the search finds %v", k, w, got, want)
			}
		}
	}
	if exact == 0 {
		t.Fatal("no exact product tried")
	}
}

// BenchmarkWindowCursor: a cursor over times that cross a window every 10
// steps, at a whole width (the series' 100 ms: exact edges) and at 33.3.
func BenchmarkWindowCursor(b *testing.B) {
	for _, w := range []float64{100, 33.3} {
		b.Run(strconv.FormatFloat(w, 'g', -1, 64), func(b *testing.B) {
			b.ReportAllocs()
			c := NewWindowCursor(w)
			t, sum := 0.0, 0.0
			for b.Loop() {
				t += w / 10
				sum += c.Index(t)
			}
			if sum < 0 {
				b.Fatal(sum)
			}
		})
	}
}
