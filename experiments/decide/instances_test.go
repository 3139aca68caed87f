package decide_test

import (
	"strings"
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

// A scaling event is a scenario: the settings are the limiter's instances
// and sharing, each judged under every scale_to, its worst one binding.
func TestScalingEventsAreScenarios(t *testing.T) {
	res := run(t, `{"version": 1, "seed": 3,
	  "workload": {"duration_ms": 4000, "parts": [{"type": "poisson", "rate_rps": 200}]},
	  "server": {"workers": 4, "service_ms": 5, "deadline_ms": 200},
	  "metrics": {"rolling_window_ms": 1000},
	  "objectives": [{"metric": "over_admission", "op": "<=", "value": 1.05}],
	  "limiters": [
	    {"type": "token-bucket", "name": "divided", "rate_rps": 50, "burst": 10, "instances": 2, "sharing": "divided", "scale_at_ms": 2000, "scale_to": [2, 1, 4]},
	    {"type": "token-bucket", "name": "central", "rate_rps": 50, "burst": 10, "instances": 2, "sharing": "central", "scale_at_ms": 2000, "scale_to": [2, 1, 4]}]}`)
	a := decide.Decide(res)
	if a == nil || len(a.Settings) != 2 || len(a.Scenarios) != 3 {
		t.Fatalf("%d settings, %d scenarios; want 2 and 3 (scale_to 2, 1, 4)", len(a.Settings), len(a.Scenarios))
	}
	for _, s := range a.Settings {
		if !strings.HasPrefix(s.Name(), "rate_rps=50 burst=10 instances=2") || strings.Contains(s.Name(), "scale") {
			t.Errorf("setting %q: a scaling event is not part of it", s.Name())
		}
		// divided: scaling out to 4 instances of limit/2 each doubles the
		// limit and misses; central keeps it in every scenario.
		if want := s.Limiter == "central"; s.MeetsAll != want {
			t.Errorf("%s: meets %v, want %v", s.Limiter, s.MeetsAll, want)
		}
	}
}
