package experiments

import (
	"context"
	"fmt"
	"math"

	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// instruments are one worker's reusable measuring state; the histograms are
// large (60001 counters each), so a worker keeps them across points.
type instruments struct {
	gate, wait, sojourn metrics.Histogram
	rolling             *metrics.Rolling
	fairCounts          []float64
	releases            []float64  // release times, for the empirical arrival curve
	queue               *queueBufs // the queue model's (simulate_queue.go)
}

// simulate replays the arrivals through one gate into a fresh server and
// measures the point. The loop does no allocation besides growing series
// and rings, and checks ctx once per 2^20 arrivals.
func simulate(ctx context.Context, cfg *Config, a *workload.Arrivals, spec *limiter.Spec, params limiter.Params, in *instruments, pt *Point) error {
	srv := server.New(cfg.Server)
	weights := make([]float64, len(a.Clients))
	for i, c := range a.Clients {
		weights[i] = c.Weight
	}
	gate, err := limiter.New(spec, params, weights, srv)
	if err != nil {
		return err
	}
	in.gate.Reset()
	in.wait.Reset()
	in.sojourn.Reset()
	if in.rolling == nil {
		in.rolling = metrics.NewRolling(cfg.Metrics.RollingWindowMS)
	}
	in.rolling.Reset(cfg.Metrics.RollingWindowMS)

	durationMS := cfg.Workload.DurationMS
	serviceMS, deadlineMS := cfg.Server.ServiceMS, cfg.Server.DeadlineMS
	windows := int(metrics.WindowCount(durationMS, SeriesWindowMS))
	// Releases after the run extend the series. Bound them, so that a rate
	// too small to ever release or a chain's slow stage is an error, not a
	// runaway allocation: past the gate's known lag, a point may add its
	// share of MaxSeriesRows.
	npoints := 0
	for i := range cfg.Limiters {
		npoints += cfg.Limiters[i].Count()
	}
	horizonMS := durationMS + spec.LagMS([]limiter.Params{params}) + float64(MaxSeriesRows/max(npoints, 1))*SeriesWindowMS
	s := Series{
		Offered:     make([]int32, windows),
		Rejected:    make([]int32, windows),
		Released:    make([]int32, windows),
		InSystemMax: make([]int32, windows),
	}
	nc := len(a.Clients)
	clients := make([]ClientResult, nc)
	multi := nc > 1
	fairWindow := cfg.Metrics.FairnessWindowMS
	fairWindows := int(metrics.WindowCount(durationMS, fairWindow))
	var jain []float64
	if multi {
		if cap(in.fairCounts) < nc {
			in.fairCounts = make([]float64, nc)
		}
		in.fairCounts = in.fairCounts[:nc]
		clear(in.fairCounts)
		jain = make([]float64, 0, fairWindows)
	}
	fairK := 0

	var m Metrics
	lastRelease := math.Inf(-1)
	var serverSojournMax, gateMax, endToEndMax float64
	in.releases = in.releases[:0]
	keepReleases := len(a.T) <= MaxCurveArrivals
	if keepReleases && cap(in.releases) < len(a.T) {
		in.releases = make([]float64, 0, len(a.T)) // never copied while it grows
	}
	inSystemMax := 0
	for i, t := range a.T {
		if i&(1<<20-1) == 0 && i > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := a.Client[i]
		w := int(metrics.WindowIndex(t, SeriesWindowMS))
		s.Offered[w]++
		clients[c].Offered++
		release, ok := gate.Offer(t, c)
		if !ok {
			s.Rejected[w]++
			continue
		}
		if release < lastRelease {
			return fmt.Errorf("%s released at %g after %g: a gate must release in order", spec.Label(), release, lastRelease)
		}
		lastRelease = release
		if !(release < horizonMS) {
			return fmt.Errorf("%s released a request at %g ms, %g ms after the run ends: its series would pass the limit of %d rows (a rate or a stage too slow for the run)",
				spec.Label(), release, release-durationMS, MaxSeriesRows)
		}
		clients[c].Admitted++
		if multi {
			if k := int(metrics.WindowIndex(t, fairWindow)); k != fairK {
				for ; fairK < k; fairK++ {
					jain = append(jain, metrics.Jain(in.fairCounts))
					clear(in.fairCounts)
				}
			}
			in.fairCounts[c]++
		}
		svc := serviceMS
		if a.ServiceMS != nil {
			svc = a.ServiceMS[i]
		}
		start, finish := srv.ServeFor(release, svc)
		n := srv.Len()
		rw := int(metrics.WindowIndex(release, SeriesWindowMS))
		for rw >= len(s.Released) {
			s.Released = append(s.Released, 0)
			s.InSystemMax = append(s.InSystemMax, 0)
		}
		s.Released[rw]++
		if int32(n) > s.InSystemMax[rw] {
			s.InSystemMax[rw] = int32(n)
		}
		if n > inSystemMax {
			inSystemMax = n
		}
		in.rolling.Add(release)
		in.gate.Record(release - t)
		in.wait.Record(start - release)
		sojourn := max(svc, metrics.RoundMS(finish-t))
		in.sojourn.Record(sojourn)
		if sojourn <= deadlineMS {
			m.OnTime++
		} else {
			m.Late++
		}
		if d := finish - release; d > serverSojournMax {
			serverSojournMax = d
		}
		gateMax, endToEndMax = max(gateMax, release-t), max(endToEndMax, finish-t)
		if keepReleases {
			in.releases = append(in.releases, release)
		}
	}
	if multi {
		for ; fairK < fairWindows; fairK++ {
			jain = append(jain, metrics.Jain(in.fairCounts))
			clear(in.fairCounts)
		}
	}

	seconds := durationMS / 1000
	m.Arrivals = len(a.T)
	m.Admitted = in.gate.Count()
	m.Rejected = m.Arrivals - m.Admitted
	m.OfferedRPS = float64(m.Arrivals) / seconds
	m.AdmittedRPS = float64(m.Admitted) / seconds
	m.GoodputRPS = float64(m.OnTime) / seconds
	if m.Arrivals > 0 {
		m.RejectPct = 100.0 * float64(m.Rejected) / float64(m.Arrivals)
		m.ServedLatePct = 100.0 * float64(m.Late) / float64(m.Arrivals)
	}
	m.GateDelay = delays(&in.gate)
	m.ServerWait = delays(&in.wait)
	m.Sojourn = delays(&in.sojourn)
	peak := int32(0)
	for _, r := range s.Released {
		peak = max(peak, r)
	}
	m.DownstreamPeakRPS = float64(peak) * 1000 / SeriesWindowMS
	m.RollingMax = in.rolling.Max()
	m.UtilizationPct = math.Min(100, 100*float64(m.Admitted)*serviceMS/(durationMS*float64(cfg.Server.Workers))) // service_ms: the mean

	m.InSystemMax = inSystemMax
	m.ServerSojournMaxMS = serverSojournMax

	rates := make([]float64, nc)
	for i := range clients {
		clients[i].AdmittedRPS = float64(clients[i].Admitted) / seconds
		rates[i] = clients[i].AdmittedRPS
	}
	m.Jain = metrics.Jain(rates)
	if len(a.Groups) > 0 {
		m.GroupSharePct = make([]float64, len(a.Groups))
		for i, cl := range a.Clients {
			if g := cl.GroupIndex(); g >= 0 {
				m.GroupSharePct[g] += float64(clients[i].Admitted)
			}
		}
		for g := range m.GroupSharePct {
			if m.Admitted > 0 {
				m.GroupSharePct[g] = 100 * m.GroupSharePct[g] / float64(m.Admitted)
			}
		}
	}
	m.Recovery = measureRecovery(&cfg.Workload, &s)
	pt.Metrics = m
	pt.Bounds = pointBounds(cfg, spec, params, len(a.Clients), &m, gateMax, endToEndMax)
	if keepReleases {
		pt.OutputCurve = calculus.Empirical(in.releases, calculus.Grid(durationMS))
	}
	pt.Series = s
	if multi {
		pt.Clients = clients
		pt.JainSeries = jain
	}
	return nil
}

func delays(h *metrics.Histogram) Delays {
	return Delays{P50: h.Quantile(50), P99: h.Quantile(99), Max: h.Max()}
}
