package deploy

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// guavaFormat is a Java class RatelabLimiter around Guava's RateLimiter:
// RateLimiter.create(permitsPerSecond) (SmoothBursty, one second of
// stored permits) or RateLimiter.create(permitsPerSecond, warmupPeriod,
// MICROSECONDS) (SmoothWarmingUp), and admit() deciding one request with
// tryAcquire(1, timeout, MICROSECONDS).
//
// Mapping. The guava-smooth-warming-up gate's point is written as it is
// (exact: rate as a Java double, warm-up and timeout in whole µs as the
// gate reads them). The guava-smooth-bursty gate's point is exact when
// max_burst_ms is 1000: Guava's public API has no maxBurstSeconds, so any
// other is written as RateLimiter.create's one second and the rerun has
// max_burst_ms 1000. A bucket (rate r, burst b, requests waiting up to w
// ms) is RateLimiter.create(r) with timeout w; the burst cannot be set
// (after an idle second r permits are stored, and one more passes and
// charges its wait to the next request) and a new RateLimiter starts with
// none stored, where the point's bucket starts full: the notes say so and
// the rerun is the guava-smooth-bursty gate. Rates above 200 000 permits/s
// (a 5 µs interval, where Guava's whole-µs waits run measurably fast) are
// not exported, as the lab's Guava gates stop there.
func guavaFormat() *Format {
	return &Format{
		Name:    "guava",
		Label:   "Guava RateLimiter (Java)",
		Ext:     "java",
		File:    "RatelabLimiter.java",
		Doc:     "a Java class RatelabLimiter: a RateLimiter and admit() with tryAcquire and a timeout",
		Comment: "// ",
		From: append([]From{
			{Type: limiter.TypeGuavaSmoothBursty, export: guavaFromBursty},
			{Type: limiter.TypeGuavaSmoothWarmingUp, export: guavaFromWarmingUp},
		}, bucketFrom(guavaFromBucket)...),
	}
}

// javaDouble writes v as a Java double literal that reads back exactly.
func javaDouble(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// guavaText is the class; warmupMicros < 0 for SmoothBursty.
func guavaText(rate float64, warmupMicros, timeoutMicros int64) string {
	var b strings.Builder
	b.WriteString("import com.google.common.util.concurrent.RateLimiter;\nimport java.util.concurrent.TimeUnit;\n\n")
	create := fmt.Sprintf("RateLimiter.create(%s)", javaDouble(rate))
	what := fmt.Sprintf("%s permits per second, at most one second of them stored", num(rate))
	if warmupMicros >= 0 {
		create = fmt.Sprintf("RateLimiter.create(%s, %dL, TimeUnit.MICROSECONDS)", javaDouble(rate), warmupMicros)
		what = fmt.Sprintf("%s permits per second after a warm-up of %d µs, starting cold", num(rate), warmupMicros)
	}
	fmt.Fprintf(&b, "/** The deployed limiter: %s. */\n", what)
	b.WriteString("public final class RatelabLimiter {\n")
	fmt.Fprintf(&b, "    private final RateLimiter limiter = %s;\n\n", create)
	fmt.Fprintf(&b, "    /**\n     * Decides one request now: true to serve it (after waiting for its permit,\n     * at most %d µs), false to refuse it (429) at once.\n     */\n", timeoutMicros)
	b.WriteString("    public boolean admit() {\n")
	fmt.Fprintf(&b, "        return limiter.tryAcquire(1, %dL, TimeUnit.MICROSECONDS);\n", timeoutMicros)
	b.WriteString("    }\n}\n")
	return b.String()
}

// micros is a setting of ms in whole µs, rounded as the Guava gates read it.
func micros(ms float64) int64 { return int64(math.Round(ms * 1000)) }

func guavaBurstyRerun(rate, timeoutMS float64) *limiter.Spec {
	return spec(limiter.TypeGuavaSmoothBursty,
		limiter.Params{limiter.ParamRate: rate, limiter.ParamMaxBurstMS: 1000, limiter.ParamTimeoutMS: timeoutMS}, nil)
}

// guavaFromBursty writes the guava-smooth-bursty gate's setting.
func guavaFromBursty(pt *reading) (*Export, error) {
	rate, burst, timeout := pt.param(limiter.ParamRate), pt.param(limiter.ParamMaxBurstMS), pt.param(limiter.ParamTimeoutMS)
	e := &Export{Text: guavaText(rate, -1, micros(timeout)), Rerun: guavaBurstyRerun(rate, timeout)}
	if burst != 1000 {
		e.Notes = append(e.Notes, fmt.Sprintf("Guava's public API has no maxBurstSeconds: RateLimiter.create stores at most one second of permits, not the point's %s ms.", num(burst)))
	}
	return e, nil
}

// guavaFromWarmingUp writes the guava-smooth-warming-up gate's setting.
func guavaFromWarmingUp(pt *reading) (*Export, error) {
	rate, warm, timeout := pt.param(limiter.ParamRate), pt.param(limiter.ParamWarmupMS), pt.param(limiter.ParamTimeoutMS)
	e := &Export{Text: guavaText(rate, micros(warm), micros(timeout)),
		Rerun: spec(limiter.TypeGuavaSmoothWarmingUp, limiter.Params{limiter.ParamRate: rate, limiter.ParamWarmupMS: warm, limiter.ParamTimeoutMS: timeout}, nil)}
	return e, nil
}

// guavaFromBucket writes a bucket as RateLimiter.create(rate) (see
// guavaFormat).
func guavaFromBucket(b bucket) (*Export, error) {
	if b.perClient {
		return nil, onlyOneBucket("Guava")
	}
	if b.rate > limiter.GuavaMaxRateRPS {
		return nil, cannot("%s permits/s is above %d/s, where Guava's whole-µs waits run measurably faster than the rate (the lab's Guava gates stop there)",
			num(b.rate), limiter.GuavaMaxRateRPS)
	}
	timeout := micros(b.maxWaitMS)
	e := &Export{Text: guavaText(b.rate, -1, timeout)}
	e.Notes = append(e.Notes,
		fmt.Sprintf("Guava's public API fixes the burst at one second of permits: after an idle second %s requests pass back to back (and one more, whose permit is charged to the next request), where the point passes %d.", num(b.rate), b.burst),
		"A new RateLimiter starts with no stored permits, where the point's bucket starts full.")
	if b.policer() {
		e.Notes = append(e.Notes, "tryAcquire with a timeout of 0 refuses a request that would have to wait.")
	} else {
		e.Notes = append(e.Notes, fmt.Sprintf("tryAcquire waits for a permit up to the timeout, %d µs.", timeout))
	}
	e.Notes = append(e.Notes, "Rerun with the guava-smooth-bursty gate to see what the deployed limiter does beside the point.")
	e.Rerun = guavaBurstyRerun(b.rate, float64(timeout)/1000)
	return e, nil
}
