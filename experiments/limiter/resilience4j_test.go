package limiter_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

func r4jParams(limit, periodMS, timeoutMS float64) limiter.Params {
	return limiter.Params{limiter.ParamLimitForPeriod: limit, limiter.ParamLimitRefreshPeriodMS: periodMS, limiter.ParamTimeoutMS: timeoutMS}
}

// Table tests of Resilience4j's AtomicRateLimiter, one case per behaviour
// of AtomicRateLimiter.java (no Resilience4j package is reachable here to
// run).
func TestResilience4j(t *testing.T) {
	t.Parallel()
	runLibCases(t, []libraryCase{
		{
			name: "limit_for_period permissions per cycle; without a timeout the rest are refused",
			typ:  limiter.TypeResilience4j, params: r4jParams(2, 100, 0),
			events: []event{admit(0), admit(50), reject(99.9), admit(100), admit(100), reject(100), admit(250)},
		},
		{
			name: "cycles are counted from the limiter's creation, not from the first request",
			typ:  limiter.TypeResilience4j, params: r4jParams(2, 100, 0),
			events: []event{admit(90), admit(95), reject(99), admit(100), admit(100), reject(199.999999)},
		},
		{
			name: "unused permissions do not carry over: a long idle spell refills to limit_for_period, no more",
			typ:  limiter.TypeResilience4j, params: r4jParams(2, 100, 0),
			events: []event{admit(1000), admit(1000), reject(1000)},
		},
		{
			// At 0 the third request waits for cycle 1 (100 ms) and reserves
			// its permission, the fourth too; the fifth would wait for cycle 2
			// (200 ms > 150) and is refused without reserving. At 100 the
			// cycle's permissions are spent by the reservations: wait 100.
			name: "waiting up to the timeout reserves a later cycle's permission; released at that cycle's start",
			typ:  limiter.TypeResilience4j, params: r4jParams(2, 100, 150),
			events: []event{admit(0), admit(0), shaped(0, 100), shaped(30, 100), reject(40),
				shaped(100, 200), shaped(120, 200), reject(120), shaped(160, 300)},
		},
		{
			name: "the clock is whole ns: a wait ends on the cycle boundary exactly",
			typ:  limiter.TypeResilience4j, params: r4jParams(1, 0.001, 1),
			events: []event{admit(0.0000004), shaped(0.0000009, 0.001), shaped(0.0005004, 0.002), shaped(0.0005004, 0.003)},
		},
	})
}

// Resilience4j's own limits, in the messages.
func TestResilience4jSettings(t *testing.T) {
	t.Parallel()
	s := limiter.Spec{Type: limiter.TypeResilience4j, Params: map[string]limiter.Values{
		limiter.ParamLimitForPeriod: {0}, limiter.ParamLimitRefreshPeriodMS: {0}}}
	s.Normalize()
	errs := s.Validate("limiters[0]")
	if len(errs) != 2 || errs[0].Path != "limiters[0].limit_for_period" || errs[1].Path != "limiters[0].limit_refresh_period_ms" ||
		!strings.Contains(errs[1].Msg, "LimitRefreshPeriod is too short") {
		t.Errorf("limit 0, period 0: %v", errs)
	}
	d := limiter.Spec{Type: limiter.TypeResilience4j}
	d.Normalize()
	if got := d.ValuesOf(limiter.ParamTimeoutMS); len(got) != 1 || got[0] != 5000 {
		t.Errorf("timeout defaults to %v, want Resilience4j's 5 s", got)
	}
}

// Releases in order, held at most the timeout, and under the fixed
// window's staircase limit*(floor(d/P) + 2).
func TestResilience4jGuarantees(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(40, uint64(run)))
		period := float64(1+rng.IntN(300)) + []float64{0, 0.25, 0.000001}[rng.IntN(3)]
		timeout := []float64{0, period / 3, 2.5 * period, float64(rng.IntN(1000))}[rng.IntN(4)]
		p := r4jParams(float64(1+rng.IntN(10)), period, timeout)
		g := libGate(t, limiter.TypeResilience4j, p, nil, 1)
		rs := offerAll(t, g, randomTimes(rng, 50+rng.IntN(250)), nil, nil)
		bound, _ := limiter.GateDelayBoundMS(&limiter.Spec{Type: limiter.TypeResilience4j}, p)
		for _, r := range rs {
			if r.release-r.t > bound+1e-9 {
				t.Fatalf("run %d %v: held %g ms, more than the timeout", run, p, r.release-r.t)
			}
		}
		checkKindCurve(t, run, limiter.TypeResilience4j, p, releaseTimes(rs))
	}
}
