package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
)

// UberRateLimit is go.uber.org/ratelimit (v0.3.1): ratelimit.New(limit,
// ratelimit.Per(period_ms), ratelimit.WithSlack(slack)), the default
// atomic int64 limiter (limiter_atomic_int64.go, newAtomicInt64Based and
// Take). Every request calls Take at its arrival and is released when Take
// returns: requests wait, never refused (a shaper).
//
// Take keeps one time, the next permission issue time next, and at now:
//
//   - first call, or no slack and now - next > perRequest: next = now;
//   - slack and now - next > maxSlack + perRequest: next = now - maxSlack;
//   - otherwise next = next + perRequest;
//
// and sleeps until next when that is later than now. So the release of a
// request is max(now, previous next + perRequest), and next lags now by at
// most maxSlack: a GCRA spacer with emission interval perRequest and
// tolerance maxSlack, releases at least perRequest apart after a burst of
// up to slack+1.
//
// The model is the library's integer arithmetic:
//
//   - Clock granularity: 1 ns (Clock.Now().UnixNano()); an arrival at t ms
//     is t*1e6 ns, rounded.
//   - perRequest = Per / time.Duration(rate), truncated to the nanosecond
//     (New(3) spaces 333333333 ns, 3.000000003 per second); maxSlack =
//     slack*perRequest.
//   - The release is the nanosecond Take returns, as ms.
//
// Starting state: the first request passes at once and sets next to its
// arrival, so the slack starts empty: a second request at the same instant
// waits perRequest. Slack builds up only while requests come less often
// than perRequest.
//
// Its releases obey (slack+1) + d/perRequest in any window of d (Curve; the
// tests check it), but the wait has no bound (Waits: Take never refuses, so
// the queue grows as long as requests come faster than the rate). Its
// points get no end-to-end bound (the note says why), and it is no chain
// stage (a chain adds the stages' delay bounds).
type UberRateLimit struct {
	_          cacheline.Pad // a sweep's points run side by side (package cacheline)
	perRequest int64
	maxSlack   int64
	next       int64
	started    bool
	_          cacheline.Pad
}

// NewUberRateLimit returns ratelimit.New(limit, Per(periodMS), WithSlack(slack))
// before its first Take (the period rounded to the nanosecond).
func NewUberRateLimit(limit int, periodMS float64, slack int) *UberRateLimit {
	per := int64(math.Round(periodMS*1e6)) / int64(limit)
	return &UberRateLimit{perRequest: per, maxSlack: int64(slack) * per}
}

// Offer is Take at t: the release is when Take returns.
func (u *UberRateLimit) Offer(t float64, _ int32) (float64, bool) {
	now := xrateNS(t)
	switch {
	case !u.started || (u.maxSlack == 0 && now-u.next > u.perRequest):
		u.next = now
	case u.maxSlack > 0 && now-u.next > u.maxSlack+u.perRequest:
		u.next = now - u.maxSlack
	default:
		u.next += u.perRequest
	}
	u.started = true
	if u.next-now > 0 {
		return max(t, float64(u.next)/1e6), true
	}
	return t, true
}

// PerRequestNS is the spacing ratelimit computes, in ns.
func (u *UberRateLimit) PerRequestNS() int64 { return u.perRequest }

// TypeUberRateLimit is go.uber.org/ratelimit's type name.
const TypeUberRateLimit Type = "uber-ratelimit"

// UberRateLimit never refuses (Take waits), so it has no Retry-After (no
// Advisor, an empty RetryAfter in its row); nor has None.

func uberRateLimitKind() *Kind {
	return &Kind{
		Type:  TypeUberRateLimit,
		Model: "go.uber.org/ratelimit (limit per period_ms, slack): Take paces requests perRequest = period/limit ns apart after a burst of up to slack+1, starting with no slack; never refuses",
		Params: []Param{
			{Name: ParamLimit, Admits: AdmitsLarger, Label: "Rate", Unit: "requests", Integer: true, Min: 1, Max: 1_000_000,
				Doc:       "the rate of ratelimit.New: requests per period",
				RangeNote: "ratelimit.New divides the period by the rate, so 0 is an integer division by zero; the lab stops at 1000000 per period"},
			{Name: ParamPeriod, Admits: AdmitsSmaller, Label: "Period", Unit: "ms", Min: 1, Max: MaxWindowMS, Default: 1000,
				Doc:       "ratelimit.Per (1000 by default)",
				RangeNote: "the lab takes periods of 1 ms to a day, so that perRequest is at least 1 ns"},
			{Name: ParamSlack, Admits: AdmitsLarger, Label: "Slack", Unit: "requests", Integer: true, Min: 0, Max: 100_000, Default: 10,
				Doc:       "ratelimit.WithSlack: unspent permissions kept for a burst (10 by default; 0 is WithoutSlack)",
				RangeNote: "ratelimit takes a slack from 0 (WithoutSlack); the lab stops at 100000, where slack*perRequest still fits an int64 of ns"},
		},
		Size:    ParamSlack,
		Example: Params{ParamLimit: 100, ParamPeriod: 1000, ParamSlack: 10},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewUberRateLimit(int(p[ParamLimit]), p[ParamPeriod], int(p[ParamSlack])), nil
		},
		// (slack+1) + d/perRequest, perRequest = period/limit in whole ns.
		Curve: func(p Params) calculus.Curve {
			perRequestMS := math.Floor(p[ParamPeriod]*1e6/p[ParamLimit]) / 1e6
			return calculus.Affine(1/perRequestMS, p[ParamSlack]+1)
		},
		Waits:   true,
		Nominal: perPeriodNominal,
	}
}
