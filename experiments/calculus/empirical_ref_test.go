package calculus_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ratelab/ratelab/experiments/calculus"
)

// empiricalRef is the definition of the empirical arrival curve, computed
// with two pointers per window length: for each d, the most times in any
// window (t - d, t] ending at one of them.
func empiricalRef(times, grid []float64) []int {
	out := make([]int, len(grid))
	for g, d := range grid {
		best, i := 0, 0
		for j, t := range times {
			for times[i] <= t-d {
				i++
			}
			best = max(best, j-i+1)
		}
		out[g] = best
	}
	return out
}

// TestEmpiricalMatchesDefinition compares Empirical (which carries its
// count from one window length to the next) with the two-pointer
// definition on random lists with ties, on the standard grid and on an
// unsorted one.
func TestEmpiricalMatchesDefinition(t *testing.T) {
	for run := range 2000 {
		rng := rand.New(rand.NewPCG(40, uint64(run)))
		ts := make([]float64, rng.IntN(300))
		x := 0.0
		for i := range ts {
			if rng.IntN(4) > 0 {
				x += rng.ExpFloat64() * 5
			}
			ts[i] = x
		}
		grid := calculus.Grid(x + 10)
		if run%3 == 0 {
			grid = []float64{50, 1, 3, 0.5, 100, 2, 2}
		}
		if got, want := calculus.Empirical(ts, grid), empiricalRef(ts, grid); !slices.Equal(got, want) {
			t.Fatalf("run %d: Empirical = %v, definition %v", run, got, want)
		}
	}
}

// BenchmarkEmpirical: the curve of 1 M Poisson times on the standard grid,
// per time.
func BenchmarkEmpirical(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	ts := make([]float64, 1_000_000)
	x := 0.0
	for i := range ts {
		x += rng.ExpFloat64() * 8
		ts[i] = x
	}
	grid := calculus.Grid(x)
	for b.Loop() {
		calculus.Empirical(ts, grid)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ts)), "ns/time")
	b.ReportMetric(float64(len(grid)), "lengths")
}
