package simulate

import (
	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/workload"
)

// measureRecovery computes the recovery of one point from its series, or
// nil when the workload has no measurable flash crowd.
func measureRecovery(w *workload.Spec, s *experiments.Series, windowMS float64) *experiments.Recovery {
	start, end, ok := experiments.Trigger(w)
	if !ok {
		return nil
	}
	return recoveryAfter(w, s, start, end, windowMS)
}

// recovery is the point's recovery after the config's trigger interval
// (TriggerInterval), as measureRecovery measures it.
func recovery(c *experiments.Config, s *experiments.Series, windowMS float64) *experiments.Recovery {
	start, end, ok := c.TriggerInterval()
	if !ok {
		return nil
	}
	return recoveryAfter(&c.Workload, s, start, end, windowMS)
}

func recoveryAfter(w *workload.Spec, s *experiments.Series, start, end, windowMS float64) *experiments.Recovery {
	windows := int(metrics.WindowIndex(w.DurationMS, windowMS)) // whole arrival windows
	pre := int(metrics.WindowIndex(start, windowMS))            // whole windows before the crowd
	if pre < experiments.RecoveryWindows || end >= w.DurationMS {
		return nil
	}
	r := &experiments.Recovery{CrowdStartMS: start, CrowdEndMS: end}
	a0, q0 := s.AcceptRatio(0, pre), s.QueueMean(0, pre)
	r.BaselineAcceptPct = 100 * a0
	r.BaselineQueue = q0
	first := max(int(metrics.WindowCount(end, windowMS))-1, experiments.RecoveryWindows-1)
	for k := first; k < windows; k++ {
		from, to := k+1-experiments.RecoveryWindows, k+1
		if s.AcceptRatio(from, to) >= (1-experiments.RecoveryTolerance)*a0 && s.QueueMean(from, to) <= (1+experiments.RecoveryTolerance)*q0 {
			ms := max(0, float64(to)*windowMS-end)
			r.RecoveryMS = &ms
			break
		}
	}
	return r
}

// measureGoodputRecovery is the client model's recovery after the trigger
// (the config's trigger, else a flash crowd): the baseline is the mean
// goodput (requests that succeeded, by finish window) over the whole
// series windows before the trigger; the system has recovered at the end
// of the first trailing second (RecoveryWindows windows) that ends at or
// after the trigger's end with a goodput of at least 90% of the baseline
// (GoodputTolerance; doing better counts). RecoveryMS is from the
// trigger's end to the end of that second, nil when no such second ends
// inside the arrival window: it did not recover within the run (a
// metastable failure when the load is back to normal). nil without a
// trigger, one that starts before 1000 ms, or one that ends at or after
// the end of the arrival window.
func measureGoodputRecovery(c *experiments.Config, s *experiments.Series, windowMS float64) *experiments.Recovery {
	start, end, ok := c.TriggerInterval()
	w := &c.Workload
	if !ok {
		return nil
	}
	windows := int(metrics.WindowIndex(w.DurationMS, windowMS))
	pre := int(metrics.WindowIndex(start, windowMS))
	if pre < experiments.RecoveryWindows || end >= w.DurationMS {
		return nil
	}
	mean := func(from, to int) float64 {
		var sum int64
		for k := from; k < to; k++ {
			sum += int64(experiments.At(s.Goodput, k))
		}
		return float64(sum) / float64(to-from)
	}
	g0 := mean(0, pre)
	r := &experiments.Recovery{CrowdStartMS: start, CrowdEndMS: end, Rule: experiments.RecoveryGoodput, BaselineGoodputRPS: g0 * 1000 / windowMS}
	first := max(int(metrics.WindowCount(end, windowMS))-1, experiments.RecoveryWindows-1)
	for k := first; k < windows; k++ {
		from, to := k+1-experiments.RecoveryWindows, k+1
		if mean(from, to) >= (1-experiments.GoodputTolerance)*g0 {
			ms := max(0, float64(to)*windowMS-end)
			r.RecoveryMS = &ms
			break
		}
	}
	return r
}
