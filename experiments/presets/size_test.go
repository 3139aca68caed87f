package presets_test

import (
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/presets"
)

// TestSizeIsTheSweep: for every preset, Size counts the points Points
// lists and the runs Runs lists, and its lists multiply to them (the
// limiters' points summed, then the factors, then the replications).
func TestSizeIsTheSweep(t *testing.T) {
	for _, p := range presets.All() {
		cfg, err := document.DecodeConfig(p.JSON)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		z := cfg.Size()
		if z.Points != len(cfg.Points()) || z.Runs != len(cfg.Runs()) {
			t.Errorf("%s: Size %d points, %d runs; the sweep %d points, %d runs", p.Name, z.Points, z.Runs, len(cfg.Points()), len(cfg.Runs()))
		}
		sum := 0
		for _, l := range z.Limiters {
			n := 1
			for _, f := range l.Lists {
				n *= f.N
			}
			if n != l.Points {
				t.Errorf("%s: %s's lists multiply to %d, not its %d points", p.Name, l.Label, n, l.Points)
			}
			sum += n
		}
		for _, f := range z.Factors {
			sum *= f.N
		}
		if sum != z.Points || z.Points*z.Replications != z.Runs {
			t.Errorf("%s: %s multiplies to %d, not %d points (%d runs)", p.Name, z.Product(), sum, z.Points, z.Runs)
		}
		if z.Arrivals <= 0 || z.Seconds() <= 0 {
			t.Errorf("%s: %g arrivals, %g s", p.Name, z.Arrivals, z.Seconds())
		}
		t.Logf("%s: %s × %.0f arrivals ≈ %.2f s", p.Name, z, z.Arrivals/float64(z.Runs), z.Seconds())
	}
}
