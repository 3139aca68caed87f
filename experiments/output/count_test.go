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
