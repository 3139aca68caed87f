package form

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
)

// sweptForm is a form whose workload rate, service time and seed are
// lists or ranges, with replications.
func sweptForm(rate, service, seed, reps string) *Sweep {
	return &Sweep{
		Seed: seed, Replications: reps, DurationMS: "2000", ServiceMS: service,
		Parts:    []Part{{Type: "poisson", Fields: map[string]string{"rate_rps": rate}}},
		Limiters: []Limiter{{Type: "token-bucket", Params: map[string]string{"rate_rps": "100", "burst": "5, 20"}}},
	}
}

func TestFormSweepsNumericFields(t *testing.T) {
	f := sweptForm("50, 100", "5..15 step 5", "1, 2", "")
	doc, cfg := f.Document()
	if cfg == nil {
		t.Fatalf("errors: %v", f.Problems)
	}
	var paths []string
	for _, a := range cfg.Axes() {
		paths = append(paths, a.Path)
	}
	if want := []string{"server.service_ms", "workload.parts[0].rate_rps", "seed"}; !slices.Equal(paths, want) {
		t.Fatalf("axes %v, want %v\n%s", paths, want, doc)
	}
	if n := len(cfg.Points()); n != 2*3*2*2 {
		t.Errorf("%d points", n)
	}
	// Back into the form and out again: the same config.
	back := FromConfig(cfg)
	if back.ServiceMS != "5, 10, 15" || back.Parts[0].Get("rate_rps") != "50, 100" || back.Seed != "1, 2" {
		t.Errorf("form from the config: service %q rate %q seed %q", back.ServiceMS, back.Parts[0].Get("rate_rps"), back.Seed)
	}
	_, again := back.Document()
	if again == nil || !bytes.Equal(again.JSON(), cfg.JSON()) {
		t.Errorf("round trip: %v\n%s", back.Problems, again.JSON())
	}
	// A seed list with replications: each seed runs its own range.
	f = sweptForm("50", "10", "1, 11", "4")
	if _, cfg := f.Document(); cfg == nil || len(cfg.Points()) != 2*2 || FromConfig(cfg).Seed != "1, 11" {
		t.Errorf("seeds with replications: %v", f.Problems)
	}
	// Replications come through too.
	f = sweptForm("50", "10", "7", "4")
	if _, cfg := f.Document(); cfg == nil || cfg.Replications != 4 || FromConfig(cfg).Replications != "4" {
		t.Errorf("replications: %v %+v", f.Problems, cfg)
	}
}

func TestFormSweepErrors(t *testing.T) {
	cases := []struct {
		name string
		f    *Sweep
		key  string
		msg  string
	}{
		{"a bad value of a list", sweptForm("50, -3", "", "", ""), "parts.0.rate_rps", "value 2 (-3)"},
		{"a bad range", sweptForm("50..10", "", "", ""), "parts.0.rate_rps", "below the start"},
		{"a bad service time", sweptForm("50", "5, 0", "", ""), "server.service_ms", "value 2 (0)"},
		{"replications 0", sweptForm("50", "", "", "0"), "replications", "from 2 to"},
		{"too many replications", sweptForm("50", "", "", "101"), "replications", "from 2 to"},
		{"overlapping seed ranges", sweptForm("50", "", "1, 2", "3"), "seed", "overlap"},
		{"a fraction of a seed", sweptForm("50", "", "1, 2.5", ""), "seed", "whole number"},
	}
	for _, c := range cases {
		_, cfg := c.f.Document()
		if cfg != nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if msgs := c.f.Errors[c.key]; !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, c.msg) }) {
			t.Errorf("%s: errors at %s: %v (all: %v)", c.name, c.key, msgs, c.f.Problems)
		}
	}
	// A list in a field that takes one value: an error there.
	f := sweptForm("50", "", "", "")
	f.Parts = []Part{{Type: "clients", Fields: map[string]string{"group": "g", "clients": "2, 3", "rate_rps": "5"}}}
	if _, cfg := f.Document(); cfg != nil || len(f.Errors["parts.0.clients"]) == 0 {
		t.Errorf("a list of clients: %v", f.Problems)
	}
	_ = experiments.MaxReplications
}
