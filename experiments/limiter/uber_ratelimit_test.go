package limiter_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"go.uber.org/ratelimit"

	"github.com/ratelab/ratelab/experiments/limiter"
)

func TestUberRateLimitTable(t *testing.T) {
	t.Parallel()
	uber := limiter.Spec{Type: limiter.TypeUberRateLimit}
	for _, c := range []gateCase{
		{
			// 10 per second, slack 2: perRequest 100 ms. The first Take
			// passes and starts with no slack; then 100 ms apart.
			name: "no slack at the start", spec: uber,
			params: limiter.Params{limiter.ParamLimit: 10, limiter.ParamPeriod: 1000, limiter.ParamSlack: 2},
			events: []event{admit(0), shaped(0, 100), shaped(0, 200), shaped(150, 300), admit(400)},
		},
		{
			// After a pause the slack lets slack+1 = 3 requests through at
			// once (next = now - maxSlack), then paces again.
			name: "slack after a pause", spec: uber,
			params: limiter.Params{limiter.ParamLimit: 10, limiter.ParamPeriod: 1000, limiter.ParamSlack: 2},
			events: []event{admit(0), admit(1000), admit(1000), admit(1000), shaped(1000, 1100), shaped(1000, 1200)},
		},
		{
			// Slack 1 (100 ms): at 250 ms next = 100 lags by 150 ms, within
			// maxSlack + perRequest, so it moves on the old schedule to 200
			// and the request passes; the next one gets 300 and waits:
			// 50 ms of unused time is no whole request.
			name: "partial slack", spec: uber,
			params: limiter.Params{limiter.ParamLimit: 10, limiter.ParamPeriod: 1000, limiter.ParamSlack: 1},
			events: []event{admit(0), shaped(0, 100), admit(250), shaped(250, 300), shaped(250, 400)},
		},
		{
			// WithoutSlack: next snaps to now after a pause; never two
			// closer than perRequest.
			name: "without slack", spec: uber,
			params: limiter.Params{limiter.ParamLimit: 10, limiter.ParamPeriod: 1000, limiter.ParamSlack: 0},
			events: []event{admit(0), admit(1000), shaped(1000, 1100), shaped(1050, 1200)},
		},
		{
			// Per 1 s / 3 truncates to 333333333 ns: releases 1 ns early
			// every third of a second.
			name: "integer perRequest", spec: uber,
			params: limiter.Params{limiter.ParamLimit: 3, limiter.ParamPeriod: 1000, limiter.ParamSlack: 0},
			events: []event{admit(0), shaped(0, 333.333333), shaped(0, 666.666666), shaped(0, 999.999999)},
		},
	} {
		t.Run(c.name, c.run)
	}
}

// fakeClock is a ratelimit.Clock set to each arrival; Sleep returns at
// once (the release is the time Take returns).
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time      { return c.now }
func (c *fakeClock) Sleep(time.Duration) {}

// uberEpoch is the fake clock's t = 0 (any time after 1970: the limiter's
// state 0 means "no Take yet").
var uberEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// uberParams draws ratelimit.New's settings.
func uberParams(rng *rand.Rand) (limit int, periodMS float64, slack int) {
	limit = 1 + rng.IntN(1000)
	periodMS = []float64{1000, 1000, 60_000, float64(1 + rng.IntN(5000)), 0.5 + rng.Float64()*100}[rng.IntN(5)]
	slack = []int{0, 10, rng.IntN(30)}[rng.IntN(3)]
	return limit, periodMS, slack
}

// TestUberRateLimitMatchesLibrary compares every release with the time
// go.uber.org/ratelimit's Take returns, with the clock set to each
// arrival through ratelimit.WithClock.
func TestUberRateLimitMatchesLibrary(t *testing.T) {
	t.Parallel()
	decisions, delayed := 0, 0
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(30, uint64(run)))
		limit, periodMS, slack := uberParams(rng)
		ours := limiter.NewUberRateLimit(limit, periodMS, slack)
		clock := &fakeClock{}
		per := time.Duration(math.Round(periodMS * 1e6))
		theirs := ratelimit.New(limit, ratelimit.Per(per), ratelimit.WithSlack(slack), ratelimit.WithClock(clock))
		for i, at := range randomTimes(rng, 50+rng.IntN(250)) {
			release, ok := ours.Offer(at, 0)
			now := uberEpoch.Add(time.Duration(math.Round(at * 1e6)))
			clock.now = now
			took := theirs.Take()
			want := at
			if took.After(now) {
				want = max(at, float64(took.Sub(uberEpoch))/1e6)
			}
			if !ok || release != want {
				t.Fatalf("run %d (New(%d, Per(%v), WithSlack(%d))), arrival %d at %g ms: ok=%v release %g, Take returned %g",
					run, limit, per, slack, i, at, ok, release, want)
			}
			decisions++
			if release > at {
				delayed++
			}
		}
	}
	if delayed == 0 || delayed == decisions {
		t.Fatalf("%d of %d requests delayed: the comparison never exercised both answers", delayed, decisions)
	}
	t.Logf("%d lists, %d Takes (%d waited): every release equal to go.uber.org/ratelimit's to the nanosecond", propertyRuns, decisions, delayed)
}

// TestUberRateLimitPacesWithSlack: releases in arrival order, never
// before the arrival, and at most (slack+1) + d/perRequest in any closed
// window of d (a GCRA spacer with tolerance slack*perRequest); without
// slack, consecutive releases are at least perRequest apart.
func TestUberRateLimitPacesWithSlack(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(31, uint64(run)))
		limit, periodMS, slack := uberParams(rng)
		g := limiter.NewUberRateLimit(limit, periodMS, slack)
		rs := offerAll(t, g, randomTimes(rng, 50+rng.IntN(250)), nil, nil)
		per := float64(g.PerRequestNS())
		ts := releaseTimes(rs)
		// releases are whole ns: compare in ns
		for i := range ts {
			for j := i; j < len(ts); j++ {
				dNS := math.Round(ts[j]*1e6) - math.Round(ts[i]*1e6)
				if n := float64(j - i + 1); n > float64(slack+1)+dNS/per+relTol {
					t.Fatalf("run %d (limit %d per %g ms, slack %d): %g releases in %g ns, more than %d + d/perRequest",
						run, limit, periodMS, slack, n, dNS, slack+1)
				}
			}
		}
		if slack == 0 {
			for i := 1; i < len(ts); i++ {
				if gap := math.Round(ts[i]*1e6) - math.Round(ts[i-1]*1e6); gap < per {
					t.Fatalf("run %d: releases %g ns apart without slack, perRequest %g ns", run, gap, per)
				}
			}
		}
	}
}
