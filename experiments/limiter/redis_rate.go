package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/calculus"
)

// RedisRate is github.com/go-redis/redis_rate v10 (v10.0.1): Limiter.Allow
// with Limit{Rate: limit, Burst: burst, Period: period_ms}, one key. Allow
// runs the Lua script allowN of lua.go in Redis (a GCRA after rwz/redis-gcra)
// with cost 1; rate.go's AllowN passes it burst, rate, Period.Seconds() and
// the cost. The request passes at its arrival or is rejected: it only
// rejects, never delays.
//
// The script, in Lua numbers (float64), seconds since 2017-01-01:
//
//	T = period / rate; now = (TIME seconds - 1483228800) + TIME micros / 1e6
//	tat = GET key, or now; tat = max(tat, now); new_tat = tat + T
//	allow_at = new_tat - T*burst; remaining = (now - allow_at) / T
//	remaining < 0: rejected; else allowed, and if new_tat - now > 0
//	SET key new_tat EX ceil(new_tat - now)
//
// The gate computes exactly these float64 operations in this order, so it
// takes the library's decisions, rounding included:
//
//   - Clock granularity: 1 µs, Redis TIME. An arrival at t ms is t*1e6 ns
//     after 2026-01-01T00:00:00Z, rounded to the nanosecond, and TIME
//     truncates that to the microsecond.
//   - At 2026 the script's now is about 2.8e8 s, where float64 steps are
//     2^-24 s (60 ns): new_tat = tat + T rounds to that grid. The error does
//     not cancel: with T = 1 ms every step loses 0.216 of a grid step, so a
//     key that stays busy admits 1.29e-5 more requests than 1000/s (one
//     more every 78 s). The textbook bound burst + rate*d is then exceeded
//     by a request for every 78 s the key stays busy; the gate's curve
//     below counts it.
//   - The stored TAT round-trips exactly: Redis writes a Lua number given
//     to a command with %.17g (the shortest exact decimal since 7.0), as
//     miniredis does.
//   - The key's expiry is left out: it passes after Redis's clock reaches
//     the stored TAT (EX is ceil(new_tat - now) s and Redis expires a key
//     strictly after its time), by at least the microsecond of the clock,
//     and from then on max(tat, now) = now whether or not the key is still
//     there.
//   - burst 0 refuses every request, as the script does (allow_at = now +
//     T); a rate of 0 is refused by validation (the script divides by it).
//
// Starting state: no key, so tat = now: the first burst requests pass back
// to back (a full bucket).
//
// Its output obeys the GCRA's curve burst + d/T widened by the script's
// clock and rounding: n admissions in a window of d s need n*(T - h) <=
// d + 1.002 µs + 3h + T*burst, where h = 2^-25 s is the rounding of one
// operation (half the 2^-24 s step): rate 1/(T - h), burst
// (T*burst + 1.002 µs + 3h)/(T - h).
type RedisRate struct {
	emission    float64 // T, s
	burstOffset float64 // T*burst, s
	tat         float64
	hasTAT      bool
}

// Redis clock constants: the script's epoch and the lab's t = 0.
const (
	redisJan2017  = 1483228800 // the script's jan_1_2017
	redisEpochSec = 1767225600 // t = 0 is 2026-01-01T00:00:00Z
	// redisHalfStep is h: half the float64 step 2^-24 s of the script's
	// now from 2^28 s (mid 2025) to 2^29 s (2034) after 2017.
	redisHalfStep = 0x1p-25
)

// NewRedisRate returns the limiter of Limit{Rate: limit, Burst: burst,
// Period: periodMS} (the period rounded to the nanosecond), no key yet.
func NewRedisRate(limit, burst int, periodMS float64) *RedisRate {
	period := durationSeconds(int64(math.Round(periodMS * 1e6))) // Period.Seconds()
	t := period / float64(limit)
	return &RedisRate{emission: t, burstOffset: t * float64(burst)}
}

// redisNow is the script's now for an arrival at t ms.
func redisNow(t float64) float64 {
	us := xrateNS(t) / 1000 // TIME: seconds and microseconds
	sec, usec := redisEpochSec+us/1e6, us%1e6
	return float64(sec-redisJan2017) + float64(usec)/1e6
}

// Offer runs the script at t.
func (g *RedisRate) Offer(t float64, _ int32) (float64, bool) {
	now := redisNow(t)
	newTAT, diff := g.script(now)
	if remaining := diff / g.emission; remaining < 0 {
		return 0, false
	}
	if newTAT-now > 0 { // reset_after > 0: SET
		g.tat, g.hasTAT = newTAT, true
	}
	return t, true
}

// NextAdmitMS is the first time at which the script would allow the
// request (Advisor). The script itself answers a refusal with
// retry_after = -(now - allow_at) seconds (Result.RetryAfter); the request
// passes at the first microsecond of Redis's clock at or after now +
// retry_after, and this is the first float64 time that reads as it. +Inf
// with burst 0 (allow_at = now + T is never reached).
func (g *RedisRate) NextAdmitMS(t float64, _ int32) float64 {
	if g.burstOffset <= 0 {
		return math.Inf(1)
	}
	guess := t
	if retry := g.retryAfter(redisNow(t)); retry > 0 {
		guess = t + retry*1000
	}
	return firstAdmit(t, guess, func(x float64) bool { return g.retryAfter(redisNow(x)) <= 0 })
}

// retryAfter is the script's answer at now: -(now - allow_at), the
// seconds until allow_at, which the request passes at (<= 0) or waits for.
func (g *RedisRate) retryAfter(now float64) float64 {
	if _, diff := g.script(now); diff/g.emission < 0 {
		return -diff
	}
	return 0
}

// script is the script's arithmetic at now, the stored TAT as it is: the
// new TAT a request would store and diff = now - allow_at (allowed when
// not negative).
func (g *RedisRate) script(now float64) (newTAT, diff float64) {
	tat := now
	if g.hasTAT {
		tat = g.tat
	}
	tat = math.Max(tat, now)
	newTAT = tat + g.emission // increment = T * cost, cost 1
	return newTAT, now - (newTAT - g.burstOffset)
}

// TAT is the stored theoretical arrival time in the script's seconds
// since 2017, and whether the key exists.
func (g *RedisRate) TAT() (float64, bool) { return g.tat, g.hasTAT }

// TypeRedisRate is the redis_rate limiter's type name.
const TypeRedisRate Type = "redis-rate"

// Parameters of the limiters configured per period.
const (
	ParamPeriod = "period_ms"
	ParamSlack  = "slack"
)

// redisRateCurve is the GCRA curve with the script's clock and rounding.
func redisRateCurve(p Params) calculus.Curve {
	const h = redisHalfStep
	t := NewRedisRate(int(p[ParamLimit]), int(p[ParamBurst]), p[ParamPeriod]).emission
	if !(t > 4*h) { // parameters outside the validated range (curveGates probes)
		return calculus.Affine(0, math.Inf(1))
	}
	burst := (t*p[ParamBurst]*(1+0x1p-52) + 1.002e-6 + 3*h) / (t - h)
	return calculus.Affine(1/((t-h)*1000), burst)
}

func redisRateKind() *Kind {
	return &Kind{
		Type:       TypeRedisRate,
		RetryAfter: "the script's Result.RetryAfter, at the first µs of Redis's clock",
		Model:      "go-redis redis_rate v10 (limit per period_ms, burst): its Lua GCRA with the 1 µs Redis clock and float64 seconds since 2017; policer",
		Params: []Param{
			{Name: ParamLimit, Admits: AdmitsLarger, Label: "Rate", Unit: "requests", Integer: true, Min: 1, Max: 1_000_000,
				Doc:       "Limit.Rate: requests per period; the emission interval is period/rate",
				RangeNote: "redis_rate's script divides the period by Limit.Rate, so 0 is no limit at all; the lab stops at 1000000 per period"},
			{Name: ParamPeriod, Admits: AdmitsSmaller, Label: "Period", Unit: "ms", Min: 1000, Max: MaxWindowMS, Default: 1000,
				Doc:       "Limit.Period (PerSecond 1000, PerMinute 60000, PerHour 3600000)",
				RangeNote: "the lab takes Limit.Period from 1 s (PerSecond) to a day; a shorter period is the same emission interval as a longer one with a larger rate"},
			{Name: ParamBurst, Admits: AdmitsLarger, Label: "Burst", Unit: "requests", Integer: true, Min: 0, Max: MaxSize,
				Doc:       "Limit.Burst: requests admitted back to back (PerSecond sets it to the rate)",
				RangeNote: "redis_rate takes a Burst from 0, which refuses every request"},
		},
		Size:    ParamBurst,
		Stage:   true,
		Example: Params{ParamLimit: 100, ParamPeriod: 1000, ParamBurst: 100},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewRedisRate(int(p[ParamLimit]), int(p[ParamBurst]), p[ParamPeriod]), nil
		},
		Curve:   redisRateCurve,
		Nominal: perPeriodNominal,
	}
}

// perPeriodNominal is limit requests per period_ms over a window.
func perPeriodNominal(p Params, windowMS float64) float64 {
	return p[ParamLimit] * windowMS / p[ParamPeriod]
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*RedisRate) releaseAt(y float64, _ int32) float64 { return y }
