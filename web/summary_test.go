package web

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
)

// TestSummaryServerLine: the run page's server line names a drawn
// service distribution by its settings and prints the derived mean and the
// capacity rounded, never a float's every digit (13.056408444162809 ms).
func TestSummaryServerLine(t *testing.T) {
	t.Parallel()
	cfg, err := presets.Config("heavy-tail")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, kv := range summarize(cfg).Items {
		if kv.Key == "Server" {
			line = kv.Value
		}
	}
	want := "1 worker(s), lognormal service (service_p50_ms 8 ms, service_p99_ms 80 ms; mean 13.06 ms) (capacity 76.6 req/s), deadline 200 ms"
	if line != want {
		t.Fatalf("server line\n got %q\nwant %q", line, want)
	}
	cfg.Server.SetOption("service", "fixed")
	cfg.Server.ServiceMS = 3
	for _, kv := range summarize(cfg).Items {
		if kv.Key == "Server" && !strings.HasPrefix(kv.Value, "1 worker(s), 3 ms service (capacity 333.3 req/s)") {
			t.Fatalf("fixed service: %q", kv.Value)
		}
	}
}
