package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/calculus"
)

// Resilience4j is Resilience4j's AtomicRateLimiter, exact to
// resilience4j-ratelimiter/src/main/java/io/github/resilience4j/ratelimiter/internal/AtomicRateLimiter.java
// (current Resilience4j, where the clock starts at the limiter's creation;
// older releases started it when the class was loaded):
// acquirePermission(1) through calculateNextState,
// nanosToWaitForPermission, reservePermissions and
// waitForPermissionIfNecessary; the settings' limits from
// RateLimiterConfig.java (checkLimitForPeriod, checkLimitRefreshPeriod).
//
// Clock: System.nanoTime() less the limiter's creation (t = 0), whole ns;
// an arrival at t ms reads floor(t*1e6) ns. Time is cut into cycles of
// limit_refresh_period from creation; the limiter starts with
// limit_for_period permissions in cycle 0. On entering a later cycle the
// permissions become min(permissions + elapsed cycles*limit_for_period,
// limit_for_period) (they may be negative: reservations). A request with a
// permission passes at once; else it needs to wait until the start of the
// cycle that will have a permission for it, (full cycles + the rest of this
// one); if that wait is at most timeout_ms it reserves the permission
// (permissions - 1) and is released when the wait ends (its deadline, on
// the ns clock: exactly that cycle's start), else it is refused without
// reserving (Resilience4j still parks the refused caller for the timeout
// before saying no; the lab counts it rejected at once). It both delays and
// rejects; with timeout 0 it only rejects.
//
// Curve: every permission of cycle c is used at a release inside
// [c*P, (c+1)*P), P = limit_refresh_period, so the output obeys the fixed
// window's staircase limit_for_period*(floor(d/P) + 2). DelayBoundMS is the
// timeout. Nominal is limit_for_period per period times the window.
// Counts are int64 here; Java's int permissions would overflow only past
// 2^31 of them.
type Resilience4j struct {
	periodNS    int64
	limit       int64
	timeoutNS   int64
	cycle       int64
	permissions int64
}

// NewResilience4j builds the gate: limit per period, period and timeout in
// ms (whole ns).
func NewResilience4j(limitForPeriod, periodMS, timeoutMS float64) *Resilience4j {
	return &Resilience4j{
		periodNS:    settingUnits(periodMS, 1e6),
		limit:       int64(limitForPeriod),
		timeoutNS:   settingUnits(timeoutMS, 1e6),
		permissions: int64(limitForPeriod),
	}
}

// Offer is acquirePermission(1) at t.
func (g *Resilience4j) Offer(t float64, _ int32) (float64, bool) {
	now := clockUnits(t, 1e6)
	var wait int64
	g.cycle, g.permissions, wait = g.next(now)
	if g.timeoutNS < wait {
		return 0, false
	}
	g.permissions--
	if wait <= 0 {
		return t, true
	}
	return float64(now+wait) / 1e6, true
}

// next is calculateNextState at now without the reservation: the cycle,
// the permissions in it and the wait for a permission (ns).
func (g *Resilience4j) next(now int64) (cycle, permissions, wait int64) {
	cycle, permissions = now/g.periodNS, g.permissions
	if cycle != g.cycle {
		elapsed := cycle - g.cycle
		if elapsed >= (g.limit-permissions)/g.limit+1 { // min(permissions + elapsed*limit, limit)
			permissions = g.limit
		} else {
			permissions = min(permissions+elapsed*g.limit, g.limit)
		}
	}
	if permissions < 1 {
		toNext := (cycle+1)*g.periodNS - now
		atNext := permissions + g.limit
		full := (-(atNext - 1) + g.limit - 1) / g.limit // divCeil
		wait = full*g.periodNS + toNext
	}
	return cycle, permissions, wait
}

// NextAdmitMS is when acquirePermission would succeed again (Advisor): the
// first ns at which nanosToWaitForPermission is at most timeout_ms.
// Resilience4j sends no Retry-After of its own (a refused caller gets
// RequestNotPermitted after waiting the timeout); getDetailedMetrics()
// .getNanosToWait() is the wait a caller would have now, and this is the
// time at which that wait has shrunk to timeout_ms, as the first float64
// time that reads as that ns.
func (g *Resilience4j) NextAdmitMS(t float64, _ int32) float64 {
	now := clockUnits(t, 1e6)
	_, _, wait := g.next(now)
	if wait <= g.timeoutNS {
		return t
	}
	u := now + wait - g.timeoutNS
	return firstAdmit(t, float64(u)/1e6, func(x float64) bool {
		_, _, w := g.next(clockUnits(x, 1e6))
		return w <= g.timeoutNS
	})
}

// TypeResilience4j is Resilience4j AtomicRateLimiter's type name.
const TypeResilience4j Type = "resilience4j"

// Parameter names of Resilience4j.
const (
	ParamLimitForPeriod       = "limit_for_period"
	ParamLimitRefreshPeriodMS = "limit_refresh_period_ms"
)

func resilience4jKind() *Kind {
	return &Kind{
		Type:       TypeResilience4j,
		RetryAfter: "when the wait for a permission has shrunk to timeout_ms (Resilience4j itself gives none)",
		Model:      "Resilience4j AtomicRateLimiter (limit_for_period, limit_refresh_period_ms, timeout_ms): permits per cycle counted from the start, waits up to the timeout; ns clock; delays and rejects",
		Params: []Param{
			{Name: ParamLimitForPeriod, Admits: AdmitsLarger, Label: "Limit for period", Unit: "requests", Integer: true, Min: 1, Max: math.MaxInt32, Default: 50,
				RangeNote: `Resilience4j: "LimitForPeriod should be greater than 0"`,
				Doc:       `limitForPeriod: permissions per cycle ("LimitForPeriod should be greater than 0"; Resilience4j's default 50)`},
			{Name: ParamLimitRefreshPeriodMS, Admits: AdmitsSmaller, Label: "Limit refresh period", Unit: "ms",
				RangeNote: `Resilience4j: "LimitRefreshPeriod is too short" under 1 ns`,
				Min:       1e-6, Max: MaxWindowMS, Default: 0.0005,
				Doc: "limitRefreshPeriod in whole ns: the cycle length (Resilience4j's default 500 ns)"},
			{Name: ParamTimeoutMS, Admits: AdmitsLarger, Label: "Timeout", Unit: "ms", Min: 0, Max: MaxWindowMS, Default: 5000,
				Doc: "timeoutDuration in whole ns: the longest a caller waits for a permission (Resilience4j's default 5 s)"},
		},
		Size:    ParamLimitForPeriod,
		Stage:   true,
		Example: Params{ParamLimitForPeriod: 10, ParamLimitRefreshPeriodMS: 100, ParamTimeoutMS: 100},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewResilience4j(p[ParamLimitForPeriod], p[ParamLimitRefreshPeriodMS], p[ParamTimeoutMS]), nil
		},
		Curve: func(p Params) calculus.Curve {
			return calculus.FixedWindow(p[ParamLimitForPeriod], float64(settingUnits(p[ParamLimitRefreshPeriodMS], 1e6))/1e6)
		},
		DelayBoundMS: func(_ *Spec, p Params) float64 { return float64(settingUnits(p[ParamTimeoutMS], 1e6)) / 1e6 },
		Nominal: func(p Params, windowMS float64) float64 {
			return p[ParamLimitForPeriod] * windowMS / (float64(settingUnits(p[ParamLimitRefreshPeriodMS], 1e6)) / 1e6)
		},
	}
}
