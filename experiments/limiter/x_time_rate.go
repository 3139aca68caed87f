package limiter

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/experiments/calculus"
)

// XTimeRate is golang.org/x/time/rate's Limiter (v0.16.0, rate/rate.go),
// driven with explicit times, in one of two modes:
//
//   - allow: Limiter.AllowN(t, 1), which is reserveN(t, 1, 0): the request
//     passes at t if it needs no wait, else it is rejected and the limiter
//     is left as it was. It only rejects.
//   - reserve: Limiter.ReserveN(t, 1), which is reserveN(t, 1, InfDuration),
//     then Reservation.DelayFrom(t): the request waits that long and passes
//     if the delay is at most max_wait_ms, else the caller gives the
//     reservation back with Reservation.CancelAt(t) and the request is
//     rejected. It delays and rejects. Reservations are made at arrival,
//     so the bucket goes negative: tokens owed by requests still waiting.
//     (Limiter.WaitN with a context deadline max_wait_ms away applies the
//     same test through reserveN(t, 1, max_wait) but reads time.Now and
//     leaves the limiter untouched on a refusal, so its later decisions
//     may differ from these by float rounding.)
//
// The model is the library's, operation by operation (rate.go, functions
// reserveN, advance, durationFromTokens, tokensFromDuration, CancelAt and
// time.Duration.Seconds), not a textbook bucket:
//
//   - Clock granularity: 1 ns. An arrival at t ms is the time.Time t*1e6
//     ns after a fixed epoch, rounded to the nanosecond.
//   - Tokens are a float64 updated only when a reservation succeeds (or is
//     cancelled): tokens = min(burst, tokens + elapsed.Seconds()*rate),
//     where Seconds() is whole seconds plus nanoseconds/1e9.
//   - The wait for a deficit of x tokens is time.Duration((x/rate)*1e9),
//     truncated to the nanosecond, so AllowN admits a request whose deficit
//     needs less than 1 ns of refill, and the bucket then holds slightly
//     less than 0 tokens.
//   - CancelAt restores the token as the library does: tokens end as
//     min(burst, (tokens-1) + 1) in float64, with last moved to t.
//   - Burst 0 refuses every request (n <= burst fails); rate 0 admits the
//     first burst requests and then none (the library's own limits; rate
//     Inf is not offered).
//
// Starting state: NewLimiter(r, b) holds b tokens and a zero last time, so
// the first request finds a full bucket.
//
// Its releases obey burst + rate*(d + 2 ns) in any window of d: the token
// bucket's curve, widened by the nanosecond rounding of the two arrivals
// that bound the window and the truncated wait. In reserve mode a request
// waits at most max_wait_ms (DelayBoundMS). The bound is max_wait_ms in
// allow mode too (a bound reads the parameters, not the mode): give
// max_wait_ms 0 there for the tight bound.
type XTimeRate struct {
	limit     float64 // rate.Limit, events per second
	burst     int
	reserve   bool
	maxWaitNS int64

	tokens  float64
	lastNS  int64
	hasLast bool
}

// OptionXTimeRateMode is the x-time-rate gate's option naming its mode,
// XTimeRateAllow or XTimeRateReserve.
const OptionXTimeRateMode = "mode"

// XTimeRate modes.
const (
	XTimeRateAllow   = "allow"
	XTimeRateReserve = "reserve"
)

// xrateInf is rate.InfDuration, math.MaxInt64 ns.
const xrateInf = int64(math.MaxInt64)

// NewXTimeRate returns rate.NewLimiter(rate, burst) in allow mode, or in
// reserve mode waiting at most maxWaitMS (rounded to the nanosecond).
func NewXTimeRate(rateRPS float64, burst int, reserve bool, maxWaitMS float64) *XTimeRate {
	return &XTimeRate{limit: rateRPS, burst: burst, reserve: reserve, maxWaitNS: xrateNS(maxWaitMS), tokens: float64(burst)}
}

// xrateNS is t ms as whole nanoseconds, rounded.
func xrateNS(tMS float64) int64 { return int64(math.Round(tMS * 1e6)) }

// Offer is AllowN(t, 1), or ReserveN(t, 1) then DelayFrom(t) and, past
// max_wait_ms, CancelAt(t).
func (x *XTimeRate) Offer(t float64, _ int32) (float64, bool) {
	now := xrateNS(t)
	if !x.reserve {
		_, ok := x.reserveN(now, 0)
		if !ok {
			return 0, false
		}
		return t, true
	}
	wait, ok := x.reserveN(now, xrateInf)
	if !ok {
		return 0, false
	}
	if wait > x.maxWaitNS {
		x.cancel(now)
		return 0, false
	}
	if wait == 0 {
		return t, true
	}
	return max(t, float64(now+wait)/1e6), true
}

// reserveN is the library's reserveN(t, 1, maxFutureReserve) for a finite
// limit: the wait in ns and whether the reservation holds.
func (x *XTimeRate) reserveN(now, maxFutureReserve int64) (int64, bool) {
	tokens := x.advance(now)
	tokens--
	var wait int64
	if tokens < 0 {
		wait = x.durationFromTokens(-tokens)
	}
	if 1 > x.burst || wait > maxFutureReserve {
		return wait, false
	}
	x.lastNS, x.hasLast, x.tokens = now, true, tokens
	return wait, true
}

// cancel is Reservation.CancelAt(now) of the reservation just made at now
// (the last event): it restores the whole token.
func (x *XTimeRate) cancel(now int64) {
	tokens := x.advance(now) + 1
	if b := float64(x.burst); tokens > b {
		tokens = b
	}
	x.lastNS, x.tokens = now, tokens
}

// advance is the tokens at now, not stored.
func (x *XTimeRate) advance(now int64) float64 {
	tokens := x.tokens
	if x.limit > 0 {
		if !x.hasLast {
			// t.Sub(time.Time{}) saturates at the largest Duration: the
			// refill fills the bucket.
			tokens += durationSeconds(xrateInf) * x.limit
		} else {
			last := min(x.lastNS, now)
			tokens += durationSeconds(now-last) * x.limit
		}
	} // else tokensFromDuration is 0
	if b := float64(x.burst); tokens > b {
		tokens = b
	}
	return tokens
}

// durationFromTokens is the library's wait for a deficit, truncated to ns.
func (x *XTimeRate) durationFromTokens(tokens float64) int64 {
	if x.limit <= 0 {
		return xrateInf
	}
	d := (tokens / x.limit) * 1e9
	if d > float64(math.MaxInt64) {
		return xrateInf
	}
	return int64(d)
}

// durationSeconds is time.Duration.Seconds.
func durationSeconds(ns int64) float64 {
	sec, nsec := ns/1e9, ns%1e9
	return float64(sec) + float64(nsec)/1e9
}

// NextAdmitMS is the first time at which the request would pass (Advisor):
// in allow mode when AllowN needs no wait, in reserve mode when the wait
// ReserveN gives is at most max_wait_ms. It is what the library itself
// reports: ReserveN(t, 1), DelayFrom(t), then Cancel gives the wait d, and
// the request passes d (allow) or d - max_wait_ms (reserve) later, or the
// first nanosecond after that at which it passes (the wait is truncated to
// the nanosecond, so at t + d the deficit may still need a fraction of a
// nanosecond). Times read as the nanosecond clock does (t*1e6 rounded),
// so the answer is the first float64 time that reads as that nanosecond.
// +Inf with burst 0, or rate 0 once the burst is spent.
func (x *XTimeRate) NextAdmitMS(t float64, _ int32) float64 {
	if x.burst < 1 || (x.limit <= 0 && x.advance(xrateNS(t)) < 1) {
		return math.Inf(1)
	}
	allow := int64(0)
	if x.reserve {
		allow = x.maxWaitNS
	}
	passes := func(at float64) bool {
		tokens := x.advance(xrateNS(at)) - 1
		return tokens >= 0 || x.durationFromTokens(-tokens) <= allow
	}
	deficit := 1 - x.advance(xrateNS(t))
	guess := t + (x.durationFromTokensMS(deficit) - float64(allow)/1e6)
	return firstAdmit(t, guess, passes)
}

// durationFromTokensMS is durationFromTokens in ms, for a guess.
func (x *XTimeRate) durationFromTokensMS(tokens float64) float64 {
	if tokens <= 0 {
		return 0
	}
	return float64(x.durationFromTokens(tokens)) / 1e6
}

// TokensAt is Limiter.TokensAt: the tokens at t ms (negative while
// reservations wait), without changing the limiter.
func (x *XTimeRate) TokensAt(t float64) float64 { return x.advance(xrateNS(t)) }

// TypeXTimeRate is the x/time/rate limiter's type name.
const TypeXTimeRate Type = "x-time-rate"

// ParamMaxWait is how long a reserve-mode request may wait.
const ParamMaxWait = "max_wait_ms"

// xrateSlackMS widens the token bucket's curve by the library's
// nanosecond clock: two arrivals rounded to the ns and a truncated wait.
const xrateSlackMS = 2e-6

var xrateModeOption = Option{Name: OptionXTimeRateMode, Label: "Mode", Choices: []string{XTimeRateAllow, XTimeRateReserve},
	Doc: "allow: AllowN, refuse what must wait; reserve: ReserveN, wait up to max_wait_ms, else CancelAt and refuse"}

func xTimeRateKind() *Kind {
	return &Kind{
		Type:       TypeXTimeRate,
		RetryAfter: "the library's own: ReserveN(t, 1), DelayFrom(t) (less max_wait_ms in reserve mode), then Cancel, to the ns",
		Model:      "golang.org/x/time/rate Limiter (rate_rps, burst), starts full, 1 ns clock; allow: policer; reserve: waits up to max_wait_ms, else refused",
		Params: []Param{
			{Name: ParamRate, Admits: AdmitsLarger, Label: "Rate", Unit: "req/s", Units: "requests/s", Min: 0, Max: MaxRateRPS,
				Doc:       "rate.Limit: tokens per second",
				RangeNote: "x/time/rate takes a rate.Limit from 0 (the first burst requests pass, then none) up; the lab stops at 1000000"},
			{Name: ParamBurst, Admits: AdmitsLarger, Label: "Burst", Unit: "requests", Integer: true, Min: 0, Max: MaxSize,
				Doc:       "the limiter's burst: bucket size and starting tokens",
				RangeNote: "x/time/rate takes a burst from 0 (every request refused) up"},
			{Name: ParamMaxWait, Admits: AdmitsLarger, Label: "Max wait", Unit: "ms", Min: 0, Max: MaxWindowMS, Default: 100,
				Doc: "reserve mode: the longest DelayFrom a request accepts before CancelAt (allow mode ignores it; give 0 there for a tight delay bound)"},
		},
		Options: []Option{xrateModeOption},
		Size:    ParamBurst,
		Stage:   true,
		Example: Params{ParamRate: 100, ParamBurst: 100, ParamMaxWait: 100},
		New: func(s *Spec, p Params, _ Env) (Gate, error) {
			mode := s.Option(OptionXTimeRateMode)
			if mode != "" && mode != XTimeRateAllow && mode != XTimeRateReserve {
				return nil, fmt.Errorf("x-time-rate: mode %q", mode)
			}
			return NewXTimeRate(p[ParamRate], int(p[ParamBurst]), mode == XTimeRateReserve, p[ParamMaxWait]), nil
		},
		Curve: func(p Params) calculus.Curve {
			r := calculus.PerMS(p[ParamRate])
			return calculus.Affine(r, p[ParamBurst]+r*xrateSlackMS)
		},
		// Allow mode never holds a request; reserve mode up to max_wait_ms.
		DelayBoundMS: func(s *Spec, p Params) float64 {
			if s.Option(xrateModeOption.Name) != XTimeRateReserve {
				return 0
			}
			return p[ParamMaxWait]
		},
		Nominal: rateNominal,
	}
}

// releaseAt is when Offer would release a request it admits at y
// (releaser): at y in allow mode, after the reservation's wait in reserve
// mode.
func (x *XTimeRate) releaseAt(y float64, _ int32) float64 {
	if !x.reserve {
		return y
	}
	now := xrateNS(y)
	tokens := x.advance(now) - 1
	if tokens >= 0 {
		return y
	}
	wait := x.durationFromTokens(-tokens)
	if wait == 0 {
		return y
	}
	return max(y, float64(now+wait)/1e6)
}
