package output

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/ratelab/ratelab/experiments"
)

// TestCountPrintsAsThePrinter: the series' fast path for whole rates
// writes what each number printer writes, for counts at every scale.
func TestCountPrintsAsThePrinter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, shortest := range []string{"", experiments.DecimalsShortest} {
		cfg := &experiments.Config{Output: experiments.OutputSpec{Decimals: shortest}}
		pr := experiments.PrinterFor(cfg)
		for range 100_000 {
			n := rng.IntN(1 << uint(rng.IntN(40)))
			scale := []float64{10, 5, 2, 1, 0.5, 0.2, 0.1, 0.05, 1000.0 / 3, 1000.0 / 7}[rng.IntN(10)]
			v := float64(n) * scale
			fast, slow := csvWriter{pr: pr}, csvWriter{pr: pr}
			fast.count(v)
			slow.num(experiments.Fixed1, v)
			if string(fast.b) != string(slow.b) {
				t.Fatalf("%q: %v prints %q, the printer %q", shortest, v, fast.b, slow.b)
			}
		}
	}
}

// TestAppendDecimal: series.csv's decimal writer writes what
// strconv.AppendUint writes, at every number of digits and around each
// power of ten, into buffers with and without room.
func TestAppendDecimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(v uint64) {
		for _, room := range []int{0, 3, 64} {
			b := append(make([]byte, 0, 2+room), 'x', ',')
			if got, want := string(appendDecimal(b, v)), string(strconv.AppendUint([]byte("x,"), v, 10)); got != want {
				t.Fatalf("%d: %q, want %q", v, got, want)
			}
		}
	}
	for v := range uint64(20_000) {
		check(v)
	}
	for p := uint64(10); p <= 1e19; p *= 10 {
		for _, d := range []uint64{0, 1, 2} {
			check(p - d)
			check(p + d)
		}
		if p > math.MaxUint64/10 {
			break
		}
	}
	check(math.MaxUint64)
	for range 100_000 {
		check(rng.Uint64() >> uint(rng.IntN(64)))
	}
}

// TestSeriesRowsAsCells: appendRows, which copies the cells of a row whose
// counts it formatted lately (its table, by counts), writes every row as
// the csvWriter writes its cells one by one: for counts that repeat,
// that collide in the table, and that run past its 40 bytes, at a whole
// and a fractional scale, with and without the client columns.
func TestSeriesRowsAsCells(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, width := range []float64{100, 33.3} {
		for _, clients := range []bool{false, true} {
			const windows = 20_000
			var s experiments.Series
			small := []int32{0, 1, 2, 3, 60}
			for k := range windows {
				pick := func() int32 {
					switch rng.IntN(4) {
					case 0:
						return int32(rng.IntN(1 << 30)) // long cells: past the table's 40 bytes in a row
					case 1:
						return int32(rng.IntN(5000)) // many kinds: collisions
					}
					return small[rng.IntN(len(small))]
				}
				if k > 0 && rng.IntN(3) == 0 { // the row before again
					s.Offered, s.Released = append(s.Offered, s.Offered[k-1]), append(s.Released, s.Released[k-1])
					s.Rejected, s.InSystemMax = append(s.Rejected, s.Rejected[k-1]), append(s.InSystemMax, s.InSystemMax[k-1])
					continue
				}
				s.Offered, s.Released = append(s.Offered, pick()), append(s.Released, pick())
				s.Rejected, s.InSystemMax = append(s.Rejected, pick()), append(s.InSystemMax, pick())
			}
			if clients {
				s.Attempts, s.Retries, s.Goodput = s.Offered[:windows/2], s.Rejected[:windows/3], s.Released
			}
			cfg := &experiments.Config{Metrics: experiments.MetricsSpec{SeriesWindowMS: width}}
			res := &experiments.Result{Config: cfg, Points: []experiments.Point{{Index: 3, Limiter: "token-bucket", Series: s}}}
			sf := newSeriesFileWith(res, clients)
			sf.label(0)
			got := sf.appendRows(nil, 0, 0, sf.rows(0))
			want := csvWriter{pr: sf.pr}
			at := func(v []int32, k int) float64 { return float64(experiments.At(v, k)) * 1000 / width }
			for k := range sf.rows(0) {
				want.int(3)
				want.text("token-bucket")
				want.int(k * int(width))
				want.count(at(s.Offered, k))
				want.count(at(s.Released, k))
				want.count(at(s.Rejected, k))
				want.int(int(experiments.At(s.InSystemMax, k)))
				if clients {
					want.count(at(s.Attempts, k))
					want.count(at(s.Retries, k))
					want.count(at(s.Goodput, k))
				}
				want.end()
			}
			if string(got) != string(want.b) {
				g, w := string(got), string(want.b)
				i := 0
				for i < min(len(g), len(w)) && g[i] == w[i] {
					i++
				}
				t.Fatalf("width %g, clients %v: rows differ at byte %d: %q, cell by cell %q", width, clients, i, g[i:min(i+80, len(g))], w[i:min(i+80, len(w))])
			}
		}
	}
}
