package simulate_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/experiments/workload"
)

// scaledPost3 is the seed lab's Post 3 model (the demand curve of 20 rps for 1 s and
// 600 rps for 200 ms, one 10 ms server with a 200 ms deadline) stretched to
// durationMS, behind one limiter.
func scaledPost3(durationMS float64, limiterJSON string) string {
	return fmt.Sprintf(`{
  "version": 1,
  "seed": 1,
  "workload": {"duration_ms": %g, "parts": [
    {"type": "demand-curve", "segments": [{"rate_rps": 20, "duration_ms": 1000}, {"rate_rps": 600, "duration_ms": 200}]}
  ]},
  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 200},
  "limiters": [%s]
}`, durationMS, limiterJSON)
}

// Benchmark (a): the seed lab's Post 3 model over 10 000 s (1 170 301 arrivals), one
// point, one worker, every metric on, reporting ns per request. The
// arrivals are generated once outside the timer: this is the cost of the
// gate, the server and the measuring instruments, plus the network-calculus
// empirical arrival curves (one of the offered arrivals per run, one of the
// releases per point: a pass per window length each, about 43 lengths at
// this duration). Target ≤ 25 ns/request (run with -cpu 1 for one core);
// BenchmarkSeedScaledNoCurves isolates the per-request loop.
func BenchmarkSeedScaled(b *testing.B) {
	for _, l := range []struct{ name, json string }{
		{"token-bucket", `{"type": "token-bucket", "rate_rps": 100, "burst": 20}`},
		{"leaky-bucket", `{"type": "leaky-bucket", "rate_rps": 100, "queue": 20}`},
		{"sliding-window-log", `{"type": "sliding-window-log", "limit": 100, "window_ms": 1000}`},
		{"none", `{"type": "none"}`},
	} {
		b.Run(l.name, func(b *testing.B) {
			benchConfig(b, scaledPost3(10_000_000, l.json))
		})
	}
}

// BenchmarkSeedSweepScaled is the scaled Post 3 model through the seed lab's
// token-bucket burst sweep (10 points): the per-run work (the offered
// traffic's arrival curve) is shared by the points, as in any real sweep.
// Reported per request per point.
func BenchmarkSeedSweepScaled(b *testing.B) {
	benchConfig(b, scaledPost3(10_000_000, `{"type": "token-bucket", "rate_rps": 100, "burst": [1, 2, 4, 8, 12, 16, 20, 28, 40, 80]}`))
}

// BenchmarkServiceDistributions is the scaled Post 3 model's burst sweep
// (10 points, 1 170 301 arrivals) on a server whose service time is fixed
// or drawn from a distribution of about the same mean (10 ms): the cost a
// distribution adds per request per point. The draw (once per load, shared
// by the points) is inside the timer; "-4-workers" serves four workers of
// 40 ms mean through the server's heaps.
func BenchmarkServiceDistributions(b *testing.B) {
	tb := `{"type": "token-bucket", "rate_rps": 100, "burst": [1, 2, 4, 8, 12, 16, 20, 28, 40, 80]}`
	for _, c := range []struct{ name, server string }{
		{"fixed", `"workers": 1, "service_ms": 10`},
		{"exponential", `"workers": 1, "service": "exponential", "service_ms": 10`},
		{"lognormal", `"workers": 1, "service": "lognormal", "service_p50_ms": 6, "service_p99_ms": 60`},
		{"bimodal", `"workers": 1, "service": "bimodal", "service_slow_share": 0.1, "service_fast_ms": 5, "service_slow_ms": 55`},
		{"fixed-4-workers", `"workers": 4, "service_ms": 40`},
		{"lognormal-4-workers", `"workers": 4, "service": "lognormal", "service_p50_ms": 24, "service_p99_ms": 240`},
	} {
		b.Run(c.name, func(b *testing.B) {
			doc := strings.Replace(scaledPost3(10_000_000, tb), `"workers": 1, "service_ms": 10`, c.server, 1)
			benchConfig(b, doc)
		})
	}
}

// BenchmarkSeedScaledNoCurves is the seed lab's Post 3 model over 40 000 s (4.7 M
// arrivals): above MaxCurveArrivals, so the engine skips the empirical
// arrival curves (a pass over the releases per window length, about 40 of
// them), leaving the cost of the per-request loop alone.
func BenchmarkSeedScaledNoCurves(b *testing.B) {
	benchConfig(b, scaledPost3(40_000_000, `{"type": "token-bucket", "rate_rps": 100, "burst": 20}`))
}

// BenchmarkClientsScaled is a multi-client workload (per-client counts,
// Jain's index per fairness window, group shares on) of about 1.2 M
// arrivals behind a per-client token bucket.
func BenchmarkClientsScaled(b *testing.B) {
	benchConfig(b, `{
  "version": 1,
  "seed": 7,
  "workload": {"duration_ms": 1000000, "parts": [
    {"type": "clients", "group": "light", "clients": 8, "rate_rps": 50, "arrival": "poisson"},
    {"type": "clients", "group": "heavy", "clients": 2, "rate_rps": 400}
  ]},
  "limiters": [{"type": "per-client-token-bucket", "rate_rps": 1000, "burst": 50}]
}`)
}

func benchConfig(b *testing.B, doc string) {
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		b.Fatal(err)
	}
	arrivals, err := workload.Generate(&cfg.Workload, cfg.Seed)
	if err != nil {
		b.Fatal(err)
	}
	if arrivals.Len() < 1_000_000 {
		b.Fatalf("%d arrivals; the benchmark needs at least 1 M", arrivals.Len())
	}
	ctx := context.Background()
	opt := sweep.Options{Workers: 1}
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := sweep.RunArrivals(ctx, cfg, arrivals, opt); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - cpu0
	// One request through one point: a sweep of k points decides every
	// arrival k times.
	reqs := float64(b.N) * float64(arrivals.Len()) * float64(len(cfg.Points()))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/reqs, "ns/req")
	// CPU time of the whole process (user + system, GC included) per
	// request: on a shared, loaded machine wall time also counts the time
	// other processes held the core.
	b.ReportMetric(float64(cpu.Nanoseconds())/reqs, "cpu-ns/req")
	b.ReportMetric(float64(arrivals.Len()), "arrivals")
}

// BenchmarkGenerateSeedScaled is the cost of building the arrival list of
// the scaled Post 3 model (1 170 301 arrivals), reported per arrival.
func BenchmarkGenerateSeedScaled(b *testing.B) {
	cfg, err := document.DecodeConfig([]byte(scaledPost3(10_000_000, `{"type": "none"}`)))
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		a, err := workload.Generate(&cfg.Workload, cfg.Seed)
		if err != nil {
			b.Fatal(err)
		}
		n = a.Len()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/req")
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dayOfClients is Poisson clients at about 11 574 rps in all (10^9
// arrivals a day) over durationMS, behind one token bucket.
func dayOfClients(durationMS float64) string {
	return fmt.Sprintf(`{"version": 1, "seed": 1,
 "workload": {"duration_ms": %g, "parts": [
   {"type": "clients", "group": "c", "clients": 1000, "rate_rps": 11.574075, "arrival": "poisson"}]},
 "server": {"workers": 8, "service_ms": 0.5, "deadline_ms": 200},
 "limiters": [{"type": "token-bucket", "rate_rps": 12000, "burst": 200}]}`, durationMS)
}

// BenchmarkStreamVsMemory: 10^7 arrivals (1000 Poisson clients, 864 s)
// through one point, in memory (generated whole, then replayed: the path
// of a load of at most MaxCurveArrivals, here forced) and streamed (the
// path above it: generation merged by time and fed in batches while the
// point runs). Both include generation; ns per request. The bound:
// streamed within 1.3× of in memory.
func BenchmarkStreamVsMemory(b *testing.B) {
	cfg, err := document.DecodeConfig([]byte(dayOfClients(864_000)))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	opt := sweep.Options{Workers: 1}
	b.Run("memory", func(b *testing.B) {
		n := 0
		cpu0 := cpuTime()
		for b.Loop() {
			a, err := workload.Generate(&cfg.Workload, cfg.Seed)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := sweep.RunArrivals(ctx, cfg, a, opt); err != nil {
				b.Fatal(err)
			}
			n = a.Len()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/req")
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/req")
	})
	b.Run("stream", func(b *testing.B) {
		n := 0
		cpu0 := cpuTime()
		for b.Loop() {
			res, err := sweep.Run(ctx, cfg, opt)
			if err != nil {
				b.Fatal(err)
			}
			if res.ArrivalCurves != nil {
				b.Fatal("not streamed")
			}
			n = res.Arrivals
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/req")
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/req")
	})
}
