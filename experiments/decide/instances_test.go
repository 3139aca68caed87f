package decide_test

import (
	"testing"

	"github.com/ratelab/ratelab/experiments/decide"
)

// instances and the sharing model are part of a setting (a choice): a
// limiter swept over instances gives a setting per count, named by it,
// and two limiters of other sharing models are settings apart; the
// objective on over-admission picks the one that keeps the limit.
func TestInstancesArePartOfTheSetting(t *testing.T) {
	res := run(t, `{"version": 1, "seed": 3,
	  "workload": {"duration_ms": 4000, "parts": [{"type": "poisson", "rate_rps": 200}]},
	  "server": {"workers": 4, "service_ms": 5, "deadline_ms": 200},
	  "metrics": {"rolling_window_ms": 1000},
	  "objectives": [{"metric": "over_admission", "op": "<=", "value": 1.05}],
	  "limiters": [
	    {"type": "token-bucket", "name": "local", "rate_rps": 50, "burst": 10, "instances": [1, 3]},
	    {"type": "token-bucket", "name": "divided", "rate_rps": 50, "burst": 10, "instances": 3, "sharing": "divided"}]}`)
	a := decide.Decide(res)
	if a == nil || len(a.Settings) != 3 {
		t.Fatalf("answer %+v: want 3 settings", a)
	}
	names := map[string]bool{}
	for _, s := range a.Settings {
		names[s.Limiter+": "+s.Name()] = s.MeetsAll
	}
	for name, meets := range map[string]bool{
		"local: rate_rps=50 burst=10 instances=1":   true,
		"local: rate_rps=50 burst=10 instances=3":   false,
		"divided: rate_rps=50 burst=10 instances=3": true,
	} {
		got, ok := names[name]
		if !ok || got != meets {
			t.Errorf("setting %q: present %v, meets %v; want meets %v (settings %v)", name, ok, got, meets, names)
		}
	}
}
