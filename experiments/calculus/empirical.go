package calculus

import "math"

// Empirical is the empirical arrival curve of a sorted list of times (ms):
// for each window length d of grid, the largest number of times in any
// half-open window (x, x+d]. It is the smallest arrival curve the times
// obey at those lengths (up to the closed-window jumps of At). Each d takes
// one pass: linear time per window length. times must be non-decreasing;
// d must be > 0.
//
// The pass only asks whether some window reaches best+1: the window ending
// at times[j] holds more than best times when times[j-best] > times[j] - d.
// A window that reaches best at length d reaches it at any longer length,
// so on an ascending grid best carries over from the previous length.
//
// A window ending before index best holds at most best times, so the pass
// starts at j = best, and it asks four windows at once (one well-predicted
// branch for four compares) before stepping through them one by one.
func Empirical(times []float64, grid []float64) []int {
	out := make([]int, len(grid))
	n := len(times)
	best := 0
	for g, d := range grid {
		if g > 0 && !(d >= grid[g-1]) {
			best = 0
		}
		for j := best; j < n; {
			if j+4 <= n {
				a := times[j-best : j-best+4 : j-best+4]
				b := times[j : j+4 : j+4]
				if !(a[0] > b[0]-d || a[1] > b[1]-d || a[2] > b[2]-d || a[3] > b[3]-d) {
					j += 4
					continue
				}
			}
			t := times[j]
			for best <= j && times[j-best] > t-d {
				best++
			}
			j++
		}
		out[g] = best
	}
	return out
}

// GridMaxMS caps the grid: windows of a minute or longer add nothing a
// delay bound of milliseconds to seconds can use, and every window length
// costs the engine a pass over each point's releases.
const GridMaxMS = 60_000

// Grid lists window lengths from 1 ms to min(maxMS, GridMaxMS) (included) at
// 1, 2 and 5 per decade: exact decimal values, so every machine draws the
// same curve, and at most 16 of them. Below 1 ms it is empty.
func Grid(maxMS float64) []float64 {
	var out []float64
	maxMS = math.Min(maxMS, GridMaxMS)
	for p := 1.0; p <= maxMS; p *= 10 {
		for _, s := range []float64{1, 2, 5} {
			d := s * p
			if d >= maxMS {
				break
			}
			out = append(out, d)
		}
	}
	if maxMS >= 1 {
		out = append(out, maxMS)
	}
	return out
}
