package deploy

import (
	"fmt"
	"math"
	"strings"
)

// traefikFormat is Traefik's rateLimit HTTP middleware in the file
// provider's dynamic configuration (YAML): average, period, burst and
// sourceCriterion.
//
// Traefik's middleware (pkg/middlewares/ratelimiter) is
// golang.org/x/time/rate with one bucket per source: rate.NewLimiter(
// average*1s/period, burst) (burst below 1 is 1), and for each request
// Reserve, then Cancel and 429 when the Delay passes maxDelay, else a wait
// of Delay. maxDelay is not configurable: time.Second /
// (time.Duration(rate) * 2), integer nanoseconds, for a rate of at least
// 1/s, else 500 ms. That is the x-time-rate gate in reserve mode with
// max_wait_ms = maxDelay, the rerun every Traefik export offers.
//
// Mapping. A bucket (rate r, burst b) is average n per period P with
// n/P = r (whole n per 1 s, 1 min or 1 h, or per 10^k s for a rate with
// decimals, else the nearest whole n) and burst b. sourceCriterion
// requestHost gives one bucket per Host header, the point's one bucket for
// its one service (Traefik's default criterion, the client IP, would give
// every client its own). The wait is Traefik's maxDelay whatever the
// point's: a policer's requests may now wait up to maxDelay, and a point
// whose requests wait longer sees them refused sooner, said in the notes.
// The x-time-rate gate's point in reserve mode at max_wait_ms = maxDelay
// is Traefik exactly.
func traefikFormat() *Format {
	return &Format{
		Name:    "traefik",
		Label:   "Traefik rateLimit middleware",
		Ext:     "yaml",
		File:    "traefik-ratelimit.yaml",
		Doc:     "dynamic configuration (file provider) of the rateLimit middleware \"ratelab-ratelimit\"",
		Comment: "# ",
		From:    bucketFrom(traefikFromBucket),
	}
}

// traefikMaxDelayNS is the middleware's maxDelay for a rate (rtl).
func traefikMaxDelayNS(rtl float64) int64 {
	if rtl < 1 {
		return 500e6
	}
	return int64(1e9) / (int64(rtl) * 2)
}

func traefikText(average, periodNS, burst int64) string {
	var b strings.Builder
	b.WriteString("http:\n  middlewares:\n    ratelab-ratelimit:\n      rateLimit:\n")
	fmt.Fprintf(&b, "        average: %d\n", average)
	fmt.Fprintf(&b, "        period: %s\n", unitDuration(periodNS))
	fmt.Fprintf(&b, "        burst: %d\n", burst)
	b.WriteString("        sourceCriterion:\n          requestHost: true\n")
	return b.String()
}

// traefikFromBucket writes a bucket (see traefikFormat).
func traefikFromBucket(b bucket) (*Export, error) {
	if b.perClient {
		return nil, cannot("the point keeps one bucket per client, and the lab has no gate of Traefik's per-source buckets to rerun; export a point with one bucket")
	}
	n, periodMS, exact := perPeriod(b.rate, math.MaxInt32)
	periodNS := periodMS * 1e6
	rtl := float64(n*int64(1e9)) / float64(periodNS)
	maxDelay := traefikMaxDelayNS(rtl)
	e := &Export{Text: traefikText(n, periodNS, b.burst)}
	if !exact {
		e.Notes = append(e.Notes, fmt.Sprintf("Traefik takes a whole average per period: %s requests/s is written %d per %s (%s requests/s).",
			num(b.rate), n, unitDuration(periodNS), num(rtl)))
	}
	e.Notes = append(e.Notes,
		"Traefik's rateLimit is x/time/rate with one bucket per source; sourceCriterion requestHost makes it one bucket per Host, the point's one bucket for its service.",
		fmt.Sprintf("Traefik lets a request wait for its token up to maxDelay = 1/(2 × whole rate) = %s and answers 429 past it; it cannot be configured.", msText(maxDelay)))
	switch {
	case b.policer():
		e.Notes = append(e.Notes, "The point refuses at once what finds no token: under Traefik such requests may wait up to maxDelay instead.")
	case msToNS(b.maxWaitMS) != maxDelay:
		e.Notes = append(e.Notes, fmt.Sprintf("The point lets requests wait up to %s ms: under Traefik the longest wait is maxDelay.", num(b.maxWaitMS)))
	}
	e.Notes = append(e.Notes, "The rerun is Traefik's limiter: the x-time-rate gate in reserve mode with max_wait_ms = maxDelay.")
	e.Rerun = goXRerun(rtl, b.burst, true, nsToMS(maxDelay))
	return e, nil
}
