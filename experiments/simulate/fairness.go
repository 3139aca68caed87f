package simulate

import "github.com/ratelab/ratelab/experiments/metrics"

// fairWindows measures Jain's index of the clients' admissions in each
// fairness window, for the forward pass, the queue model and the client
// model alike. A point with one client measures nothing (on is false).
type fairWindows struct {
	on      bool
	counts  []float64            // admissions per client in the current window (the worker's Instruments.fairCounts)
	window  metrics.WindowCursor // over fairness_window_ms
	windows int                  // windows in the run
	k       int                  // the current window
	jain    []float64
}

// start readies the windows for a point of nc clients over durationMS.
func (f *fairWindows) start(in *Instruments, nc int, windowMS, durationMS float64) {
	*f = fairWindows{on: nc > 1, window: metrics.NewWindowCursor(windowMS), windows: int(metrics.WindowCount(durationMS, windowMS))}
	if !f.on {
		return
	}
	if cap(in.fairCounts) < nc {
		in.fairCounts = make([]float64, nc)
	}
	in.fairCounts = in.fairCounts[:nc]
	clear(in.fairCounts)
	f.counts = in.fairCounts
	f.jain = make([]float64, 0, f.windows)
}

// admit counts an admission of client c that arrived at t (arrivals in
// time order).
func (f *fairWindows) admit(t float64, c int) {
	if k := int(f.window.Index(t)); k != f.k {
		for ; f.k < k; f.k++ {
			f.jain = append(f.jain, metrics.Jain(f.counts))
			clear(f.counts)
		}
	}
	f.counts[c]++
}

// finish closes the windows to the end of the run and returns the index
// per window.
func (f *fairWindows) finish() []float64 {
	for ; f.k < f.windows; f.k++ {
		f.jain = append(f.jain, metrics.Jain(f.counts))
		clear(f.counts)
	}
	return f.jain
}
