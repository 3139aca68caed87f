package simulate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// runConfig decodes and runs a config given as JSON.
func runConfig(t *testing.T, doc string) *experiments.Result {
	t.Helper()
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// edgeConfig is a run of one limiter over a trace (CSV rows t_ms,client).
func edgeConfig(rows, limiterJSON string) string {
	return `{"version":1,"seed":1,
		"workload":{"duration_ms":300,"parts":[{"type":"trace","csv":"t_ms,client\n` + strings.ReplaceAll(rows, " ", `\n`) + `\n"}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":200},
		"limiters":[` + limiterJSON + `]}`
}

// TestEdgeTracesEndToEnd runs the traces at window and refill edges through
// the whole engine (trace parsing, gate, counts): the gates decide on the
// float64 values exactly.
func TestEdgeTracesEndToEnd(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		admitted  int
	}{
		{"fixed window: 233.09999999999997 is in window 6 of 33.3 ms, with 200", `{"version":1,"seed":1,
			"workload":{"duration_ms":300,"parts":[{"type":"trace","csv":"t_ms,client\n200,a\n233.09999999999997,a\n"}]},
			"server":{"workers":1,"service_ms":10,"deadline_ms":200},
			"limiters":[{"type":"fixed-window","limit":1,"window_ms":33.3}]}`, 1},
		{"sliding counter: 166.49999999999997 is in window 4 of 33.3 ms",
			edgeConfig("166.49999999999997,a 177.6,a", `{"type":"sliding-window-counter","limit":1,"window_ms":33.3}`), 2},
		{"per-client bucket: one token for a at 30 ms",
			edgeConfig("0,a 0,b 0,c 30,a", `{"type":"per-client-token-bucket","rate_rps":100,"burst":3}`), 4},
		{"hierarchical bucket: a within its share at 30 ms",
			edgeConfig("0,a 0,b 0,c 30,a", `{"type":"hierarchical-token-bucket","rate_rps":100,"burst":3}`), 4},
		{"hierarchical bucket: G - 1 equals the sum of the client buckets at 100 ms",
			edgeConfig("0,b 5,b 10,b 40,b 50,b 100,a 100,b", `{"type":"hierarchical-token-bucket","rate_rps":20,"burst":3}`), 4},
	} {
		res := runConfig(t, c.doc)
		if got := res.Points[0].Metrics.Admitted; got != c.admitted {
			t.Errorf("%s: %d admitted, want %d", c.name, got, c.admitted)
		}
	}
}

// TestFairnessWindowsAreExact puts two clients' arrivals in one fairness
// window of 33.3 ms, the second a hair below 7*33.3 (its quotient rounds
// to 7): Jain's index of that window is 1, not two windows of 0.5.
func TestFairnessWindowsAreExact(t *testing.T) {
	doc := `{"version":1,"seed":1,
		"workload":{"duration_ms":300,"parts":[{"type":"trace","csv":"t_ms,client\n200,a\n233.09999999999997,b\n"}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":200},
		"metrics":{"fairness_window_ms":33.3},
		"limiters":[{"type":"none"}]}`
	res := runConfig(t, doc)
	jain := res.Points[0].JainSeries
	if len(jain) != 10 { // ceil(300/33.3)
		t.Fatalf("%d fairness windows, want 10: %v", len(jain), jain)
	}
	for k, j := range jain {
		if j != 1 {
			t.Errorf("fairness window %d: Jain's index %g, want 1 (both clients in window 6, no window with one alone): %v", k, j, jain)
		}
	}
}
