package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
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
//     after the clock start, clock_start_unix_s (whole seconds since
//     1970, UTC; default 1767225600, 2026-01-01T00:00:00Z), rounded to the
//     nanosecond, and TIME truncates that to the microsecond. The script's
//     now counts from 2017 in float64 seconds, so its rounding (and rarely
//     a decision at a boundary) depends on the date: the parameter makes
//     the gate exact at any date from 2017 on. It is a setting of the
//     config, written into the normalized document, never read from the
//     wall clock.
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
// operation (half the float64 step of now: 2^-25 s from mid 2025 to 2034,
// redisHalfStepAt): rate 1/(T - h), burst (T*burst + 1.002 µs + 3h)/(T - h).
type RedisRate struct {
	_           cacheline.Pad // a sweep's points run side by side (package cacheline)
	emission    float64       // T, s
	burstOffset float64       // T*burst, s
	epochSec    int64         // the clock start, Unix seconds
	tat         float64
	hasTAT      bool
	_           cacheline.Pad
}

// Redis clock constants: the script's epoch and the range of the lab's
// t = 0 (clock_start_unix_s).
const (
	redisJan2017 = 1483228800 // the script's jan_1_2017
	// RedisClockStartDefault is the default clock_start_unix_s:
	// 2026-01-01T00:00:00Z.
	RedisClockStartDefault = 1767225600
	// RedisClockStartMax is the latest clock start the gate takes:
	// 2100-01-01T00:00:00Z.
	RedisClockStartMax = 4102444800
	// redisHorizonSec is how far past the clock start the gate's curve
	// counts the script's rounding: 2^20 s (12 days), past any run (one
	// day at most) and its retries.
	redisHorizonSec = 1 << 20
)

// redisHalfStepAt is h for a clock start: half the float64 step of the
// script's now (seconds since 2017) at the clock start plus the horizon,
// the largest now of a run (2^-25 s at 2026: now is in [2^28, 2^29) s).
func redisHalfStepAt(startSec int64) float64 {
	return math.Ldexp(1, math.Ilogb(float64(startSec-redisJan2017+redisHorizonSec))-53)
}

// NewRedisRate returns the limiter of Limit{Rate: limit, Burst: burst,
// Period: periodMS} (the period rounded to the nanosecond), no key yet,
// its t = 0 at the default clock start (2026-01-01).
func NewRedisRate(limit, burst int, periodMS float64) *RedisRate {
	return NewRedisRateAt(limit, burst, periodMS, RedisClockStartDefault)
}

// NewRedisRateAt is NewRedisRate with its t = 0 at clockStartSec, Unix
// seconds (Redis's clock then reads clockStartSec s and 0 µs).
func NewRedisRateAt(limit, burst int, periodMS float64, clockStartSec int64) *RedisRate {
	period := durationSeconds(int64(math.Round(periodMS * 1e6))) // Period.Seconds()
	t := period / float64(limit)
	return &RedisRate{emission: t, burstOffset: t * float64(burst), epochSec: clockStartSec}
}

// now is the script's now for an arrival at t ms.
func (g *RedisRate) now(t float64) float64 {
	us := xrateNS(t) / 1000 // TIME: seconds and microseconds
	sec, usec := g.epochSec+us/1e6, us%1e6
	return float64(sec-redisJan2017) + float64(usec)/1e6
}

// Offer runs the script at t.
func (g *RedisRate) Offer(t float64, _ int32) (float64, bool) {
	now := g.now(t)
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
	if retry := g.retryAfter(g.now(t)); retry > 0 {
		guess = t + retry*1000
	}
	return firstAdmit(t, guess, func(x float64) bool { return g.retryAfter(g.now(x)) <= 0 })
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
	// ParamClockStart is redis-rate's clock start: the Unix second at
	// which the run's t = 0 falls on Redis's clock.
	ParamClockStart = "clock_start_unix_s"
)

// redisRateCurve is the GCRA curve with the script's clock and rounding.
func redisRateCurve(p Params) calculus.Curve {
	start := redisClockStart(p)
	h := redisHalfStepAt(start)
	t := NewRedisRateAt(int(p[ParamLimit]), int(p[ParamBurst]), p[ParamPeriod], start).emission
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
			{Name: ParamClockStart, Admits: AdmitsNone, Label: "Clock start", Unit: "s", Units: "s since 1970", Integer: true,
				Min: redisJan2017, Max: RedisClockStartMax, Default: RedisClockStartDefault,
				Doc:       "Unix second of the run's t = 0 on Redis's clock (1767225600: 2026-01-01T00:00:00Z); the script's float64 seconds since 2017 round by the date",
				RangeNote: "the lab takes dates from 2017-01-01, the script's epoch, to 2100-01-01"},
		},
		Size:    ParamBurst,
		Stage:   true,
		Example: Params{ParamLimit: 100, ParamPeriod: 1000, ParamBurst: 100},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewRedisRateAt(int(p[ParamLimit]), int(p[ParamBurst]), p[ParamPeriod], redisClockStart(p)), nil
		},
		Curve:   redisRateCurve,
		Nominal: perPeriodNominal,
	}
}

// redisClockStart is a point's clock start: the default when the
// parameter is absent (a gate built by hand from the older parameters).
func redisClockStart(p Params) int64 {
	if v, ok := p[ParamClockStart]; ok {
		return int64(v)
	}
	return RedisClockStartDefault
}

// perPeriodNominal is limit requests per period_ms over a window.
func perPeriodNominal(p Params, windowMS float64) float64 {
	return p[ParamLimit] * windowMS / p[ParamPeriod]
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*RedisRate) releaseAt(y float64, _ int32) float64 { return y }
