package limiter

import "github.com/ratelab/ratelab/experiments/calculus"

// GuavaSmoothWarmingUp is Guava's RateLimiter.create(permitsPerSecond,
// warmupPeriod, unit): a SmoothWarmingUp (SmoothRateLimiter.java, class
// SmoothWarmingUp: doSetRate, storedPermitsToWaitTime,
// coolDownIntervalMicros) with cold factor 3, asked tryAcquire(1,
// timeout_ms) per request. See guavaSmooth for the state machine and the
// clock (whole µs).
//
// Starting state: cold, with maxPermits = thresholdPermits +
// 2*warmup/(I + 3I) stored (thresholdPermits = warmup/(2I), I the stable
// interval). Stored permits above the threshold cost more than I (up to 3I
// at maxPermits): a cold limiter lets fewer than rate requests through,
// about half the rate over its first warm-up period under saturation, and it
// cools down again when idle (stored permits come back at maxPermits per
// warm-up period). It never bursts; it delays (up to timeout_ms) and
// rejects (a caller whose wait would pass its timeout).
//
// Curve: consecutive releases are at least I - 4 µs apart (every permit
// costs at least I, less up to three truncated terms and the µs clock), so
// the output obeys 1 + d/(I - 4 µs). DelayBoundMS is the timeout; Nominal
// the (stable) rate times the window.
type GuavaSmoothWarmingUp = guavaSmooth

// TypeGuavaSmoothWarmingUp is Guava SmoothWarmingUp's type name.
const TypeGuavaSmoothWarmingUp Type = "guava-smooth-warming-up"

// NewGuavaSmoothWarmingUp builds the gate: rate in permits/s, warm-up and
// timeout in ms (whole µs).
func NewGuavaSmoothWarmingUp(rateRPS, warmupMS, timeoutMS float64) *GuavaSmoothWarmingUp {
	return newGuavaWarmingUp(rateRPS, settingUnits(warmupMS, 1000), settingUnits(timeoutMS, 1000))
}

func guavaSmoothWarmingUpKind() *Kind {
	return &Kind{
		Type:       TypeGuavaSmoothWarmingUp,
		RetryAfter: "when tryAcquire's canAcquire turns true, nextFreeTicket - timeout_ms (Guava itself gives none)",
		Model:      "Guava SmoothWarmingUp (rate_rps, warmup_ms, timeout_ms): starts cold, cold factor 3, ramps to the rate over the warm-up; tryAcquire with a timeout, µs clock; delays and rejects",
		Params: []Param{
			guavaRateParam,
			{Name: ParamWarmupMS, Admits: AdmitsSmaller, Label: "Warm-up", Unit: "ms",
				RangeNote: "Guava takes a warm-up of 0, but its stored permits then turn NaN and it admits everything",
				Min:       0.001, Max: MaxWindowMS,
				Doc: "warmupPeriod in whole µs: the time from cold to the stable rate under saturation"},
			guavaTimeoutParam,
		},
		Size:    ParamWarmupMS,
		Stage:   true,
		Example: Params{ParamRate: 100, ParamWarmupMS: 1000, ParamTimeoutMS: 100},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewGuavaSmoothWarmingUp(p[ParamRate], p[ParamWarmupMS], p[ParamTimeoutMS]), nil
		},
		Curve: func(p Params) calculus.Curve {
			return calculus.Shaper(1000 / (1e6/p[ParamRate] - guavaWarmLostMicro))
		},
		DelayBoundMS: func(_ *Spec, p Params) float64 { return guavaDelayBound(p) },
		Nominal:      rateNominal,
	}
}
