package simulate_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// randomConfig builds a small config from seed, with every part and
// limiter type and parameters drawn from ordinary and extreme values (tiny
// rates and windows, huge limits and queues, long services), as a user of
// the web form could type them. Values outside the limits are refused by
// DecodeConfig; the rest must run.
func randomConfig(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 99))
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	rate := func() float64 { return pick(1e-9, 0.001, 0.5, 1, 7, 100, 333.3, 1000, 1e5, 1e6) }
	ms := func() float64 { return pick(1e-9, 0.001, 0.5, 1, 10, 99.99, 100, 1000, 86_400_000) }
	size := func() float64 { return pick(1, 2, 3, 10, 1000, 10_000_000) }
	duration := pick(1, 10, 100, 999.5, 1000, 5000, 60_000)
	var parts []map[string]any
	for range 1 + rng.IntN(3) {
		var p map[string]any
		switch rng.IntN(7) {
		case 0:
			p = map[string]any{"type": "demand-curve", "segments": []map[string]any{
				{"rate_rps": pick(0, 20, 0.01), "duration_ms": ms()}, {"rate_rps": rate(), "duration_ms": ms()}}}
		case 1:
			p = map[string]any{"type": "constant", "rate_rps": rate(), "start_ms": pick(0, 5, duration-1), "end_ms": pick(0, 10, duration, 1e9)}
		case 2:
			p = map[string]any{"type": "poisson", "rate_rps": rate(), "group": "g"}
		case 3:
			p = map[string]any{"type": "bursts", "clients": 1 + rng.IntN(3), "group": "b", "bursts": []map[string]any{
				{"at_ms": pick(0, duration-1, duration/2), "count": 1 + rng.IntN(200), "spread_ms": pick(0, 1e-9, 10, 1e6)}}}
		case 4:
			p = map[string]any{"type": "clients", "group": "c", "clients": 1 + rng.IntN(4), "rate_rps": rate(),
				"arrival": []string{"uniform", "poisson", "synchronized"}[rng.IntN(3)], "weight": pick(1, 0.001, 1e6)}
		case 5:
			p = map[string]any{"type": "flash-crowd", "base_rps": rate(), "multiplier": pick(1, 10, 1000), "start_ms": pick(0, duration/3),
				"duration_ms": pick(1, duration/2, 1e6), "ramp_ms": pick(0, 0.5), "arrival": []string{"uniform", "poisson"}[rng.IntN(2)]}
		default:
			p = map[string]any{"type": "trace", "csv": "0,a\n0,b\n0.0000001,a\n0.5,c\n"}
		}
		parts = append(parts, p)
	}
	var limiters []map[string]any
	for i := range 1 + rng.IntN(3) {
		var l map[string]any
		switch rng.IntN(10) {
		case 0:
			l = map[string]any{"type": "token-bucket", "rate_rps": rate(), "burst": size()}
		case 1:
			l = map[string]any{"type": "leaky-bucket", "rate_rps": rate(), "queue": size()}
		case 2:
			l = map[string]any{"type": "admission", "limit": size()}
		case 3:
			l = map[string]any{"type": "fixed-window", "limit": size(), "window_ms": ms()}
		case 4:
			l = map[string]any{"type": "sliding-window-counter", "limit": size(), "window_ms": ms()}
		case 5:
			l = map[string]any{"type": "sliding-window-log", "limit": size(), "window_ms": ms()}
		case 6:
			l = map[string]any{"type": "per-client-token-bucket", "rate_rps": rate(), "burst": size(), "shares": []string{"equal", "weighted"}[rng.IntN(2)]}
		case 7:
			l = map[string]any{"type": "hierarchical-token-bucket", "rate_rps": rate(), "burst": size()}
		case 8:
			l = map[string]any{"type": "chain", "stages": []map[string]any{
				{"type": "token-bucket", "rate_rps": rate(), "burst": size()},
				{"type": "server", "workers": 1 + rng.IntN(3), "service_ms": ms()},
				{"type": "leaky-bucket", "rate_rps": rate(), "queue": size()}}}
		default:
			l = map[string]any{"type": "none"}
		}
		l["name"] = "l" + string(rune('0'+i))
		limiters = append(limiters, l)
	}
	doc := map[string]any{
		"version":  1,
		"seed":     seed,
		"workload": map[string]any{"duration_ms": duration, "parts": parts},
		"server":   map[string]any{"workers": 1 + rng.IntN(4), "service_ms": ms(), "deadline_ms": ms()},
		"metrics":  map[string]any{"rolling_window_ms": ms(), "fairness_window_ms": pick(1, 100, 1000, 1e6)},
		"limiters": limiters,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

// runSmall decodes doc and, when it is small, runs it and writes its
// outputs, checking that the counts add up. It reports whether it ran.
func runSmall(t *testing.T, doc []byte) bool {
	t.Helper()
	cfg, err := document.DecodeConfig(doc)
	if err != nil {
		return false
	}
	if cfg.Workload.Expected() > 20_000 {
		return false
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
	if err != nil {
		t.Fatalf("a valid config failed to run: %v\n%s", err, doc)
	}
	for _, p := range res.Points {
		m := p.Metrics
		if m.Admitted+m.Rejected != m.Arrivals || m.OnTime+m.Late != m.Admitted || m.Arrivals != res.Arrivals {
			t.Fatalf("point %d: counts do not add up: %+v\n%s", p.Index, m, doc)
		}
	}
	if _, err := output.Files(res); err != nil {
		t.Fatalf("outputs: %v\n%s", err, doc)
	}
	return true
}

// TestRandomConfigsRun runs 300 random small configs with extreme
// parameters: none may panic, fail after validation, or lose a request.
func TestRandomConfigsRun(t *testing.T) {
	ran := 0
	for seed := range uint64(300) {
		if runSmall(t, randomConfig(seed)) {
			ran++
		}
	}
	if ran < 100 {
		t.Fatalf("only %d of 300 random configs were valid and small: the generator drifted", ran)
	}
	t.Logf("%d of 300 random configs ran", ran)
}

// FuzzRandomConfig explores more seeds of randomConfig:
//
//	go test -run '^$' -fuzz FuzzRandomConfig -fuzztime 60s ./experiments/
func FuzzRandomConfig(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(12345))
	f.Fuzz(func(t *testing.T, seed uint64) {
		runSmall(t, randomConfig(seed))
	})
}

// TestTinyRatesAreRefused: a rate so small that 1000/rate overflows to
// +Inf (which once panicked the run) is refused at validation, by field.
func TestTinyRatesAreRefused(t *testing.T) {
	doc := `{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]},
		"limiters": [{"type": "leaky-bucket", "name": "slow", "rate_rps": 1e-320, "queue": 1}]}`
	_, err := document.DecodeConfig([]byte(doc))
	if err == nil || !strings.Contains(err.Error(), "limiters[0].rate_rps: must be between 0.001") {
		t.Fatalf("DecodeConfig = %v, want limiters[0].rate_rps refused", err)
	}
}

// TestRunawayReleasesAreErrors: configs that pass validation but release
// requests absurdly late (a chain's server stage holding requests for days)
// end the run with an error naming the limiter, instead of panicking or
// allocating the series of every 100 ms until then.
func TestRunawayReleasesAreErrors(t *testing.T) {
	for _, c := range []struct{ name, limiter string }{
		{"chain with an hour-long server stage", `{"type": "chain", "name": "slow", "stages": [
			{"type": "token-bucket", "rate_rps": 1000, "burst": 100},
			{"type": "server", "workers": 1, "service_ms": 3600000}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := `{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]},
				"limiters": [` + c.limiter + `]}`
			cfg, err := document.DecodeConfig([]byte(doc))
			if err != nil {
				t.Fatalf("refused at validation (fine, but then this test is moot): %v", err)
			}
			_, err = sweep.Run(context.Background(), cfg, sweep.Options{})
			if err == nil || !strings.Contains(err.Error(), "slow released a request at") {
				t.Fatalf("Run = %v, want an error naming the limiter and the late release", err)
			}
		})
	}
}
