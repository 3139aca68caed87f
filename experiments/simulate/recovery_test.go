package simulate

import (
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/workload"
)

// crowdSpec is a 10 s workload with a flash crowd from start to start+dur.
func crowdSpec(start, dur float64) *workload.Spec {
	return &workload.Spec{DurationMS: 10_000, Parts: []workload.Part{
		{Type: workload.Constant, RateRPS: 10},
		{Type: workload.FlashCrowd, BaseRPS: 10, Multiplier: 5, StartMS: start, DurationMS: dur},
	}}
}

// flatSeries is 100 windows with 10 offered, none rejected and a queue of 2
// in every window; the caller then writes the crowd and its aftermath.
func flatSeries() *experiments.Series {
	s := &experiments.Series{Offered: make([]int32, 100), Rejected: make([]int32, 100), Released: make([]int32, 100), InSystemMax: make([]int32, 100)}
	for k := range 100 {
		s.Offered[k], s.Released[k], s.InSystemMax[k] = 10, 10, 2
	}
	return s
}

func TestRecoveryCountsFromTheCrowdsEnd(t *testing.T) {
	s := flatSeries()
	// Crowd over windows 30..49 ([3000, 5000)): half rejected, queue 20.
	for k := 30; k < 50; k++ {
		s.Offered[k], s.Rejected[k], s.InSystemMax[k] = 40, 20, 20
	}
	// Afterwards the queue drains: 10 in windows 50..54, then back to 2.
	for k := 50; k < 55; k++ {
		s.InSystemMax[k] = 10
	}
	r := measureRecovery(crowdSpec(3000, 2000), s, experiments.SeriesWindowMS)
	if r == nil || r.RecoveryMS == nil {
		t.Fatalf("recovery = %+v, want a measurement", r)
	}
	if r.BaselineAcceptPct != 100 || r.BaselineQueue != 2 || r.CrowdEndMS != 5000 {
		t.Errorf("baseline %g%%, queue %g, crowd end %g; want 100%%, 2, 5000", r.BaselineAcceptPct, r.BaselineQueue, r.CrowdEndMS)
	}
	// The trailing second must be free of crowd and drain windows: it is
	// windows 55..64, ending at 6500 ms, 1500 ms after the crowd's end.
	// (Windows 54..63 still hold one window of queue 10: mean 2.8 > 2.1.)
	if *r.RecoveryMS != 1500 {
		t.Errorf("recovery %g ms, want 1500", *r.RecoveryMS)
	}
}

func TestRecoveryToleratesFivePercent(t *testing.T) {
	s := flatSeries()
	for k := 30; k < 40; k++ {
		s.Rejected[k] = 5
	}
	// The trailing second ending at the crowd's end (windows 40..49)
	// accepts 95 of 100: exactly 95% of the baseline, so already recovered.
	for k := 45; k < 50; k++ {
		s.Rejected[k] = 1
	}
	r := measureRecovery(crowdSpec(3000, 2000), s, experiments.SeriesWindowMS)
	if r == nil || r.RecoveryMS == nil || *r.RecoveryMS != 0 {
		t.Fatalf("recovery = %+v, want 0 ms (within 5%%)", r)
	}
	// One more rejection in that second, and it is not: the first second
	// without it is windows 45..54, ending 500 ms after the crowd.
	s.Rejected[44] = 1
	r = measureRecovery(crowdSpec(3000, 2000), s, experiments.SeriesWindowMS)
	if r == nil || r.RecoveryMS == nil || *r.RecoveryMS != 500 {
		t.Fatalf("recovery = %+v, want 500 ms", r)
	}
}

func TestRecoveryNeverReached(t *testing.T) {
	s := flatSeries()
	for k := 30; k < 100; k++ {
		s.InSystemMax[k] = 50
	}
	r := measureRecovery(crowdSpec(3000, 2000), s, experiments.SeriesWindowMS)
	if r == nil {
		t.Fatal("no measurement, want one that did not recover")
	}
	if r.RecoveryMS != nil {
		t.Errorf("recovery %g ms, want none (the queue never drains)", *r.RecoveryMS)
	}
	p := &experiments.Point{Metrics: experiments.Metrics{Recovery: r}}
	if _, ok := experiments.ColumnByKey("recovery_ms").Value(p); ok {
		t.Error("recovery_ms column has a value, want an empty cell")
	}
}

func TestRecoveryNotMeasured(t *testing.T) {
	s := flatSeries()
	for _, c := range []struct {
		name string
		spec *workload.Spec
	}{
		{"no flash crowd", &workload.Spec{DurationMS: 10_000, Parts: []workload.Part{{Type: workload.Constant, RateRPS: 10}}}},
		{"crowd starts before a full second", crowdSpec(900, 2000)},
		{"crowd ends with the run", crowdSpec(3000, 7000)},
	} {
		if r := measureRecovery(c.spec, s, experiments.SeriesWindowMS); r != nil {
			t.Errorf("%s: recovery %+v, want none", c.name, r)
		}
	}
	if _, ok := experiments.ColumnByKey("recovery_ms").Value(&experiments.Point{}); ok {
		t.Error("recovery_ms column has a value without a crowd, want an empty cell")
	}
}
