package presets_test

import "testing"

// The numbers envoy-over-limit-hits' description states: a per-second
// limit's refusals spend the per-minute limit unless the service stops
// incrementing over the limit.
func TestEnvoyOverLimitHitsPreset(t *testing.T) {
	res := runPreset(t, "envoy-over-limit-hits")
	for _, c := range []struct {
		label      string
		admitted   int
		rps        float64 // admitted_rps, to 1 place
		ratio      float64 // effective_ratio, to 2 places
		rollingMax int
	}{
		{"per-second-only", 2397, 20.0, 1.00, 1210},
		{"both", 792, 6.6, 0.66, 412},
		{"both-stop", 1200, 10.0, 1.00, 612},
	} {
		m := point(t, res, c.label).Metrics
		if m.Replicas == nil || m.Admitted != c.admitted || round1(m.AdmittedRPS) != c.rps || round2(m.Replicas.EffectiveRatio) != c.ratio || m.RollingMax != c.rollingMax {
			t.Errorf("%s: admitted %d (%g/s), replicas %+v, rolling max %d; the description says %d (%g/s), effective_ratio %.2f, %d",
				c.label, m.Admitted, m.AdmittedRPS, m.Replicas, m.RollingMax, c.admitted, c.rps, c.ratio, c.rollingMax)
		}
	}
}
