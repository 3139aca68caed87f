package output

import (
	"math/rand/v2"
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
