package sweep_test

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// BenchmarkStreamedSweep is the fourth row at a tenth of its size
// (scripts/bench.sh runs 10^7): 10^6 Poisson arrivals from 100 clients,
// streamed (more than a load held in memory: WithStreamCache) through 8
// points sharing each pass, at 1 and 2 workers. Reported per decision
// (arrival × point).
func BenchmarkStreamedSweep(b *testing.B) {
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 1,
		"workload": {"duration_ms": 10000, "parts": [{"type": "clients", "group": "c", "clients": 100, "rate_rps": 1000, "arrival": "poisson"}]},
		"server": {"workers": 100, "service_ms": 1, "deadline_ms": 200},
		"limiters": [{"type": "token-bucket", "rate_rps": 90000, "burst": [10, 100, 1000, 10000]},
		             {"type": "leaky-bucket", "rate_rps": 90000, "queue": [10, 100, 1000, 10000]}]}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			n := 0
			for b.Loop() {
				res, err := sweep.Run(context.Background(), cfg, sweep.WithStreamCache(sweep.Options{Workers: workers}, 100_000))
				if err != nil {
					b.Fatal(err)
				}
				n = res.Arrivals * len(res.Points)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/decision")
		})
	}
}

// BenchmarkGeneratedArrivals is the fifth row at a hundredth of
// its size (scripts/bench.sh BIG=1 runs 10^9): 10^7 generated Poisson
// arrivals through one point, streamed: split (its forward pass in three
// stages on their goroutines, as with spare workers) and on one goroutine
// (WithoutSplit). Reported per arrival, wall and CPU (the process's, with
// the producer's).
func BenchmarkGeneratedArrivals(b *testing.B) {
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 1,
		"workload": {"duration_ms": 10000, "parts": [{"type": "poisson", "rate_rps": 1000000}]},
		"server": {"workers": 1000, "service_ms": 1, "deadline_ms": 200},
		"limiters": [{"type": "token-bucket", "rate_rps": 900000, "burst": 1000}]}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, split := range []bool{true, false} {
		name, opt := "split", sweep.Options{}
		if !split {
			name, opt = "one-goroutine", sweep.WithoutSplit(opt)
		}
		b.Run(name, func(b *testing.B) {
			n := 0
			cpu := cpuTime()
			for b.Loop() {
				res, err := sweep.Run(context.Background(), cfg, opt)
				if err != nil {
					b.Fatal(err)
				}
				n = res.Arrivals
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/arrival")
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/arrival")
		})
	}
}

// cpuTime is the process's user + system CPU time so far (as the
// simulate package's benchmarks measure it).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
