package deploy

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// envoyRatelimitFormat is envoyproxy/ratelimit's configuration (the rate
// limit service Envoy's ratelimit filter asks, with its Redis backend):
// a domain of one descriptor, or two on the same request, each with its
// rate_limit {unit, requests_per_unit}.
//
// Mapping. The envoy-ratelimit gate's point is written as it is (exact
// but for its clock: the service reads its own, so its windows fall where
// the date puts them, not where clock_start_unix_s does). A fixed window
// of limit L per window W of 1 s, 1 min, 1 h or 1 day is requests_per_unit
// L per that unit; its windows start at the run's t = 0 while the
// service's start at multiples of the unit since 1970, and the service
// counts refused requests too (which one descriptor does not notice): the
// rerun is the envoy-ratelimit gate. Another window is not expressible.
// A descriptor per client is the remote_address key with no value (a
// counter per address). Envoy's route must send the descriptors
// (rate_limits actions), which the notes name.
func envoyRatelimitFormat() *Format {
	return &Format{
		Name:    "envoy-ratelimit",
		Label:   "envoyproxy/ratelimit (Envoy's global rate limit service)",
		Ext:     "yaml",
		File:    "ratelimit-config.yaml",
		Doc:     "the rate limit service's configuration file (its RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/config), domain ratelab",
		Comment: "# ",
		From: []From{
			{Type: limiter.TypeEnvoyRatelimit, export: envoyRatelimitFromGate},
			{Type: limiter.TypeFixedWindow, export: envoyRatelimitFromWindow},
		},
	}
}

// envoyRatelimitUnits are the service's units by their seconds.
var envoyRatelimitUnits = map[float64]string{1: "second", 60: "minute", 3600: "hour", 86400: "day"}

// envoyRatelimitYAML is the service's config of one or two descriptors
// ((limit, unit seconds) pairs); perClient keys them by remote_address.
func envoyRatelimitYAML(limits [][2]float64, perClient bool) string {
	var b strings.Builder
	b.WriteString("domain: ratelab\ndescriptors:\n")
	for i, l := range limits {
		if perClient {
			b.WriteString("  - key: remote_address\n")
		} else {
			fmt.Fprintf(&b, "  - key: generic_key\n    value: ratelab-%d\n", i+1)
		}
		fmt.Fprintf(&b, "    rate_limit:\n      unit: %s\n      requests_per_unit: %d\n", envoyRatelimitUnits[l[1]], int64(l[0]))
	}
	return b.String()
}

// envoyRatelimitRoute says what Envoy's route must send.
func envoyRatelimitRoute(n int, perClient bool) string {
	action := "a generic_key action (descriptor_value ratelab-1)"
	if n == 2 {
		action = "two rate_limits entries, generic_key actions ratelab-1 and ratelab-2"
	}
	if perClient {
		action = "a remote_address action"
		if n == 2 {
			action = "two rate_limits entries, each a remote_address action"
		}
	}
	return "Envoy's route sends the descriptors: " + action + " in its rate_limits, and the ratelimit filter (envoy.filters.http.ratelimit) with domain ratelab; failure_mode_deny says what passes while the service or Redis is down (false, the default: everything)."
}

// envoyRatelimitFromGate writes the gate's own setting.
func envoyRatelimitFromGate(pt *reading) (*Export, error) {
	limits := [][2]float64{{pt.param(limiter.ParamRequestsPerUnit), pt.param(limiter.ParamUnit)}}
	if second := pt.param(limiter.ParamRequestsPerUnit2); second > 0 {
		limits = append(limits, [2]float64{second, pt.param(limiter.ParamUnit2)})
	} else {
		pt.note(limiter.ParamUnit2) // no second descriptor: its unit unused
	}
	perClient := pt.option(limiter.OptionEnvoyDescriptor) == "client"
	stop := pt.option(limiter.OptionEnvoyStop) == "true"
	e := &Export{Text: envoyRatelimitYAML(limits, perClient)}
	e.Notes = append(e.Notes, envoyRatelimitRoute(len(limits), perClient))
	switch {
	case stop:
		e.Notes = append(e.Notes, "Run the service with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=true (the point's stop_increment_when_over_limit).")
	case len(limits) == 2:
		e.Notes = append(e.Notes, "The service increments both counters of every request, even one the other descriptor refuses (#427): a refusal by the first limit spends the second's quota. STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=true stops that (the gate's stop_increment_when_over_limit).")
	}
	e.Notes = append(e.Notes, fmt.Sprintf("clock_start_unix_s %s places the run's t = 0 on the service's clock; a deployed service reads its own, so its windows (multiples of the unit since 1970) fall where the date puts them.",
		num(pt.param(limiter.ParamClockStart))))
	e.Rerun = spec(limiter.TypeEnvoyRatelimit, pt.values, pt.spec.Options)
	return e, nil
}

// envoyRatelimitFromWindow writes a fixed window of a unit's length.
func envoyRatelimitFromWindow(pt *reading) (*Export, error) {
	limit, window := pt.param(limiter.ParamLimit), pt.param(limiter.ParamWindow)
	unit := window / 1000
	if _, ok := envoyRatelimitUnits[unit]; !ok {
		return nil, cannot("the service's units are a second, a minute, an hour and a day; window_ms %s is none of them", num(window))
	}
	e := &Export{Text: envoyRatelimitYAML([][2]float64{{limit, unit}}, false)}
	e.Notes = append(e.Notes, envoyRatelimitRoute(1, false),
		fmt.Sprintf("The service's windows start at multiples of a %s since 1970, not at the run's start, and it counts refused requests too: the rerun (envoy-ratelimit) shows it.", envoyRatelimitUnits[unit]))
	e.Rerun = spec(limiter.TypeEnvoyRatelimit, limiter.Params{limiter.ParamRequestsPerUnit: limit, limiter.ParamUnit: unit}, nil)
	return e, nil
}
