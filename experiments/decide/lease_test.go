package decide_test

import (
	"testing"

	"github.com/ratelab/ratelab/experiments/decide"
)

// The sharing models lease and central over Envoy's rate limit service
// are choices like local and divided: each limiter a setting, named by
// its lease_ms and refresh_ms, and a scaling event a scenario of each.
// Under a skewed load (one heavy client hashed to one instance) the
// objectives on over-admission and on the share of the limit used tell
// them apart: local over-admits, divided strands the idle instances'
// share, lease and central keep the limit and use most of it.
func TestLeaseAndEnvoyAreChoices(t *testing.T) {
	res := run(t, `{"version": 1, "seed": 5,
	  "workload": {"duration_ms": 8000, "parts": [
	    {"type": "clients", "group": "light", "clients": 16, "rate_rps": 1, "arrival": "poisson"},
	    {"type": "clients", "group": "heavy", "clients": 1, "rate_rps": 60, "arrival": "poisson"}]},
	  "server": {"workers": 50, "service_ms": 5, "deadline_ms": 200},
	  "metrics": {"rolling_window_ms": 1000},
	  "objectives": [{"metric": "effective_ratio", "op": "<=", "value": 1.05}, {"metric": "effective_ratio", "op": ">=", "value": 0.8}],
	  "limiters": [
	    {"type": "token-bucket", "name": "local", "rate_rps": 60, "burst": 20, "instances": 3, "balancer": "hash", "scale_at_ms": 4000, "scale_to": [3, 2]},
	    {"type": "token-bucket", "name": "divided", "rate_rps": 60, "burst": 20, "instances": 3, "balancer": "hash", "sharing": "divided", "scale_at_ms": 4000, "scale_to": [3, 2]},
	    {"type": "token-bucket", "name": "lease", "rate_rps": 60, "burst": 20, "instances": 3, "balancer": "hash", "sharing": "lease", "lease_ms": 5000, "refresh_ms": [250, 1000], "scale_at_ms": 4000, "scale_to": [3, 2]},
	    {"type": "envoy-ratelimit", "name": "envoy", "requests_per_unit": 60, "instances": 3, "balancer": "hash", "sharing": "central", "scale_at_ms": 4000, "scale_to": [3, 2]}]}`)
	a := decide.Decide(res)
	if a == nil || len(a.Settings) != 5 || len(a.Scenarios) != 2 {
		t.Fatalf("answer: %d settings, %d scenarios; want 5 (lease's two refreshes) and 2 (scale_to 3, 2)", len(a.Settings), len(a.Scenarios))
	}
	meets := map[string]bool{}
	for _, s := range a.Settings {
		meets[s.Limiter+": "+s.Name()] = s.MeetsAll
	}
	for name, want := range map[string]bool{
		"local: rate_rps=60 burst=20 instances=3":                               false,
		"divided: rate_rps=60 burst=20 instances=3":                             false,
		"lease: rate_rps=60 burst=20 instances=3 lease_ms=5000 refresh_ms=250":  true,
		"lease: rate_rps=60 burst=20 instances=3 lease_ms=5000 refresh_ms=1000": false,
		"envoy: requests_per_unit=60 unit_s=1 requests_per_unit_2=0 unit_2_s=60 clock_start_unix_s=1.7672256e+09 instances=3 store_rtt_ms=1 store_capacity_rps=0 outage_start_ms=0 outage_end_ms=0": true,
	} {
		got, ok := meets[name]
		if !ok || got != want {
			t.Errorf("setting %q: present %v, meets %v; want meets %v (settings %v)", name, ok, got, want, meets)
		}
	}
}
