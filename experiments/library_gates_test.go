package experiments_test

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// The library gates' settings are validated from their parameter tables:
// a value outside the library's own range is named by field path and the
// message says where the range comes from; word settings are options.
func TestLibraryGateSettingsAreValidated(t *testing.T) {
	const head = `{"version": 1, "seed": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]}, "limiters": [`
	for _, c := range []struct {
		limiter, path, msg string
	}{
		{`{"type": "redis-rate", "limit": 0, "burst": 10}`, "limiters[0].limit",
			"must be at least 1: redis_rate's script divides the period by Limit.Rate"},
		{`{"type": "redis-rate", "limit": 10, "burst": -1}`, "limiters[0].burst",
			"must be at least 0: redis_rate takes a Burst from 0, which refuses every request"},
		{`{"type": "redis-rate", "limit": 10, "burst": 1, "period_ms": 10}`, "limiters[0].period_ms",
			"must be between 1000 and 86400000 ms: the lab takes Limit.Period from 1 s"},
		{`{"type": "uber-ratelimit", "limit": 0}`, "limiters[0].limit",
			"must be at least 1: ratelimit.New divides the period by the rate, so 0 is an integer division by zero"},
		{`{"type": "uber-ratelimit", "limit": 10, "slack": -1}`, "limiters[0].slack",
			"must be at least 0: ratelimit takes a slack from 0 (WithoutSlack)"},
		{`{"type": "x-time-rate", "rate_rps": -1, "burst": 1}`, "limiters[0].rate_rps",
			"must be between 0 and 1000000 requests/s: x/time/rate takes a rate.Limit from 0"},
		{`{"type": "x-time-rate", "rate_rps": 10, "burst": 1, "mode": "wait"}`, "limiters[0].mode",
			`must be "allow" or "reserve"`},
		{`{"type": "x-time-rate", "rate_rps": 10, "burst": 1, "max_wait_ms": -5}`, "limiters[0].max_wait_ms",
			"must be between 0 and 86400000 ms"},
		{`{"type": "dual-token-bucket", "rate_rps": 10, "burst": 5}`, "limiters[0].peak_rps",
			"is required"},
		{`{"type": "gcra", "rate_rps": 10, "burst": 0}`, "limiters[0].burst",
			"must be at least 1"},
	} {
		_, err := document.DecodeConfig([]byte(head + c.limiter + `]}`))
		found := false
		for _, e := range field.Errors(err) {
			if e.Path == c.path && strings.Contains(e.Msg, c.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want %s: %q, got %v", c.limiter, c.path, c.msg, err)
		}
	}

	// Defaults fill the library's own: Per one second and a slack of 10,
	// Limit.Period one second, allow mode.
	cfg, err := document.DecodeConfig([]byte(head + `{"type": "uber-ratelimit", "limit": 10}, {"type": "redis-rate", "limit": 10, "burst": 10}, {"type": "x-time-rate", "rate_rps": 10, "burst": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	u, r, x := cfg.Limiters[0], cfg.Limiters[1], cfg.Limiters[2]
	if u.ValuesOf("period_ms")[0] != 1000 || u.ValuesOf("slack")[0] != 10 || r.ValuesOf("period_ms")[0] != 1000 || x.Option("mode") != "allow" {
		t.Errorf("defaults: uber %v, redis %v, x/time/rate %v %v", u.Params, r.Params, x.Params, x.Options)
	}
}

// The delaying gates hand the server the delayed release and report the
// gate delay: x/time/rate's reserve mode within max_wait_ms (its delay
// bound), go.uber.org/ratelimit without a bound (its points carry none).
func TestLibraryGatesThatDelay(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 1,
 "workload": {"duration_ms": 2000, "parts": [{"type": "bursts", "bursts": [{"at_ms": 0, "count": 30}, {"at_ms": 1000, "count": 30}]}]},
 "server": {"workers": 4, "service_ms": 1},
 "limiters": [
  {"type": "x-time-rate", "rate_rps": 100, "burst": 5, "mode": "reserve", "max_wait_ms": 120},
  {"type": "uber-ratelimit", "limit": 100, "slack": 0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(t.Context(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, u := res.Points[0], res.Points[1]
	// Each burst: 5 pass at once, 12 more wait 10, 20, ... 120 ms, 13 are refused.
	if m := x.Metrics; m.Admitted != 34 || m.Rejected != 26 || m.GateDelay.Max != 120 {
		t.Errorf("x-time-rate reserve: admitted %d, rejected %d, longest gate delay %v ms; want 34, 26, 120", m.Admitted, m.Rejected, m.GateDelay.Max)
	}
	if b := x.Bounds; b == nil || !b.Bounded || b.GateDelayBoundMS != 120 || b.GateDelayMaxMS != 120 {
		t.Errorf("x-time-rate reserve bounds: %+v", b)
	}
	// Every request waits its turn, 10 ms apart: the 30th of a burst 290 ms.
	if m := u.Metrics; m.Admitted != 60 || m.Rejected != 0 || m.GateDelay.Max != 290 {
		t.Errorf("uber-ratelimit: admitted %d, rejected %d, longest gate delay %v ms; want 60, 0, 290", m.Admitted, m.Rejected, m.GateDelay.Max)
	}
	if b := u.Bounds; b == nil || b.Bounded || b.Note != "unbounded gate delay (the gate never refuses)" {
		t.Errorf("uber-ratelimit bounds: %+v", b)
	}
}
