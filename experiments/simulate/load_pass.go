package simulate

import (
	"context"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/workload"
)

// offeredLater is the offered series a load pass starts with: not nil, so
// the pass does not count its own; FinishLoad files the load's.
var offeredLater = []int32{}

// NewLoadPass starts point pt's forward pass over a load held in memory
// while the load is still being read (clients in ngroup groups, at most
// maxArrivals arrivals, about sizeHint): it is fed the
// arrivals as they come, in order (Feed), on the worker's instruments in,
// and measured by FinishLoad once all are in, with what Point measures
// over the whole load. Only a point Point runs by the forward pass at a
// fixed service time (not HoldsArrivals) runs this way.
func NewLoadPass(ctx context.Context, cfg *experiments.Config, pt *experiments.Point, clients []workload.Client, ngroup, maxArrivals, sizeHint int, in *Instruments, sw *Switches) (*ForwardPass, error) {
	pc := cfg.PointConfig(pt)
	return startForwardPass(ctx, pc, clients, ngroup, &cfg.Limiters[pt.LimiterIndex], pt.Params, in, pt, in.keepReleases(maxArrivals), sizeHint, sw, offeredLater)
}

// FinishLoad measures a load pass (NewLoadPass) fed every arrival of the
// load whose times are t, its offered series from share (NewLoadShare(t),
// counted once for the load's points; counted here when share is not t's),
// and its percentiles by the config's rule.
func (f *ForwardPass) FinishLoad(share *LoadShare, t []float64) error {
	offered := share.offered(t, f.cfg)
	if offered == nil {
		offered = NewLoadShare(t).offered(t, f.cfg)
	}
	f.s.Offered = offered
	return f.Finish()
}

// OfferedCounter counts the offered series of a load (the arrivals in
// time order, the windows of a point config of the load), whole (a
// LoadShare's count) or a chunk at a time as they are read: the reader of
// a load its points follow (sweep) counts it beside them, so that the
// points' FinishLoad does not wait for a count of the whole load.
type OfferedCounter struct {
	windowMS float64
	windows  int
	cur      metrics.WindowCursor
	offered  []int32
}

// NewOfferedCounter counts at the series windows of cfg, a point config
// of the load (Config.PointConfig).
func NewOfferedCounter(cfg *experiments.Config) *OfferedCounter {
	windowMS, windows := offeredWindows(cfg)
	return &OfferedCounter{windowMS: windowMS, windows: windows, cur: metrics.NewWindowCursor(windowMS), offered: make([]int32, windows)}
}

// Add counts the next arrival times t.
func (o *OfferedCounter) Add(t []float64) {
	for _, x := range t {
		o.offered[int(o.cur.Index(x))]++
	}
}

// File gives s, the share of the load o counted whole, o's series: the
// points at o's windows take it.
func (s *LoadShare) File(o *OfferedCounter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.file(o)
}

// file is File with s.mu held.
func (s *LoadShare) file(o *OfferedCounter) {
	s.series = append(s.series, sharedOffered{o.windowMS, o.windows, o.offered})
}

// offeredWindows are the offered series' windows of cfg, a point config
// of the load: their length and count.
func offeredWindows(cfg *experiments.Config) (windowMS float64, windows int) {
	windowMS = cfg.SeriesWindow()
	return windowMS, int(metrics.WindowCount(cfg.Workload.DurationMS, windowMS))
}
