package presets_test

import (
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// The library presets state what they measure; these are the numbers.

func TestXTimeRateBurstPreset(t *testing.T) {
	res := runPreset(t, "x-time-rate-burst")
	if res.Arrivals != 10_000 {
		t.Errorf("arrivals = %d, want 10000 (one every 0.1 ms for a second)", res.Arrivals)
	}
	for label, want := range map[string]int{
		string(limiter.TypeXTimeRate):   109,
		string(limiter.TypeTokenBucket): 109,
		string(limiter.TypeGCRA):        109,
		string(limiter.TypeRedisRate):   109,
		"x-time-rate-10-per-second":     10,
	} {
		m := point(t, res, label).Metrics
		if m.Admitted != want || m.RollingMax != want {
			t.Errorf("%s: admitted %d, rolling max %d in a second, want %d", label, m.Admitted, m.RollingMax, want)
		}
	}
}

func TestRedisRateRoundingPreset(t *testing.T) {
	res := runPreset(t, "redis-rate-rounding")
	if res.Arrivals != 400_000 {
		t.Errorf("arrivals = %d, want 400000 (one every 0.5 ms for 200 s)", res.Arrivals)
	}
	for label, want := range map[string][2]int{
		string(limiter.TypeRedisRate):   {201_002, 101_000},
		string(limiter.TypeGCRA):        {200_999, 100_999},
		string(limiter.TypeTokenBucket): {200_999, 100_999},
		string(limiter.TypeXTimeRate):   {200_999, 100_999},
	} {
		m := point(t, res, label).Metrics
		if m.Admitted != want[0] || m.RollingMax != want[1] {
			t.Errorf("%s: admitted %d, at most %d in 100 s, want %d and %d", label, m.Admitted, m.RollingMax, want[0], want[1])
		}
	}

	// #24's schedule: Allow at 0 and 250 ms of every second for 30 s,
	// Limit{Rate: 17, Period: 30 s, Burst: 1}.
	g := limiter.NewRedisRate(17, 1, 30_000)
	admitted := 0
	for s := range 30 {
		for _, at := range []float64{float64(s) * 1000, float64(s)*1000 + 250} {
			if _, ok := g.Offer(at, 0); ok {
				admitted++
			}
		}
	}
	if admitted != 15 {
		t.Errorf("#24's schedule: admitted %d, want 15", admitted)
	}
}
