package web

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/workload"
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

// TestSummarySaysWhatMatters: the summary names every load, server variant
// and class, and a part's start (issue 26: "demand curve of 2 segments"
// for loads 50-500 with a door and classes; "poisson 90 rps" without its
// start_ms).
func TestSummarySaysWhatMatters(t *testing.T) {
	cfg, err := presets.Config("slo-load-control")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workload.Parts = append(cfg.Workload.Parts, workload.Part{Type: "poisson", RateRPS: 90, StartMS: 20000})
	var all []string
	for _, kv := range summarize(cfg).Items {
		all = append(all, kv.Key+": "+kv.Value)
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{"Loads (8, each run by every point)", "500: constant 500 rps", "burst: the workload above",
		"Servers (2 variants)", "blind: door tail-drop", "priority: door priority", "Classes: critical 25%, background (the rest)", "poisson 90 rps from 20 s"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}
