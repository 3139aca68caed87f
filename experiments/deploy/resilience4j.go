package deploy

import (
	"fmt"
	"math"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// resilience4jFormat is Spring Boot configuration (application.yaml) of a
// Resilience4j rate limiter instance "ratelab":
// resilience4j.ratelimiter.instances.ratelab with limitForPeriod,
// limitRefreshPeriod and timeoutDuration (Spring's simple durations:
// "100ms", "500ns").
//
// Mapping. The resilience4j gate's point is written as it is (exact: the
// period and timeout in whole ns, as the gate reads them). A fixed window
// (limit L per window W) is limitForPeriod L every W with timeoutDuration
// 0: Resilience4j's cycles count from the limiter's creation as the lab's
// windows count from 0, and a caller finding no permission is refused at
// once. A bucket (rate r, burst b, requests waiting up to w ms) is
// limitForPeriod b every b/r s (whole ns, rounded) with timeoutDuration w:
// the same average rate and b at once, but the permissions come all at
// the start of each cycle and an unused cycle's are lost, so up to 2b can
// pass around a cycle boundary, where the bucket passes b + r*d in any d.
// The notes say so and the rerun is the resilience4j gate.
func resilience4jFormat() *Format {
	return &Format{
		Name:    "resilience4j",
		Label:   "Resilience4j RateLimiter (Spring Boot)",
		Ext:     "yaml",
		File:    "application.yaml",
		Doc:     "Spring Boot configuration of the Resilience4j rate limiter instance \"ratelab\"",
		Comment: "# ",
		From: append([]From{
			{Type: limiter.TypeResilience4j, export: r4jFromR4j},
			{Type: limiter.TypeFixedWindow, export: r4jFromWindow},
		}, bucketFrom(r4jFromBucket)...),
	}
}

func r4jText(limit, periodNS, timeoutNS int64) string {
	var b strings.Builder
	b.WriteString("resilience4j:\n  ratelimiter:\n    instances:\n      ratelab:\n")
	fmt.Fprintf(&b, "        limitForPeriod: %d\n", limit)
	fmt.Fprintf(&b, "        limitRefreshPeriod: %s\n", unitDuration(periodNS))
	fmt.Fprintf(&b, "        timeoutDuration: %s\n", unitDuration(timeoutNS))
	return b.String()
}

func r4jRerun(limit int64, periodNS, timeoutNS int64) *limiter.Spec {
	return spec(limiter.TypeResilience4j, limiter.Params{
		limiter.ParamLimitForPeriod: float64(limit), limiter.ParamLimitRefreshPeriodMS: nsToMS(periodNS), limiter.ParamTimeoutMS: nsToMS(timeoutNS)}, nil)
}

// r4jFromR4j writes the resilience4j gate's own setting.
func r4jFromR4j(pt *reading) (*Export, error) {
	limit := int64(pt.param(limiter.ParamLimitForPeriod))
	period, timeout := msToNS(pt.param(limiter.ParamLimitRefreshPeriodMS)), msToNS(pt.param(limiter.ParamTimeoutMS))
	// The gate reads both in whole ns, as written: the export is exact.
	e := &Export{Text: r4jText(limit, period, timeout), Exact: true}
	if nsToMS(period) != pt.param(limiter.ParamLimitRefreshPeriodMS) || nsToMS(timeout) != pt.param(limiter.ParamTimeoutMS) {
		e.Notes = append(e.Notes, "Resilience4j's durations are whole ns: the point's are written rounded to the ns, as the gate reads them.")
	}
	return e, nil
}

// r4jFromWindow writes a fixed window as one cycle per window.
func r4jFromWindow(pt *reading) (*Export, error) {
	limit, window := int64(pt.param(limiter.ParamLimit)), pt.param(limiter.ParamWindow)
	if limit < 1 {
		return nil, cannot("a limit of 0 refuses every request, and Resilience4j's limitForPeriod must be at least 1")
	}
	if limit > math.MaxInt32 {
		return nil, cannot("limit %d is more than Resilience4j's int limitForPeriod", limit)
	}
	period := msToNS(window)
	e := &Export{Text: r4jText(limit, period, 0)}
	if nsToMS(period) != window {
		e.Notes = append(e.Notes, fmt.Sprintf("limitRefreshPeriod is whole ns: the window of %s ms is written %s.", num(window), unitDuration(period)))
	}
	e.Notes = append(e.Notes,
		fmt.Sprintf("Resilience4j hands out limitForPeriod=%d permissions per cycle of %s counted from the limiter's creation, as the lab's windows count from the start; timeoutDuration 0 refuses at once a caller that finds none.", limit, unitDuration(period)),
		"Its clock is System.nanoTime(): rerun with the resilience4j gate to see it beside the point.")
	e.Rerun = r4jRerun(limit, period, 0)
	return e, nil
}

// r4jFromBucket writes a bucket as b permissions every b/r s.
func r4jFromBucket(b bucket) (*Export, error) {
	if b.perClient {
		return nil, onlyOneBucket("Resilience4j")
	}
	if b.burst > math.MaxInt32 {
		return nil, cannot("burst %d is more than Resilience4j's int limitForPeriod", b.burst)
	}
	exactNS := float64(b.burst) * 1e9 / b.rate
	period := max(int64(math.Round(exactNS)), 1)
	timeout := msToNS(b.maxWaitMS)
	e := &Export{Text: r4jText(b.burst, period, timeout)}
	if n, ok := whole(exactNS); !ok || n != period {
		e.Notes = append(e.Notes, fmt.Sprintf("limitRefreshPeriod is whole ns: %d permissions at %s requests/s is a cycle of %s ns, written %s (%s requests/s).",
			b.burst, num(b.rate), num(exactNS), unitDuration(period), num(float64(b.burst)*1e9/float64(period))))
	}
	e.Notes = append(e.Notes, fmt.Sprintf(
		"Resilience4j hands out all %d permissions at the start of each cycle of %s, counted from its creation, and a quiet cycle's are lost: up to %d requests can pass around a cycle boundary, where the point's bucket passes %d plus the rate.",
		b.burst, unitDuration(period), 2*b.burst, b.burst))
	if b.policer() {
		e.Notes = append(e.Notes, "timeoutDuration 0 refuses at once a caller that finds no permission.")
	} else {
		e.Notes = append(e.Notes, fmt.Sprintf("A caller waits up to timeoutDuration %s for a later cycle's permission.", unitDuration(timeout)))
	}
	e.Notes = append(e.Notes, "Rerun with the resilience4j gate to see what the deployed limiter does beside the point.")
	e.Rerun = r4jRerun(b.burst, period, timeout)
	return e, nil
}
