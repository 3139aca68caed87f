package simulate_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// randomClientConfig builds a small client-model config from seed, with
// client behaviour, closed loops, service distributions and queue servers
// at ordinary and extreme values (timeouts below a microsecond, a hundred
// retries without backoff, budgets with no ratio, a thousand users
// thinking a millisecond, heavy-tailed service), as a user of the form
// could type them. Values outside the limits are refused by DecodeConfig;
// the rest must run.
func randomClientConfig(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 0xc11e))
	pickF := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	pickS := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	duration := pickF(1, 50, 999.5, 1000, 3000)
	behaviour := func() map[string]any {
		b := map[string]any{}
		if rng.IntN(5) > 0 {
			b["timeout_ms"] = pickF(1e-9, 0.001, 1, 10, 200, 1e6)
		}
		if rng.IntN(4) > 0 {
			b["retries"] = pickF(0, 1, 3, 100)
			b["backoff_ms"] = pickF(0, 1e-9, 1, 50, 1e6)
			if k := pickS("", "fixed", "exponential"); k != "" {
				b["backoff"] = k
			}
			if rng.IntN(2) == 0 {
				b["backoff_max_ms"] = pickF(1e-9, 1, 100, 1e7)
			}
			if j := pickS("", "none", "full", "equal", "decorrelated"); j != "" {
				b["jitter"] = j
			}
			if rng.IntN(3) == 0 {
				b["retry_after"] = pickS("ignore", "honour")
			}
		}
		if rng.IntN(3) == 0 {
			b["budget"] = pickS("client", "global")
			b["budget_ratio"] = pickF(0, 0.001, 0.2, 1)
			b["budget_floor_rps"] = pickF(0, 0.001, 10, 1e6)
		}
		if rng.IntN(4) == 0 {
			b["throttle_k"] = pickF(1, 1.5, 2, 10)
			b["throttle_window_ms"] = pickF(10, 100, 1e6)
		}
		return b
	}
	with := func(p map[string]any) map[string]any {
		for k, v := range behaviour() {
			p[k] = v
		}
		return p
	}
	var parts []any
	for range 1 + rng.IntN(2) {
		switch rng.IntN(5) {
		case 0:
			parts = append(parts, with(map[string]any{"type": "poisson", "rate_rps": pickF(0.5, 100, 1000, 5000)}))
		case 1:
			parts = append(parts, with(map[string]any{"type": "clients", "group": "c", "clients": 1 + rng.IntN(5), "rate_rps": pickF(1, 100, 2000)}))
		case 2:
			parts = append(parts, with(map[string]any{"type": "bursts", "clients": 1 + rng.IntN(3), "group": "b", "bursts": []map[string]any{
				{"at_ms": pickF(0, duration/2, duration-1), "count": 1 + rng.IntN(500), "spread_ms": pickF(0, 1e-9, 10)}}}))
		case 3:
			parts = append(parts, with(map[string]any{"type": "trace", "csv": "0,a\n0,b\n0.0000001,a\n0.5,c\n"}))
		default:
			u := with(map[string]any{"type": "users", "users": pickF(0, 1, 30, 1000), "think_ms": pickF(0.5, 1, 10, 1e6)})
			if th := pickS("", "fixed", "exponential"); th != "" {
				u["think"] = th
			}
			if rng.IntN(2) == 0 {
				u["start_ms"] = pickF(0, duration/2)
			}
			parts = append(parts, u)
		}
	}
	var limiters []any
	for i := range 1 + rng.IntN(2) {
		var l map[string]any
		switch rng.IntN(8) {
		case 0:
			l = map[string]any{"type": "none"}
		case 1:
			l = map[string]any{"type": "token-bucket", "rate_rps": pickF(0.001, 1, 100, 1e6), "burst": pickF(1, 20, 1e7)}
		case 2:
			l = map[string]any{"type": "leaky-bucket", "rate_rps": pickF(0.001, 1, 100, 1e6), "queue": pickF(1, 20, 1e7)}
		case 3:
			l = map[string]any{"type": "gcra", "rate_rps": pickF(1, 100), "burst": pickF(1, 20)}
		case 4:
			l = map[string]any{"type": "sliding-window-log", "limit": pickF(1, 50), "window_ms": pickF(1e-9, 1, 1000)}
		case 5:
			l = map[string]any{"type": "admission", "limit": pickF(1, 5, 1000)}
		case 6:
			l = map[string]any{"type": "x-time-rate", "rate_rps": pickF(1, 100), "burst": pickF(1, 20)}
		default:
			l = map[string]any{"type": "fixed-window", "limit": pickF(1, 100), "window_ms": pickF(1, 1000)}
		}
		l["name"] = "l" + string(rune('0'+i))
		limiters = append(limiters, l)
	}
	srv := map[string]any{"workers": 1 + rng.IntN(4), "deadline_ms": pickF(1e-9, 1, 100, 1e6)}
	switch rng.IntN(5) {
	case 0:
		srv["service"], srv["service_ms"] = "exponential", pickF(0.001, 1, 10, 1e4)
	case 1:
		p50 := pickF(0.001, 1, 8, 1000)
		srv["service"], srv["service_p50_ms"], srv["service_p99_ms"] = "lognormal", p50, p50*pickF(1, 2, 10, 1000)
	case 2:
		srv["service"], srv["service_slow_share"], srv["service_fast_ms"], srv["service_slow_ms"] = "bimodal", pickF(0, 0.01, 1), pickF(0.001, 1), pickF(1, 1e4)
	default:
		srv["service_ms"] = pickF(0.001, 1, 10, 1e4)
	}
	if rng.IntN(2) == 0 {
		srv["cancel_on_timeout"] = pickS("finish", "drop-unstarted")
	}
	if rng.IntN(2) == 0 {
		srv["discipline"] = pickS("fifo", "lifo")
		if srv["door"] = pickS("open", "tail-drop"); srv["door"] != "open" {
			srv["bound"] = pickF(1, 3, 100)
		}
		srv["expire"] = pickS("never", "at-dequeue")
		srv["end"] = pickS("drain", "cut")
	}
	doc := map[string]any{
		"version":  1,
		"seed":     seed,
		"workload": map[string]any{"duration_ms": duration, "parts": parts},
		"server":   srv,
		"limiters": limiters,
	}
	if rng.IntN(3) == 0 {
		doc["replications"] = 2 + rng.IntN(2)
	}
	if rng.IntN(4) == 0 {
		doc["trigger"] = map[string]any{"start_ms": pickF(0, duration/4), "end_ms": pickF(duration/3, duration/2)}
	}
	if rng.IntN(4) == 0 { // client policies: each overrides what it gives
		var pols []any
		for i := range 1 + rng.IntN(3) {
			pol := behaviour()
			pol["name"] = "p" + string(rune('0'+i))
			pols = append(pols, pol)
		}
		doc["policies"] = pols
	}
	if rng.IntN(4) == 0 && srv["discipline"] != nil { // classes at a priority door
		doc["classes"] = []any{map[string]any{"name": "gold", "share": pickF(0, 0.3, 1)}, map[string]any{"name": "bronze"}}
		if rng.IntN(2) == 0 {
			srv["door"], srv["bound"] = "priority", pickF(1, 5)
		}
	}
	switch rng.IntN(6) { // a swept workload or server field, or a seed list
	case 0:
		if p, ok := parts[0].(map[string]any); ok && p["rate_rps"] != nil {
			p["rate_rps"] = []float64{pickF(1, 50), pickF(100, 2000)}
		}
	case 1:
		srv["workers"] = []int{1, 1 + rng.IntN(4)}
	case 2:
		doc["seed"] = []uint64{seed, seed + 100}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

// runClientSmall decodes doc and, when it is small, runs it at one and at
// three workers (the same bytes) and writes its outputs, checking what the
// client model's counts promise. It reports whether it ran.
func runClientSmall(t *testing.T, doc []byte) bool {
	t.Helper()
	cfg, err := document.DecodeConfig(doc)
	if err != nil {
		return false
	}
	if cfg.Workload.Expected() > 20_000 {
		return false
	}
	maxRetries := 0
	for i := range cfg.Workload.Parts {
		maxRetries = max(maxRetries, cfg.Workload.Parts[i].Behaviour.Retries)
	}
	for i := range cfg.Policies {
		maxRetries = max(maxRetries, cfg.Policies[i].Retries)
	}
	run := func(workers int) []output.File {
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: workers})
		if err != nil {
			t.Fatalf("a valid config failed to run: %v\n%s", err, doc)
		}
		for _, p := range res.Points {
			m, cm := p.Metrics, p.Metrics.Client
			if cm == nil {
				continue
			}
			pct := func(x float64) bool { return x >= 0 && x <= 100 }
			switch {
			case cm.Attempts != m.Admitted+m.Rejected:
				t.Fatalf("point %d: %d attempts, %d admitted + %d rejected\n%s", p.Index, cm.Attempts, m.Admitted, m.Rejected, doc)
			case cm.Attempts-cm.Retries > m.Arrivals, cm.Attempts > m.Arrivals*(1+maxRetries):
				t.Fatalf("point %d: %d attempts (%d retries) for %d requests of at most %d retries\n%s", p.Index, cm.Attempts, cm.Retries, m.Arrivals, maxRetries, doc)
			case cm.AttemptsMax > 1+maxRetries:
				t.Fatalf("point %d: a request made %d attempts, at most %d retries\n%s", p.Index, cm.AttemptsMax, maxRetries, doc)
			case cm.Succeeded != m.OnTime || cm.Succeeded > m.Arrivals:
				t.Fatalf("point %d: %d succeeded, %d on time, %d requests\n%s", p.Index, cm.Succeeded, m.OnTime, m.Arrivals, doc)
			case cm.Served > m.Admitted, cm.Dropped > cm.Abandoned, cm.RetriesServed > cm.Served:
				t.Fatalf("point %d: %+v, %d admitted\n%s", p.Index, *cm, m.Admitted, doc)
			case !(cm.WastedWorkMS >= 0) || !pct(cm.WastedWorkPct) || !pct(cm.SuccessPct) || !pct(cm.RetrySharePct) || !pct(cm.FailedAttemptsPct):
				t.Fatalf("point %d: %+v\n%s", p.Index, *cm, doc)
			case math.IsNaN(m.GoodputRPS) || m.GoodputRPS < 0:
				t.Fatalf("point %d: goodput %g\n%s", p.Index, m.GoodputRPS, doc)
			}
		}
		files, err := output.Files(res)
		if err != nil {
			t.Fatalf("outputs: %v\n%s", err, doc)
		}
		return files
	}
	one, three := run(1), run(3)
	for i := range one {
		if string(one[i].Data) != string(three[i].Data) {
			t.Fatalf("%s differs at 1 and 3 workers\n%s", one[i].Name, doc)
		}
	}
	return true
}

// TestRandomClientConfigsRun runs 300 random small client-model configs
// with extreme values: none may panic, fail after validation, break a
// count the model promises, or differ between worker counts.
func TestRandomClientConfigsRun(t *testing.T) {
	ran := 0
	n := uint64(300)
	if testing.Short() {
		n = 60
	}
	for seed := range n {
		if runClientSmall(t, randomClientConfig(seed)) {
			ran++
		}
	}
	if ran < int(n)/4 {
		t.Fatalf("only %d of %d random configs were valid and small: the generator drifted", ran, n)
	}
	t.Logf("%d of %d random client configs ran", ran, n)
}

// FuzzRandomClientConfig explores more seeds of randomClientConfig:
//
//	go test -run '^$' -fuzz FuzzRandomClientConfig -fuzztime 60s ./experiments/
func FuzzRandomClientConfig(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(4242))
	f.Fuzz(func(t *testing.T, seed uint64) {
		runClientSmall(t, randomClientConfig(seed))
	})
}
