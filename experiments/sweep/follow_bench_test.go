package sweep_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// BenchmarkHeldSweep is the second row's sweep at a tenth of its
// size (the seed model's Post 3 at 990 s: 116,000 arrivals × 20 points,
// held in memory), its points following the load as it is made (the
// default) or run once it is made whole (read-first), at 1 and 2 workers.
// Reported per decision (arrival × point).
func BenchmarkHeldSweep(b *testing.B) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Workload.DurationMS = 990_000
	for _, follow := range []bool{true, false} {
		for _, workers := range []int{1, 2} {
			name := "follow"
			if !follow {
				name = "read-first"
			}
			b.Run(name+"/workers="+strconv.Itoa(workers), func(b *testing.B) {
				opt := sweep.Options{Workers: workers, NoCurves: true}
				if !follow {
					opt = sweep.WithoutFollow(opt)
				}
				n := 0
				for b.Loop() {
					res, err := sweep.Run(context.Background(), cfg, opt)
					if err != nil {
						b.Fatal(err)
					}
					n = res.Arrivals * len(res.Points)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/decision")
			})
		}
	}
}
