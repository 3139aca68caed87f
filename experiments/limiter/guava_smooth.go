package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
)

// guavaSmooth is the state machine of Guava's SmoothRateLimiter
// (guava/src/com/google/common/util/concurrent/SmoothRateLimiter.java,
// Guava 31.1 as Debian 12 ships it; the logic is unchanged in current
// Guava) driven through RateLimiter.tryAcquire(1, timeout, MICROSECONDS)
// (RateLimiter.java: canAcquire, reserveAndGetWaitLength). The two gate
// types, guava-smooth-bursty and guava-smooth-warming-up, differ only in
// how stored permits cost time (storedPermitsToWaitTime) and accrue
// (coolDownIntervalMicros). Written from the source's semantics; the
// differential test in guava_smooth_test.go checks it against the real jar.
//
// Clock: Guava's SleepingStopwatch in whole microseconds; an arrival at t ms
// reads floor(t*1000) µs. Every double operation is Java's, in Java's
// order (explicit float64 conversions keep Go from fusing them).
//
// tryAcquire refuses (false, no state change) when nextFreeTicketMicros -
// timeout > now. Otherwise it reserves: resync (if now > nextFree, stored
// permits grow by (now - nextFree)/coolDownInterval, at most maxPermits,
// and nextFree becomes now), spends min(1, stored) stored permits and the
// rest fresh, pushes nextFree by storedPermitsToWaitTime + (long)(fresh *
// stableInterval), and the caller sleeps nextFree(before) - now: the
// request is released at t + that wait. The wait is charged to the next
// request: one after an idle spell passes at once.
type guavaSmooth struct {
	_                    cacheline.Pad // a sweep's points run side by side (package cacheline)
	stableIntervalMicros float64
	maxPermits           float64
	storedPermits        float64
	nextFreeTicketMicros int64
	timeoutMicros        int64

	warm               bool
	warmupPeriodMicros int64
	thresholdPermits   float64
	slope              float64
	_                  cacheline.Pad
}

// guavaColdFactor is the cold factor RateLimiter.create(rate, warmupPeriod,
// unit) passes: a cold limiter's interval is 3 times the stable one.
const guavaColdFactor = 3.0

// newGuavaBursty is new SmoothBursty(stopwatch, maxBurstSeconds) then
// setRate(rate) at time 0: no stored permits (they accrue from creation).
func newGuavaBursty(rateRPS, maxBurstSeconds float64, timeoutMicros int64) *guavaSmooth {
	g := &guavaSmooth{timeoutMicros: timeoutMicros}
	g.stableIntervalMicros = 1e6 / rateRPS // SECONDS.toMicros(1L) / permitsPerSecond
	g.maxPermits = float64(maxBurstSeconds * rateRPS)
	g.storedPermits = 0 // initial state
	return g
}

// newGuavaWarmingUp is RateLimiter.create(rate, warmupPeriod, MICROSECONDS,
// 3.0, stopwatch) at time 0: it starts cold, with maxPermits stored.
func newGuavaWarmingUp(rateRPS float64, warmupMicros, timeoutMicros int64) *guavaSmooth {
	g := &guavaSmooth{timeoutMicros: timeoutMicros, warm: true, warmupPeriodMicros: warmupMicros}
	stable := 1e6 / rateRPS
	g.stableIntervalMicros = stable
	cold := float64(stable * guavaColdFactor)
	w := float64(warmupMicros)
	g.thresholdPermits = float64(0.5*w) / stable
	g.maxPermits = g.thresholdPermits + float64(2.0*w)/(stable+cold)
	g.slope = (cold - stable) / (g.maxPermits - g.thresholdPermits)
	g.storedPermits = g.maxPermits // initial state is cold
	return g
}

// Offer is tryAcquire(1, timeout, MICROSECONDS) at t.
func (g *guavaSmooth) Offer(t float64, _ int32) (float64, bool) {
	now := clockUnits(t, 1000)
	if g.nextFreeTicketMicros-g.timeoutMicros > now { // !canAcquire
		return 0, false
	}
	// reserveEarliestAvailable(1, now)
	if now > g.nextFreeTicketMicros { // resync
		newPermits := float64(now-g.nextFreeTicketMicros) / g.coolDownIntervalMicros()
		g.storedPermits = math.Min(g.maxPermits, g.storedPermits+newPermits)
		g.nextFreeTicketMicros = now
	}
	moment := g.nextFreeTicketMicros
	spend := math.Min(1, g.storedPermits)
	fresh := 1 - spend
	wait := g.storedPermitsToWaitTime(g.storedPermits, spend) + javaLong(float64(fresh*g.stableIntervalMicros))
	g.nextFreeTicketMicros = saturatedAdd(g.nextFreeTicketMicros, wait)
	g.storedPermits -= spend
	if sleep := max(moment-now, 0); sleep > 0 {
		return t + float64(sleep)/1000, true
	}
	return t, true
}

// NextAdmitMS is when tryAcquire(1, timeout) would succeed again (Advisor):
// canAcquire holds once queryEarliestAvailable - timeout <= now, i.e. at
// the µs nextFreeTicketMicros - timeout_ms, and a refusal changes nothing.
// Guava has no Retry-After of its own; this is the time its canAcquire
// turns true, and the first float64 time that reads as that µs.
func (g *guavaSmooth) NextAdmitMS(t float64, _ int32) float64 {
	u := g.nextFreeTicketMicros - g.timeoutMicros
	if clockUnits(t, 1000) >= u {
		return t
	}
	return firstAdmit(t, float64(u)/1000, func(x float64) bool { return clockUnits(x, 1000) >= u })
}

func (g *guavaSmooth) coolDownIntervalMicros() float64 {
	if g.warm {
		return float64(g.warmupPeriodMicros) / g.maxPermits
	}
	return g.stableIntervalMicros
}

// storedPermitsToWaitTime is 0 for SmoothBursty; for SmoothWarmingUp the
// area under the interval function between stored-take and stored: a
// trapezoid above thresholdPermits, the stable interval below it.
func (g *guavaSmooth) storedPermitsToWaitTime(stored, take float64) int64 {
	if !g.warm {
		return 0
	}
	above := stored - g.thresholdPermits
	var micros int64
	if above > 0 {
		aboveTake := math.Min(above, take)
		length := g.permitsToTime(above) + g.permitsToTime(above-aboveTake)
		micros = javaLong(float64(aboveTake*length) / 2.0)
		take -= aboveTake
	}
	return micros + javaLong(float64(g.stableIntervalMicros*take))
}

func (g *guavaSmooth) permitsToTime(permits float64) float64 {
	return g.stableIntervalMicros + float64(permits*g.slope)
}

// Guava's parameters. The rate stops at 200 000 permits/s, a stable
// interval of 5 µs: Guava counts whole microseconds and truncates every
// wait, so faster limiters run measurably above their rate (the curves
// below account for up to 4 µs lost per request).
const (
	ParamMaxBurstMS    = "max_burst_ms"
	ParamWarmupMS      = "warmup_ms"
	ParamTimeoutMS     = "timeout_ms"
	GuavaMaxRateRPS    = 200_000
	guavaLostMicros    = 1 // per request, SmoothBursty (one truncated term)
	guavaWarmLostMicro = 4 // per request, SmoothWarmingUp (three terms, and the µs clock)
)

var (
	guavaRateParam = Param{Name: ParamRate, Admits: AdmitsLarger, Label: "Rate", Unit: "req/s", Units: "requests/s",
		Min: MinRateRPS, Max: GuavaMaxRateRPS,
		Doc: "permitsPerSecond (Guava takes any rate > 0; the lab stops at 200000/s, a 5 µs interval, as Guava counts whole µs)"}
	guavaTimeoutParam = Param{Name: ParamTimeoutMS, Admits: AdmitsLarger, Label: "Timeout", Unit: "ms", Min: 0, Max: MaxWindowMS,
		Doc: "tryAcquire's timeout, in whole µs: the longest a caller waits for its permit (0: tryAcquire())"}
)

// guavaTimeoutMicros is timeout_ms in whole microseconds.
func guavaTimeoutMicros(p Params) int64 { return settingUnits(p[ParamTimeoutMS], 1000) }

// guavaDelayBound: a caller sleeps at most its timeout (canAcquire holds
// nextFree - timeout <= now and the sleep is nextFree - now).
func guavaDelayBound(p Params) float64 { return float64(guavaTimeoutMicros(p)) / 1000 }
