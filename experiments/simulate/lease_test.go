package simulate_test

import (
	"testing"
)

// leaseDoc runs lease sharing (both algorithms, a lease server outage, a
// replica that fails) and Envoy's global rate limit service shared by
// central instances, under skewed load with client retries (the loop).
const leaseDoc = `{"version": 1, "name": "lease", "seed": 11,
  "workload": {"duration_ms": 6000, "parts": [
    {"type": "clients", "group": "light", "clients": 6, "rate_rps": 4, "arrival": "poisson"},
    {"type": "clients", "group": "heavy", "clients": 1, "rate_rps": 60, "arrival": "poisson", "timeout_ms": 300, "retries": 1, "backoff_ms": 50}]},
  "server": {"workers": 2, "service_ms": 10, "deadline_ms": 200},
  "limiters": [
    {"type": "token-bucket", "name": "lease", "rate_rps": 30, "burst": 6, "instances": 3, "balancer": "hash", "sharing": "lease",
     "lease_ms": [500, 2000], "refresh_ms": 250, "lease_algorithm": "fair"},
    {"type": "token-bucket", "name": "prop", "rate_rps": 30, "burst": 6, "instances": 3, "balancer": "least-inflight", "sharing": "lease",
     "outage_start_ms": 2000, "outage_end_ms": 4000, "lease_expired": "safe", "scale_at_ms": 3000, "scale_to": [2, 4]},
    {"type": "envoy-ratelimit", "name": "rls", "requests_per_unit": 30, "requests_per_unit_2": 1000, "instances": 3, "sharing": "central", "store_rtt_ms": 2,
     "outage_start_ms": 1000, "outage_end_ms": 1500, "store_down": "fail-closed"}]}`

// Lease and Envoy-central sweeps give the same bytes at 1 and 3 workers,
// and each instance's decisions add up to the point's.
func TestLeaseDeterministicAcrossWorkers(t *testing.T) {
	one := sameAtOneAndThreeWorkers(t, leaseDoc)
	if len(one.Points) != 2+2+1 {
		t.Fatalf("%d points", len(one.Points))
	}
	for _, p := range one.Points {
		m := &p.Metrics
		offered, admitted := 0, 0
		for _, in := range m.Instances {
			offered += in.Offered
			admitted += in.Admitted
		}
		attempts := m.Client.Attempts
		if m.Replicas == nil || offered != attempts || admitted != m.Admitted || m.Admitted == 0 {
			t.Errorf("point %d (%s): instances offered %d admitted %d, the point %d and %d (replicas %v)", p.Index, p.Limiter, offered, admitted, attempts, m.Admitted, m.Replicas)
		}
	}
}
