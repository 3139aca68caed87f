package limiter_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

func envoyParams(maxTokens, perFill, fillMS float64) limiter.Params {
	return limiter.Params{limiter.ParamMaxTokens: maxTokens, limiter.ParamTokensPerFill: perFill, limiter.ParamFillIntervalMS: fillMS}
}

// Table tests of Envoy's local rate limit, one case per behaviour of
// local_ratelimit_impl.cc (no Envoy package is reachable here to run).
func TestEnvoyLocalRateLimit(t *testing.T) {
	t.Parallel()
	atomic := map[string]string{limiter.OptionEnvoyBucket: "atomic"}
	runLibCases(t, []libraryCase{
		{
			name: "starts full; a request takes a whole token or gets 429",
			typ:  limiter.TypeEnvoyLocalRateLimit, params: envoyParams(3, 2, 100),
			events: []event{admit(0), admit(0), admit(10), reject(10)},
		},
		{
			// A continuous bucket of 20 tokens/s would hold 1.8 tokens at
			// 99 ms; the timer adds 2 only when it fires at 100 ms.
			name: "refills on the fill interval, not continuously",
			typ:  limiter.TypeEnvoyLocalRateLimit, params: envoyParams(3, 2, 100),
			events: []event{admit(0), admit(0), admit(0), reject(50), reject(99.999),
				admit(100), admit(150), reject(199.9), admit(200), admit(200), reject(200)},
		},
		{
			name: "the timer fires every fill_interval from the filter's creation, not from the last request",
			typ:  limiter.TypeEnvoyLocalRateLimit, params: envoyParams(1, 1, 100),
			events: []event{admit(95), reject(99), admit(100), reject(195), admit(200)},
		},
		{
			name: "refills stop at max_tokens however long the bucket idles",
			typ:  limiter.TypeEnvoyLocalRateLimit, params: envoyParams(3, 2, 100),
			events: []event{admit(0), admit(0), admit(0), admit(10_000), admit(10_000), admit(10_000), reject(10_000)},
		},
		{
			name: "fill_interval is read as whole ms: 100.9 fires every 100 ms",
			typ:  limiter.TypeEnvoyLocalRateLimit, params: envoyParams(1, 1, 100.9),
			events: []event{admit(0), reject(99), admit(100), admit(200), reject(200.5)},
		},
		{
			name:   "descriptor client: each client its own full bucket, the same timer",
			typ:    limiter.TypeEnvoyLocalRateLimit,
			params: envoyParams(2, 1, 50), options: map[string]string{limiter.OptionEnvoyDescriptor: "client"}, clients: 2,
			events: []event{admitFrom(0, 0), admitFrom(0, 1), rejectFrom(0, 2), admitFrom(1, 3), admitFrom(1, 4), rejectFrom(1, 49),
				admitFrom(0, 50), admitFrom(1, 50), rejectFrom(1, 50)},
		},
		{
			// 2 tokens per 100 ms is 20/s: 60 ms gives 1.2 tokens.
			name: "token_bucket atomic: starts full and refills continuously",
			typ:  limiter.TypeEnvoyLocalRateLimit, params: envoyParams(3, 2, 100), options: atomic,
			events: []event{admit(0), admit(0), admit(0), reject(0), admit(60), reject(60), admit(110), reject(110)},
		},
	})
}

// The minimum fill interval is Envoy's own, said in the message.
func TestEnvoyFillIntervalMinimum(t *testing.T) {
	t.Parallel()
	s := limiter.Spec{Type: limiter.TypeEnvoyLocalRateLimit, Params: map[string]limiter.Values{
		limiter.ParamMaxTokens: {10}, limiter.ParamFillIntervalMS: {49.9}}}
	s.Normalize()
	errs := s.Validate("limiters[2]")
	if len(errs) != 1 || errs[0].Path != "limiters[2].fill_interval_ms" || errs[0].Msg != `must be between 50 and 86400000 ms: Envoy: "local rate limit token bucket fill timer must be >= 50ms"` {
		t.Errorf("fill interval 49.9 ms: %v", errs)
	}
	if got := s.ValuesOf(limiter.ParamTokensPerFill); len(got) != 1 || got[0] != 1 {
		t.Errorf("tokens_per_fill defaults to %v, want Envoy's 1", got)
	}
}

// Timer mode: up to any time t, a bucket admits at most max_tokens plus
// tokens_per_fill per fire at or before t; and in any window d at most
// (max_tokens + tokens_per_fill) + tokens_per_fill*d/fill_interval. Atomic
// mode: at most max_tokens + rate*d.
func TestEnvoyLocalRateLimitGuarantees(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(30, uint64(run)))
		p := envoyParams(float64(1+rng.IntN(30)), float64(1+rng.IntN(10)), float64(50+rng.IntN(500))+[]float64{0, 0.5}[rng.IntN(2)])
		atomic := rng.IntN(3) == 0
		opts := map[string]string{}
		if atomic {
			opts[limiter.OptionEnvoyBucket] = "atomic"
		}
		g := libGate(t, limiter.TypeEnvoyLocalRateLimit, p, opts, 1)
		ts := randomTimes(rng, 50+rng.IntN(250))
		for i := range ts {
			ts[i] *= 10 // spread over several fills
		}
		rs := offerAll(t, g, ts, nil, nil)
		maxT, per, fill := p[limiter.ParamMaxTokens], p[limiter.ParamTokensPerFill], math.Trunc(p[limiter.ParamFillIntervalMS])
		rate := per / fill * 1000
		what := fmt.Sprintf("envoy %v atomic=%v", p, atomic)
		if atomic {
			checkCurve(t, run, what, releaseTimes(rs), rate, maxT)
			continue
		}
		for i, r := range rs {
			if r.release != r.t {
				t.Fatalf("run %d: a policer delayed a request", run)
			}
			if n := float64(i + 1); n > maxT+per*math.Floor(r.t/fill) {
				t.Fatalf("run %d: %s admitted %g by %g ms, more than max_tokens + fills", run, what, n, r.t)
			}
		}
		checkCurve(t, run, what, releaseTimes(rs), rate, maxT+per)
	}
}
