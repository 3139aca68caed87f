package metrics_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ratelab/ratelab/experiments/metrics"
)

func TestRank(t *testing.T) {
	for _, c := range []struct {
		p    float64
		n    int
		want int
	}{
		{99, 1, 1}, {99, 2, 2}, {99, 100, 99}, {99, 101, 100}, {99, 200, 198}, {99, 566, 561}, {99, 1000, 990},
		{50, 1, 1}, {50, 2, 1}, {50, 3, 2}, {50, 4, 2}, {50, 100, 50},
		{100, 7, 7}, {100, 1, 1},
		{0, 10, 1}, // never rank 0
	} {
		if got := metrics.Rank(c.p, c.n); got != c.want {
			t.Errorf("Rank(%g, %d) = %d, want %d", c.p, c.n, got, c.want)
		}
	}
	// The rule: c = max(1, ceil(nextafter(p, -inf)/100 * n)).
	for n := 1; n <= 5000; n++ {
		for _, p := range []float64{50, 90, 99, 99.9} {
			want := max(1, int(math.Ceil(math.Nextafter(p, math.Inf(-1))/100*float64(n))))
			if got := metrics.Rank(p, n); got != want {
				t.Fatalf("Rank(%g, %d) = %d, want %d", p, n, got, want)
			}
		}
	}
}

func TestHistogramRecordRoundsHalfUpAndClamps(t *testing.T) {
	for _, c := range []struct {
		ms   float64
		want int
	}{
		{0, 0}, {0.49, 0}, {0.5, 1}, {1.5, 2}, {2.5, 3}, {2.4999, 2}, {-0.5, 0}, {-0.6, 0}, {-1e9, 0},
		{59999.5, 60000}, {60000.4, 60000}, {60001, 60000}, {1e300, 60000}, {math.Inf(1), 60000}, {math.NaN(), 60000},
	} {
		var h metrics.Histogram
		h.Record(c.ms)
		if h.Count() != 1 || h.Max() != c.want || h.Quantile(50) != c.want {
			t.Errorf("Record(%g): count %d, max %d, p50 %d; want the value %d", c.ms, h.Count(), h.Max(), h.Quantile(50), c.want)
		}
	}
	if got := metrics.RoundMS(2.5); got != 3 {
		t.Errorf("RoundMS(2.5) = %g, want 3", got)
	}
	if got := metrics.RoundMS(-2.5); got != -2 {
		t.Errorf("RoundMS(-2.5) = %g, want -2 (floor(x + 0.5))", got)
	}
}

// TestHistogramQuantileIsNearestRank compares every quantile with the c-th
// smallest of the sorted samples.
func TestHistogramQuantileIsNearestRank(t *testing.T) {
	var h metrics.Histogram
	if h.Quantile(99) != 0 || h.Max() != 0 {
		t.Fatal("an empty histogram is not 0")
	}
	for run := range 300 {
		rng := rand.New(rand.NewPCG(30, uint64(run)))
		h.Reset()
		n := 1 + rng.IntN(3000)
		vals := make([]int, n)
		top := []int{5, 100, 2047, 4095, 4096, 4200, 60000}[rng.IntN(7)] // both sides of the in-place counts
		for i := range vals {
			vals[i] = rng.IntN(top + 1)
			h.Record(float64(vals[i]))
		}
		slices.Sort(vals)
		for _, p := range []float64{1, 50, 90, 99, 99.9, 100} {
			want := vals[metrics.Rank(p, n)-1]
			if got := h.Quantile(p); got != want {
				t.Fatalf("run %d: p%g of %d values = %d, want %d", run, p, n, got, want)
			}
		}
		if h.Max() != vals[n-1] || h.Count() != n {
			t.Fatalf("run %d: max %d count %d, want %d %d", run, h.Max(), h.Count(), vals[n-1], n)
		}
	}
}

// TestHistogramSeedLabP99: the seed lab's HdrHistogram example — 100 values
// 1..100 have p99 99; 101 values have p99 100.
func TestHistogramSeedLabP99(t *testing.T) {
	var h metrics.Histogram
	for v := 1; v <= 100; v++ {
		h.Record(float64(v))
	}
	if got := h.Quantile(99); got != 99 {
		t.Errorf("p99 of 1..100 = %d, want 99", got)
	}
	h.Record(101)
	if got := h.Quantile(99); got != 100 {
		t.Errorf("p99 of 1..101 = %d, want 100", got)
	}
}

func TestJain(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{nil, 1},
		{[]float64{0, 0, 0}, 1},
		{[]float64{5}, 1},
		{[]float64{3, 3, 3, 3}, 1},
		{[]float64{1, 0, 0, 0}, 0.25},
		{[]float64{1, 2, 3}, 36.0 / 42},
		{[]float64{10, 0}, 0.5},
	} {
		if got := metrics.Jain(c.x); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("Jain(%v) = %g, want %g", c.x, got, c.want)
		}
	}
}

// exactBefore reports whether u - x < l in exact (big.Float) arithmetic:
// whether u lies in the window [x, x+l).
func exactBefore(x, u, l float64) bool {
	if g := u - x; math.Abs(g-l) > 1e-6*(math.Abs(u)+math.Abs(x)+l) {
		return g < l // far from the boundary: rounding cannot matter
	}
	d := new(big.Float).SetPrec(2200).SetFloat64(u)
	d.Sub(d, new(big.Float).SetPrec(2200).SetFloat64(x))
	return d.Cmp(new(big.Float).SetFloat64(l)) < 0
}

// bruteRolling is the largest number of times in any window [x, x+l),
// counted in exact arithmetic.
func bruteRolling(ts []float64, l float64) int {
	best := 0
	for i := range ts {
		n := 0
		for _, u := range ts[i:] {
			if exactBefore(ts[i], u, l) {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

func TestApart(t *testing.T) {
	for _, c := range []struct {
		a, b, d float64
		want    bool
	}{
		{0, 1000, 1000, true},
		{0, 999.999, 1000, false},
		// 182.1 - 148.8 rounds to 33.3, but the values are less than 33.3 apart.
		{148.8, 182.1, 33.3, false},
		// 1837.311 + 1000 rounds up to 2837.311, above the float64 just below it.
		{1837.311, 2837.3109999999997, 1000, false},
		{1837.311, 2837.311, 1000, true},
		{5, 5, 0.001, false},
	} {
		if got := metrics.Apart(c.a, c.b, c.d); got != c.want {
			t.Errorf("Apart(%v, %v, %v) = %v, want %v", c.a, c.b, c.d, got, c.want)
		}
	}
	// Near the boundary, against big.Float: b is within a few ulps of a + d.
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 200_000 {
		a := float64(rng.IntN(10_000_000)) / []float64{1, 10, 1000, 3}[rng.IntN(4)]
		d := []float64{1000, 100, 1, 0.1, 33.3, 1000.1, rng.Float64() * 500}[rng.IntN(7)]
		b := a + d
		for range rng.IntN(3) {
			b = math.Nextafter(b, math.Inf(2*rng.IntN(2)-1))
		}
		if got, want := metrics.Apart(a, b, d), !exactBefore(a, b, d); got != want {
			t.Fatalf("case %d: Apart(%v, %v, %v) = %v, want %v", i, a, b, d, got, want)
		}
	}
}

func TestRolling(t *testing.T) {
	for _, c := range []struct {
		name string
		l    float64
		ts   []float64
		want int
	}{
		{"empty", 1000, nil, 0},
		{"the window is half open", 1000, []float64{0, 0, 999.999, 1000}, 3},
		{"not aligned: the peak straddles a boundary", 1000, []float64{900, 950, 1000, 1100, 1800}, 5},
		{"aligned windows would say 2", 100, []float64{50, 99, 101, 149, 250}, 4},
		{"ties count", 10, []float64{5, 5, 5, 5, 20, 20}, 4},
		{"less than L apart though x + L rounds to t", 1000, []float64{1837.311, 2837.3109999999997}, 2},
	} {
		r := metrics.NewRolling(c.l)
		for _, x := range c.ts {
			r.Add(x)
		}
		if r.Max() != c.want || bruteRolling(c.ts, c.l) != c.want {
			t.Errorf("%s: Rolling = %d, brute force %d, want %d", c.name, r.Max(), bruteRolling(c.ts, c.l), c.want)
		}
	}
	r := metrics.NewRolling(50)
	for run := range 1000 {
		rng := rand.New(rand.NewPCG(31, uint64(run)))
		l := []float64{1, 10, 50, 1000, 33.3, 0.1 + rng.Float64()*200}[rng.IntN(6)]
		r.Reset(l)
		ts := make([]float64, 1+rng.IntN(400))
		at := 0.0
		for i := range ts {
			switch rng.IntN(5) {
			case 0: // a tie
			case 1: // decimal times, as traces have them
				at = max(at, math.Round((at+rng.Float64()*l/10)*1000)/1000)
			default:
				at += rng.ExpFloat64() * l / float64(1+rng.IntN(50))
			}
			ts[i] = at
			r.Add(at)
		}
		if got, want := r.Max(), bruteRolling(ts, l); got != want {
			t.Fatalf("run %d (L=%g, %d events): Rolling = %d, brute force %d", run, l, len(ts), got, want)
		}
		all := metrics.NewRolling(l) // the same events by AddAll, in random runs
		for i := 0; i < len(ts); {
			e := min(i+rng.IntN(90), len(ts))
			all.AddAll(ts[i:e])
			i = e
		}
		if all.Max() != r.Max() {
			t.Fatalf("run %d (L=%g, %d events): AddAll = %d, Add %d", run, l, len(ts), all.Max(), r.Max())
		}
	}
}

// TestRollingThickening: a stream that grows ever denser takes its
// largest count up every few events, past several sizes of the ring that
// keeps the last events (64, doubled as it fills), each time against
// another event of the past: after every event, the count is the brute
// force's over the events so far.
func TestRollingThickening(t *testing.T) {
	for _, l := range []float64{1000, 33.3} {
		ts := make([]float64, 1500)
		r := metrics.NewRolling(l)
		best := 0
		for k := range ts {
			ts[k] = 100 * math.Sqrt(float64(k)) * l / 1000
			r.Add(ts[k])
			n := 0 // the window ending at event k
			for i := k; i >= 0 && exactBefore(ts[i], ts[k], l); i-- {
				n++
			}
			best = max(best, n)
			if r.Max() != best {
				t.Fatalf("L=%g, after event %d: Rolling = %d, brute force %d", l, k, r.Max(), best)
			}
		}
		if best < 300 {
			t.Errorf("L=%g: the largest count is %d, want more than 300", l, best)
		}
	}
}
