package limiter

import "github.com/ratelab/ratelab/experiments/calculus"

// GuavaSmoothBursty is Guava's RateLimiter.create(permitsPerSecond): a
// SmoothBursty (SmoothRateLimiter.java, class SmoothBursty) with
// maxBurstSeconds (1 s in create; max_burst_ms here), asked
// tryAcquire(1, timeout_ms) per request. See guavaSmooth for the state
// machine and the clock (whole µs).
//
// Starting state: no stored permits at creation (t = 0); they accrue at the
// rate while the limiter is idle, up to rate*max_burst_ms/1000, and cost no
// time, so after an idle spell that many requests pass back to back, plus
// one whose fresh permit is charged to the next request. It both delays (up
// to timeout_ms) and rejects (a caller whose wait would pass its timeout).
//
// Curve: with I the stable interval in µs, releases obey
// 1 + (maxPermits*I + 3 µs)/(I - 1 µs) + d/(I - 1 µs): the limiter is a
// greedy token-bucket shaper of maxPermits+1 tokens at 1/I, except that
// each fresh permit's (long) cast may drop up to 1 µs and the µs clock adds
// up to 1 µs at each end. DelayBoundMS is the timeout (the sleep is at most
// the timeout); Nominal the rate times the window.
type GuavaSmoothBursty = guavaSmooth

// TypeGuavaSmoothBursty is Guava SmoothBursty's type name.
const TypeGuavaSmoothBursty Type = "guava-smooth-bursty"

// NewGuavaSmoothBursty builds the gate: rate in permits/s, max burst and
// timeout in ms (whole µs).
func NewGuavaSmoothBursty(rateRPS, maxBurstMS, timeoutMS float64) *GuavaSmoothBursty {
	return newGuavaBursty(rateRPS, maxBurstMS/1000, settingUnits(timeoutMS, 1000))
}

func guavaSmoothBurstyKind() *Kind {
	return &Kind{
		Type:       TypeGuavaSmoothBursty,
		RetryAfter: "when tryAcquire's canAcquire turns true, nextFreeTicket - timeout_ms (Guava itself gives none)",
		Model:      "Guava SmoothBursty (rate_rps, max_burst_ms, timeout_ms): stored permits cost nothing, none at the start; tryAcquire with a timeout, µs clock; delays and rejects",
		Params: []Param{
			guavaRateParam,
			{Name: ParamMaxBurstMS, Admits: AdmitsLarger, Label: "Max burst", Unit: "ms", Min: 0, Max: MaxWindowMS, Default: 1000,
				Doc: "maxBurstSeconds in ms: how long an idle limiter saves permits for (RateLimiter.create: 1 s)"},
			guavaTimeoutParam,
		},
		Size:    ParamMaxBurstMS,
		Stage:   true,
		Example: Params{ParamRate: 100, ParamMaxBurstMS: 1000, ParamTimeoutMS: 100},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewGuavaSmoothBursty(p[ParamRate], p[ParamMaxBurstMS], p[ParamTimeoutMS]), nil
		},
		Curve: func(p Params) calculus.Curve {
			g := NewGuavaSmoothBursty(p[ParamRate], p[ParamMaxBurstMS], p[ParamTimeoutMS])
			i := g.stableIntervalMicros - guavaLostMicros
			return calculus.Affine(1000/i, 1+(g.maxPermits*g.stableIntervalMicros+3)/i)
		},
		DelayBoundMS: func(_ *Spec, p Params) float64 { return guavaDelayBound(p) },
		Nominal:      rateNominal,
	}
}
