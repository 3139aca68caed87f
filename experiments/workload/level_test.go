package workload_test

import (
	"testing"

	"github.com/ratelab/ratelab/experiments/workload"
)

// TestLevelRPS: a load's configured rate (results.csv's level_rps) at
// worked examples: the seed's Post 1 level at a window that is no whole
// number of spacings (25 rps over 1201 ms is 30.025 arrivals: the level
// stays 25, exactly), parts with a span (the share of the window they
// cover), client groups, demand curves over whole and cut cycles, and the
// parts without a level.
func TestLevelRPS(t *testing.T) {
	t.Parallel()
	end := func(v float64) *float64 { return &v }
	bursty := []workload.Segment{{RateRPS: 50, DurationMS: 200}, {RateRPS: 300, DurationMS: 100}}
	for _, c := range []struct {
		name   string
		window float64
		parts  []workload.Part
		level  float64
		ok     bool
	}{
		{"post 1 at 1201 ms", 1201, []workload.Part{{Type: workload.Constant, RateRPS: 25}}, 25, true},
		{"post 1 at 1 s, level 1732", 1000, []workload.Part{{Type: workload.Constant, RateRPS: 1732}}, 1732, true},
		{"Poisson", 5000, []workload.Part{{Type: workload.Poisson, RateRPS: 85}}, 85, true},
		{"a spike of 300 rps for 500 of 20000 ms", 20000, []workload.Part{
			{Type: workload.Poisson, RateRPS: 85}, {Type: workload.Poisson, RateRPS: 300, StartMS: 10000, EndMS: end(10500)}}, 85 + 7.5, true},
		{"a part ending after the window counts to its end", 1000, []workload.Part{{Type: workload.Constant, RateRPS: 10, StartMS: 500, EndMS: end(5000)}}, 5, true},
		{"client group: clients × rate", 1000, []workload.Part{{Type: workload.Clients, Group: "g", Clients: 4, RateRPS: 10}}, 40, true},
		{"demand curve, whole cycles (300 ms)", 3000, []workload.Part{{Type: workload.DemandCurve, Segments: bursty}}, 400.0 / 3, true},
		{"demand curve, cut cycle (Post 2 at 5 s: 16 cycles and 200 ms of 50)", 5000, []workload.Part{{Type: workload.DemandCurve, Segments: bursty}}, 130, true},
		{"demand curve, cut in its first segment", 100, []workload.Part{{Type: workload.DemandCurve, Segments: bursty}}, 50, true},
		{"bursts have none", 1000, []workload.Part{{Type: workload.Constant, RateRPS: 10}, {Type: workload.Bursts}}, 0, false},
		{"a flash crowd has none", 1000, []workload.Part{{Type: workload.FlashCrowd, BaseRPS: 10}}, 0, false},
		{"no part", 1000, nil, 0, false},
	} {
		s := workload.Spec{DurationMS: c.window, Parts: c.parts}
		level, ok := s.LevelRPS()
		if ok != c.ok || level != c.level {
			t.Errorf("%s: level %v (ok %v), want %v (ok %v)", c.name, level, ok, c.level, c.ok)
		}
	}
}
