package presets_test

import (
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// The numbers traefik-three-pods' description states: three pods of a
// limit of 10 admit 27 to 31 requests/s, one pod and the divided limit
// about 10.
func TestTraefikThreePodsPreset(t *testing.T) {
	res := runPreset(t, "traefik-three-pods")
	for _, c := range []struct {
		label         string
		lo, hi        float64 // admitted_rps
		ratio         float64 // effective_ratio, to 2 places
		overAdmission float64 // to 2 places
	}{
		{"one-pod", 9.5, 10.5, 1.01, 1.00},
		{"three-pods", 27, 31, 3.01, 2.82},
		{"three-pods-divided", 9.5, 10.5, 1.02, 1.09},
	} {
		m := point(t, res, c.label).Metrics
		r := m.Replicas
		if r == nil {
			t.Fatalf("%s: no replica measures", c.label)
		}
		if m.AdmittedRPS < c.lo || m.AdmittedRPS > c.hi || r.ConfiguredRPS != 10 || round2(r.EffectiveRatio) != c.ratio || round2(r.OverAdmission) != c.overAdmission {
			t.Errorf("%s: admitted %g requests/s against a configured %g (effective_ratio %.2f, over_admission %.2f); the description says %g to %g, 10, %.2f, %.2f",
				c.label, m.AdmittedRPS, r.ConfiguredRPS, r.EffectiveRatio, r.OverAdmission, c.lo, c.hi, c.ratio, c.overAdmission)
		}
	}
}

// The numbers hash-skew's description states: the busiest instance's
// share under each balancer and what the instances admit.
func TestHashSkewPreset(t *testing.T) {
	res := runPreset(t, "hash-skew")
	for _, c := range []struct {
		label    string
		busiest  float64 // busiest_share_pct, to 1 place
		admitted float64 // admitted_rps, to 1 place
	}{
		{"round-robin", 33.3, 61.9},
		{"random", 34.7, 61.9},
		{"least-inflight", 33.7, 61.9},
		{"hash", 48.3, 47.2},
	} {
		m := point(t, res, c.label).Metrics
		if m.Replicas == nil || round1(m.Replicas.BusiestSharePct) != c.busiest || round1(m.AdmittedRPS) != c.admitted {
			t.Errorf("%s: %+v admitted %g; the description says busiest share %g%%, admitted %g", c.label, m.Replicas, m.AdmittedRPS, c.busiest, c.admitted)
		}
	}
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// The numbers redis-outage's description states: what fail-open lets
// through and fail-closed refuses while the store is down.
func TestRedisOutagePreset(t *testing.T) {
	res := runPreset(t, "redis-outage")
	one := point(t, res, "one-gate").Metrics
	open, closed := point(t, res, "fail-open").Metrics, point(t, res, "fail-closed").Metrics
	if one.Admitted != 2008 || open.Admitted != 2515 || closed.Admitted != 1516 {
		t.Errorf("admitted: one gate %d, fail-open %d, fail-closed %d; the description says 2008, 2515, 1516", one.Admitted, open.Admitted, closed.Admitted)
	}
	if s := open.Replicas.Store; s == nil || s.DownAdmitted != 999 || s.DownRefused != 0 {
		t.Errorf("fail-open while down: %+v, the description says 999 admitted", s)
	}
	if s := closed.Replicas.Store; s == nil || s.DownAdmitted != 0 || s.DownRefused != 999 {
		t.Errorf("fail-closed while down: %+v, the description says 999 refused", s)
	}
	if open.RollingMax != 218 || closed.RollingMax != 109 || round2(open.Replicas.OverAdmission) != 1.98 || round2(closed.Replicas.OverAdmission) != 0.99 {
		t.Errorf("rolling max: fail-open %d (%.2f), fail-closed %d (%.2f); the description says 218 (1.98), 109 (0.99)",
			open.RollingMax, open.Replicas.OverAdmission, closed.RollingMax, closed.Replicas.OverAdmission)
	}
	if open.GateDelay.Max != 2 || closed.GateDelay.Max != 2 {
		t.Errorf("gate delay max: %d and %d ms, the description says the store's 2", open.GateDelay.Max, closed.GateDelay.Max)
	}
}

// The numbers gubernator-sync-wait's description states: GLOBAL's
// admissions and busiest second grow with sync_wait_ms, from one daemon's
// at 1 ms.
func TestGubernatorSyncWaitPreset(t *testing.T) {
	res := runPreset(t, "gubernator-sync-wait")
	one := point(t, res, "one-daemon").Metrics
	if round1(one.AdmittedRPS) != 100 || one.RollingMax != 100 {
		t.Errorf("one daemon: admitted %g, busiest second %d; the description says 100.0, 100", one.AdmittedRPS, one.RollingMax)
	}
	want := []struct {
		syncMS        float64
		admitted      float64 // admitted_rps, to 1 place
		rollingMax    int
		overAdmission float64 // to 2 places
	}{
		{1, 100.0, 101, 0.34}, {10, 100.2, 105, 0.35}, {50, 108.6, 115, 0.38},
		{100, 118.4, 140, 0.47}, {200, 150.7, 175, 0.58}, {500, 236.4, 249, 0.83},
	}
	last := 0.0
	for _, w := range want {
		var m *experiments.Metrics
		for i := range res.Points {
			if p := &res.Points[i]; p.Limiter == "global" && p.Params.Get(limiter.ParamSyncWait) == w.syncMS {
				m = &p.Metrics
			}
		}
		if m == nil || m.Replicas == nil {
			t.Fatalf("no global point at sync_wait_ms %g with replica measures", w.syncMS)
		}
		r := m.Replicas
		if round1(m.AdmittedRPS) != w.admitted || m.RollingMax != w.rollingMax || round2(r.OverAdmission) != w.overAdmission {
			t.Errorf("sync_wait_ms %g: admitted %g, busiest second %d, over_admission %.2f; the description says %g, %d, %.2f",
				w.syncMS, m.AdmittedRPS, m.RollingMax, r.OverAdmission, w.admitted, w.rollingMax, w.overAdmission)
		}
		if !(r.OverAdmission > last) {
			t.Errorf("sync_wait_ms %g: over_admission %.4f does not grow from %.4f", w.syncMS, r.OverAdmission, last)
		}
		last = r.OverAdmission
	}
	if local := point(t, res, "local").Metrics; round1(local.AdmittedRPS) != 297.3 || local.RollingMax != 300 {
		t.Errorf("local: admitted %g, busiest second %d; the description says 297.3, 300", local.AdmittedRPS, local.RollingMax)
	}
}
