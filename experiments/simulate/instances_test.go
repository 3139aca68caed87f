package simulate_test

import (
	"bytes"
	"context"
	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/sweep"
	"testing"
)

// instancesDoc sweeps instances under every balancer and both sharing
// models, on the forward pass and (with client behaviour) in the loop.
const instancesDoc = `{"version": 1, "name": "instances", "seed": 7,
  "workload": {"duration_ms": 5000, "parts": [
    {"type": "clients", "group": "light", "clients": 6, "rate_rps": 5, "arrival": "poisson"},
    {"type": "clients", "group": "heavy", "clients": 2, "rate_rps": 40, "arrival": "poisson", "timeout_ms": 300, "retries": 1, "backoff_ms": 50}]},
  "server": {"workers": 2, "service_ms": 20, "deadline_ms": 200},
  "limiters": [
    {"type": "token-bucket", "name": "rr", "rate_rps": 20, "burst": 5, "instances": [1, 2, 3]},
    {"type": "gcra", "name": "random", "rate_rps": 20, "burst": 5, "instances": 3, "balancer": "random", "balancer_seed": [1, 2]},
    {"type": "fixed-window", "name": "hash", "limit": 20, "instances": 3, "balancer": "hash", "sharing": "divided"},
    {"type": "sliding-window-log", "name": "lif", "limit": 20, "instances": [2, 4], "balancer": "least-inflight"},
    {"type": "token-bucket", "name": "scaled", "rate_rps": 20, "burst": 5, "instances": 2, "balancer": "hash", "sharing": "divided", "scale_at_ms": 2500, "scale_to": [1, 3]}]}`

// A replicated sweep gives the same bytes at 1 and 3 workers, and each
// instance's decisions add up to the point's.
func TestInstancesDeterministicAcrossWorkers(t *testing.T) {
	one := sameAtOneAndThreeWorkers(t, instancesDoc)
	if len(one.Points) != 3+2+1+2+2 {
		t.Fatalf("%d points", len(one.Points))
	}
	for _, p := range one.Points {
		m := &p.Metrics
		if m.Replicas == nil || len(m.Instances) != int(max(p.Params["instances"], p.Params["scale_to"])) {
			t.Fatalf("point %d (%s): %d instances filed, replica measures %v", p.Index, p.Limiter, len(m.Instances), m.Replicas)
		}
		offered, admitted, series := 0, 0, 0
		for _, in := range m.Instances {
			offered += in.Offered
			admitted += in.Admitted
			for _, c := range in.AdmittedSeries {
				series += int(c)
			}
		}
		attempts := m.Arrivals
		if m.Client != nil {
			attempts = m.Client.Attempts
		}
		if offered != attempts || admitted != m.Admitted || series != admitted {
			t.Errorf("point %d (%s): instances offered %d admitted %d (series %d), the point %d and %d", p.Index, p.Limiter, offered, admitted, series, attempts, m.Admitted)
		}
	}
}

// sameAtOneAndThreeWorkers runs doc's sweep at 1 and 3 workers, fails
// the test unless both measure the same bytes, and returns the first.
func sameAtOneAndThreeWorkers(t *testing.T, doc string) *experiments.Result {
	t.Helper()
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	one, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	three, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := jsonOf(t, one), jsonOf(t, three); !bytes.Equal(a, b) {
		t.Fatal("1 and 3 workers measure differently")
	}
	return one
}
