package presets_test

import "testing"

// The numbers lease-skew's description states: under a skewed load local
// over-admits, divided strands the idle instances' shares, central keeps
// the limit and the leases keep it while moving the share to the busy
// instance, a refresh behind its demand.
func TestLeaseSkewPreset(t *testing.T) {
	res := runPreset(t, "lease-skew")
	for _, c := range []struct {
		label         string
		refreshMS     float64 // 0: not a lease
		admitted      float64 // admitted_rps, to 1 place
		ratio         float64 // effective_ratio, to 2 places
		overAdmission float64 // to 2 places
	}{
		{"local", 0, 69.3, 1.16, 1.04},
		{"divided", 0, 28.9, 0.48, 0.49},
		{"central", 0, 60.6, 1.01, 0.96},
		{"lease-fair", 250, 52.1, 0.87, 0.76},
		{"lease-fair", 1000, 54.2, 0.90, 0.84},
		{"lease-proportional", 250, 52.9, 0.88, 0.79},
	} {
		found := false
		for _, p := range res.Points {
			if p.Limiter != c.label || p.Params["refresh_ms"] != c.refreshMS {
				continue
			}
			found = true
			m := p.Metrics
			r := m.Replicas
			if r == nil || round1(m.AdmittedRPS) != c.admitted || round2(r.EffectiveRatio) != c.ratio || round2(r.OverAdmission) != c.overAdmission ||
				round1(r.BusiestSharePct) != 88.6 || r.ConfiguredRPS != 60 {
				t.Errorf("%s (refresh %g): admitted %g, replicas %+v; the description says %g, effective_ratio %.2f, over_admission %.2f, busiest 88.6%%",
					c.label, c.refreshMS, m.AdmittedRPS, r, c.admitted, c.ratio, c.overAdmission)
			}
		}
		if !found {
			t.Errorf("no point %s at refresh_ms %g", c.label, c.refreshMS)
		}
	}
}
