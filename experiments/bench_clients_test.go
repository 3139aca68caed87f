package experiments_test

import (
	"context"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/workload"
)

// BenchmarkClientModel: the per-request cost of the client model
// (simulate_clients.go) with retries (timeout 200 ms, 3 retries, exponential
// backoff with full jitter, a global budget) against the plain forward pass,
// on the seed model over 1000 s (117 031 first attempts) behind a token
// bucket, one point, one worker; ns/request is per first attempt.
// "retries-lognormal" is the same client behaviour on lognormal service
// times (p50 8 ms, p99 40 ms: mean 10.2 ms) instead of a fixed 10 ms.
// Target (issue 9): retries with a distribution within 2× the plain,
// fixed-service loop.
func BenchmarkClientModel(b *testing.B) {
	const (
		fixed     = `"service_ms": 10`
		lognormal = `"service": "lognormal", "service_p50_ms": 8, "service_p99_ms": 40`
		retries   = `{"type": "demand-curve", "segments": [{"rate_rps": 20, "duration_ms": 1000}, {"rate_rps": 600, "duration_ms": 200}],
			"timeout_ms": 200, "retries": 3, "backoff_ms": 50, "backoff": "exponential", "backoff_max_ms": 1000, "jitter": "full", "budget": "global", "budget_ratio": 0.2, "budget_floor_rps": 10}`
	)
	for _, c := range []struct{ name, part, service string }{
		{"plain", `{"type": "demand-curve", "segments": [{"rate_rps": 20, "duration_ms": 1000}, {"rate_rps": 600, "duration_ms": 200}]}`, fixed},
		{"retries", retries, fixed},
		{"retries-lognormal", retries, lognormal},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg, err := experiments.DecodeConfig([]byte(`{"version": 1, "seed": 1,
  "workload": {"duration_ms": 1000000, "parts": [` + c.part + `]},
  "server": {"workers": 1, ` + c.service + `, "deadline_ms": 200},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 20}]}`))
			if err != nil {
				b.Fatal(err)
			}
			arrivals, err := workload.Generate(&cfg.Workload, cfg.Seed)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var attempts int
			for range b.N {
				res, err := experiments.RunArrivals(context.Background(), cfg, arrivals, experiments.Options{Workers: 1})
				if err != nil {
					b.Fatal(err)
				}
				if cm := res.Points[0].Metrics.Client; cm != nil {
					attempts = cm.Attempts
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*arrivals.Len()), "ns/request")
			if attempts > 0 {
				b.ReportMetric(float64(attempts)/float64(arrivals.Len()), "attempts/request")
			}
		})
	}
}
