package deploy

import (
	"fmt"
	"math"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// envoyFormat is Envoy's HTTP local rate limit filter
// (envoy.filters.http.local_ratelimit, typed config
// envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit): one
// entry of the HTTP connection manager's http_filters.
//
// Mapping. A policer bucket (rate r, burst b) is token_bucket max_tokens b
// (the bucket starts full, as the point's does) and tokens_per_fill k
// every fill_interval f with k/f = r: the smallest k for which f is a
// whole number of ms and at least 50 ms. filter_enabled and
// filter_enforced default to 0% of requests, so the text sets both to
// 100%. A fixed window (limit L per window W) is max_tokens = tokens_per_fill
// = L every W: with Envoy's timer bucket that refills the bucket to full at
// every fill, which is the fixed window.
//
// Rounding. Envoy reads fill_interval in whole ms, at least 50 ms
// ("local rate limit token bucket fill timer must be >= 50ms"), and takes
// whole tokens (uint32): a rate with more than 6 decimals, or one that
// needs more than 2^32-1 tokens per fill, is rounded to whole tokens per
// second, and a window under 50 ms becomes 50 ms.
//
// Semantics. Envoy's local rate limit never delays: a point that lets
// requests wait cannot be deployed in it. Since its PR 35207 (2024) Envoy
// refills the bucket continuously (the envoy-local-ratelimit gate's
// token_bucket atomic, the rerun offered); before, whole tokens came on a
// fill timer (token_bucket timer), said in the notes. A bucket per client
// needs route rate_limits actions and wildcard descriptors, which the
// export does not write.
func envoyFormat() *Format {
	return &Format{
		Name:    "envoy",
		Label:   "Envoy local rate limit",
		Ext:     "yaml",
		File:    "envoy-local-ratelimit.yaml",
		Doc:     "one entry of the HTTP connection manager's http_filters, before envoy.filters.http.router",
		Comment: "# ",
		From: append([]From{
			{Type: limiter.TypeEnvoyLocalRateLimit, export: envoyFromEnvoy},
			{Type: limiter.TypeFixedWindow, export: envoyFromWindow},
		}, bucketFrom(envoyFromBucket, limiter.TypeEnvoyLocalRateLimit)...),
	}
}

// envoyMaxUint32 bounds max_tokens and tokens_per_fill.
const envoyMaxUint32 = 1<<32 - 1

// envoyYAML is the http_filters entry.
func envoyYAML(maxTokens, perFill, fillMS int64) string {
	var b strings.Builder
	b.WriteString("# One entry of the HTTP connection manager's http_filters, before envoy.filters.http.router:\n")
	b.WriteString("- name: envoy.filters.http.local_ratelimit\n")
	b.WriteString("  typed_config:\n")
	b.WriteString("    \"@type\": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit\n")
	b.WriteString("    stat_prefix: http_local_rate_limiter\n")
	b.WriteString("    token_bucket:\n")
	fmt.Fprintf(&b, "      max_tokens: %d\n", maxTokens)
	fmt.Fprintf(&b, "      tokens_per_fill: %d\n", perFill)
	fmt.Fprintf(&b, "      fill_interval: %s\n", protoDuration(fillMS))
	for _, f := range []string{"enabled", "enforced"} {
		fmt.Fprintf(&b, "    filter_%s:\n", f)
		fmt.Fprintf(&b, "      runtime_key: local_rate_limit_%s\n", f)
		b.WriteString("      default_value:\n")
		b.WriteString("        numerator: 100\n")
		b.WriteString("        denominator: HUNDRED\n")
	}
	return b.String()
}

// envoyFill writes rate (requests/s) as tokens_per_fill per fill_interval
// (whole ms, at least 50, and at most 1 s or one token's time, so that a
// timer bucket refills in small steps too): the smallest whole k with
// k*1000/rate whole ms, exact when there is one in that range; else the
// interval in range whose whole tokens come nearest the rate.
func envoyFill(rate float64) (perFill, fillMS int64, exact bool) {
	longest := max(int64(1000), int64(math.Ceil(1000/rate)))
	longest = min(longest, int64(limiter.MaxWindowMS))
	if n, d, ok := decimal(rate); ok {
		// rate = n/10^d per s = n/10^(d+3) per ms: fill f ms holds
		// n*f/10^(d+3) tokens, whole when f is a multiple of 10^(d+3)/g.
		scale := int64(math.Pow10(d + 3))
		g := gcd(n, scale)
		k0, f0 := n/g, scale/g
		m := max((limiter.EnvoyMinFillIntervalMS+f0-1)/f0, 1)
		if f0 <= longest && k0 <= envoyMaxUint32/m && f0*m <= longest {
			return k0 * m, f0 * m, true
		}
	}
	if rate < 1 {
		return 1, min(max(int64(math.Round(1000/rate)), limiter.EnvoyMinFillIntervalMS), longest), false
	}
	best := math.Inf(1)
	for f := int64(limiter.EnvoyMinFillIntervalMS); f <= 1000; f++ {
		k := min(max(int64(math.Round(rate*float64(f)/1000)), 1), envoyMaxUint32)
		if e := math.Abs(float64(k)*1000/float64(f) - rate); e < best {
			best, perFill, fillMS = e, k, f
		}
	}
	return perFill, fillMS, false
}

// envoyNotes are the notes of every export: the bucket Envoy runs.
func envoyNotes(perFill, fillMS int64) []string {
	return []string{
		fmt.Sprintf("Envoy's bucket starts full and refills %d tokens every %d ms (%s requests/s); a request without a whole token is answered 429.",
			perFill, fillMS, num(float64(perFill)*1000/float64(fillMS))),
		"filter_enabled and filter_enforced default to 0% of requests: the text sets both to 100%.",
		"Current Envoy refills continuously (the gate's token_bucket atomic, the rerun); releases before PR 35207 (2024) added whole tokens when the fill timer fired: rerun with token_bucket timer to see those.",
	}
}

// envoyRerun is the envoy-local-ratelimit gate of current Envoy.
func envoyRerun(maxTokens, perFill int64, fillMS float64) *limiter.Spec {
	return spec(limiter.TypeEnvoyLocalRateLimit,
		limiter.Params{limiter.ParamMaxTokens: float64(maxTokens), limiter.ParamTokensPerFill: float64(perFill), limiter.ParamFillIntervalMS: fillMS},
		map[string]string{limiter.OptionEnvoyDescriptor: "none", limiter.OptionEnvoyBucket: "atomic"})
}

// envoyPerClient is why a point keyed per client is not exported.
func envoyPerClient() error {
	return cannot("the point keeps a bucket per client, which in Envoy needs the route's rate_limits actions and wildcard descriptors; the export writes one bucket for every request")
}

// envoyFromEnvoy writes the envoy-local-ratelimit gate's own setting.
func envoyFromEnvoy(pt *reading) (*Export, error) {
	if pt.option(limiter.OptionEnvoyDescriptor) == "client" {
		return nil, envoyPerClient()
	}
	maxTokens, perFill := int64(pt.param(limiter.ParamMaxTokens)), int64(pt.param(limiter.ParamTokensPerFill))
	fill := pt.param(limiter.ParamFillIntervalMS)
	e := &Export{Text: envoyYAML(maxTokens, perFill, int64(fill)), Notes: envoyNotes(perFill, int64(fill))[:2]}
	if fill != math.Trunc(fill) {
		e.Notes = append(e.Notes, fmt.Sprintf("Envoy reads fill_interval in whole ms: %s ms is written %d ms (the gate reads it so too).", num(fill), int64(fill)))
	}
	if pt.option(limiter.OptionEnvoyBucket) == "timer" {
		e.Notes = append(e.Notes, "The point is Envoy's timer bucket (releases before PR 35207, 2024, and while the runtime guard envoy.reloadable_features.no_timer_based_rate_limit_token_bucket is false): such an Envoy runs it exactly. Current Envoy refills continuously: rerun with token_bucket atomic to see it.")
	}
	e.Rerun = envoyRerun(maxTokens, perFill, fill)
	return e, nil
}

// envoyFromWindow writes a fixed window as max_tokens = tokens_per_fill =
// limit every window.
func envoyFromWindow(pt *reading) (*Export, error) {
	limit, window := pt.param(limiter.ParamLimit), pt.param(limiter.ParamWindow)
	if limit < 1 {
		return nil, cannot("a limit of 0 refuses every request, and Envoy's max_tokens must be at least 1")
	}
	if limit > envoyMaxUint32 {
		return nil, cannot("limit %s is more than Envoy's uint32 max_tokens", num(limit))
	}
	fill := max(int64(math.Round(window)), limiter.EnvoyMinFillIntervalMS)
	l := int64(limit)
	e := &Export{Text: envoyYAML(l, l, fill)}
	if float64(fill) != window {
		e.Notes = append(e.Notes, fmt.Sprintf("Envoy's fill_interval is whole ms, at least 50: the window of %s ms is written %d ms.", num(window), fill))
	}
	e.Notes = append(e.Notes,
		fmt.Sprintf("With Envoy's timer bucket (releases before PR 35207, 2024) max_tokens = tokens_per_fill = %d refills the bucket to full at every fill from the filter's start: the fixed window (rerun with token_bucket timer to check).", l),
		fmt.Sprintf("Current Envoy refills continuously: a bucket of %d that starts full and refills at %d per %d ms, which is no fixed window; the rerun (token_bucket atomic) shows the difference.", l, l, fill),
		"filter_enabled and filter_enforced default to 0% of requests: the text sets both to 100%.")
	e.Rerun = envoyRerun(l, l, float64(fill))
	return e, nil
}

// envoyFromBucket writes a policer bucket (see envoyFormat).
func envoyFromBucket(b bucket) (*Export, error) {
	if !b.policer() {
		return nil, cannot("Envoy's local rate limit never delays a request, and this point lets %d requests wait for their token", b.queue)
	}
	if b.perClient {
		return nil, envoyPerClient()
	}
	if b.burst > envoyMaxUint32 {
		return nil, cannot("burst %d is more than Envoy's uint32 max_tokens", b.burst)
	}
	perFill, fill, exact := envoyFill(b.rate)
	e := &Export{Text: envoyYAML(b.burst, perFill, fill)}
	if !exact {
		e.Notes = append(e.Notes, fmt.Sprintf("Envoy adds whole tokens every whole number of ms (at least 50): %s requests/s is written %d tokens every %d ms (%s requests/s).",
			num(b.rate), perFill, fill, num(float64(perFill)*1000/float64(fill))))
	}
	e.Notes = append(e.Notes, envoyNotes(perFill, fill)...)
	if perFill > b.burst {
		e.Notes = append(e.Notes, fmt.Sprintf("tokens_per_fill %d is more than max_tokens %d (no whole fill of 50 ms or more holds fewer): an Envoy with the timer bucket loses the excess at each fill and passes at most %d every %d ms.",
			perFill, b.burst, b.burst, fill))
	}
	e.Rerun = envoyRerun(b.burst, perFill, float64(fill))
	return e, nil
}
