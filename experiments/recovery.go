package experiments

import (
	"github.com/ratelab/ratelab/experiments/workload"
)

// Recovery after a flash crowd, measured on the 100 ms series windows.
//
// The crowd is the workload's first part with a Trigger (workload.Kind); it runs from its
// start_ms to its end, start_ms + duration_ms (ramps included). Two
// quantities describe the system over a trailing second, the 10 series
// windows k-9 .. k (the second ending at 100*(k+1) ms):
//
//   - the acceptance ratio: requests admitted / requests offered, both
//     counted by arrival window (1 when nothing was offered);
//   - the server queue: the mean over those windows of in_system_max, the
//     largest number of requests at the server seen at a release instant
//     in the window (0 in a window without releases).
//
// Their baselines are the same quantities over every window before the
// crowd, [0, start_ms): the acceptance ratio of all pre-crowd arrivals and
// the mean pre-crowd queue. The system has recovered at the end of the
// first trailing second that ends at or after the crowd's end and has an
// acceptance ratio of at least 95% of the baseline and a queue of at most
// 105% of the baseline (within 5%, on the side that matters: recovering
// means being no worse than before; doing better counts as recovered).
// RecoveryMS is the time from the crowd's end to the end of that second;
// 0 means the gate and server were already back when the crowd ended.
//
// There is no measurement (Metrics.Recovery is nil, and the recovery_ms
// column is an empty cell) when the workload has no flash crowd, when the
// crowd starts before 1000 ms (no full pre-crowd second to compare with),
// or when it ends at or after the end of the arrival window. When the
// system does not recover before the arrival window ends, Recovery is set
// and Recovery.RecoveryMS is nil (again an empty cell).
type Recovery struct {
	CrowdStartMS float64 `json:"crowd_start_ms"`
	CrowdEndMS   float64 `json:"crowd_end_ms"`
	// BaselineAcceptPct is the pre-crowd acceptance ratio, in percent.
	BaselineAcceptPct float64 `json:"baseline_accept_pct"`
	// BaselineQueue is the pre-crowd mean of in_system_max.
	BaselineQueue float64 `json:"baseline_queue"`
	// RecoveryMS is nil when the system did not recover within the run.
	RecoveryMS *float64 `json:"recovery_ms"`
	// Rule is RecoveryGoodput for the client model's measure (below); empty
	// for the acceptance-and-queue measure.
	Rule string `json:"rule,omitempty"`
	// BaselineGoodputRPS is the pre-trigger goodput (RecoveryGoodput).
	BaselineGoodputRPS float64 `json:"baseline_goodput_rps,omitempty"`
}

// RecoveryGoodput names the client model's recovery measure.
const RecoveryGoodput = "goodput"

// GoodputTolerance: recovered is within 10% of the pre-trigger goodput.
const GoodputTolerance = 0.10

// Recovery thresholds: within 5% of the pre-crowd values, over 1 s.
const (
	RecoveryTolerance = 0.05
	RecoveryWindows   = 10 // series windows in the trailing second
)

// AcceptRatio is admitted / offered over the series windows [from, to),
// counted by arrival window; 1 when nothing was offered.
func (s *Series) AcceptRatio(from, to int) float64 {
	var offered, rejected int64
	for k := from; k < to; k++ {
		offered += int64(At(s.Offered, k))
		rejected += int64(At(s.Rejected, k))
	}
	if offered == 0 {
		return 1
	}
	return float64(offered-rejected) / float64(offered)
}

// QueueMean is the mean of in_system_max over the series windows [from, to).
func (s *Series) QueueMean(from, to int) float64 {
	var sum int64
	for k := from; k < to; k++ {
		sum += int64(At(s.InSystemMax, k))
	}
	return float64(sum) / float64(to-from)
}

// TriggerInterval is the interval recovery is measured after: the config's
// trigger, else the workload's (Trigger).
func (c *Config) TriggerInterval() (startMS, endMS float64, ok bool) {
	if c.Trigger != nil {
		return c.Trigger.StartMS, c.Trigger.EndMS, true
	}
	return Trigger(&c.Workload)
}

// Trigger is the interval of the workload's first part that has one (a
// flash crowd): Recovery is measured after it. ok=false without one.
func Trigger(w *workload.Spec) (startMS, endMS float64, ok bool) {
	for i := range w.Parts {
		if k := w.Parts[i].Kind(); k != nil && k.Trigger != nil {
			startMS, endMS = k.Trigger(&w.Parts[i])
			return startMS, endMS, true
		}
	}
	return 0, 0, false
}
