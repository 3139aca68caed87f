package simulate

import (
	"sync"
	"sync/atomic"

	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/server"
)

// A split forward pass (Split) runs its step (forward) as three stages on
// three goroutines: Feed's caller decides (the gate and the server, which
// need their state in order), and two goroutines of its own measure the
// decisions, in order, one the releases (releaseTally: the series'
// releases and most in the system, the rolling count, the busiest 100 ms,
// the kept releases), the other everything else (the offered and rejected
// series, the clients' counts, the fairness windows, the three delay
// histograms, the fates' counts, the maxima). Each stage takes every
// decision in order and writes its own measures, so the point measures
// the same as forward does (TestSplitMeasuresTheSame); a single point of
// a stream then uses more than one core.
//
// The stages hand over batches of decisions through a ring of
// splitBatches buffers, made once per pass: nothing is allocated per
// batch.

// decision is what the gate and the server decide for one arrival, all
// its measures need: when it arrived (t) from which client (c), and,
// admitted, when it was released and started (it finishes service_ms
// later).
type decision struct {
	t, release, start float64
	c                 int32
	admitted          bool
}

// A batch of 16,384 decisions is 512 KB, the ring 4 MB a pass: at 10^9
// arrivals (the 10^9 row of docs/speed.md) 27.0 and 27.4 s against 29.4
// and 36.8 s for 4 batches of 4,096 (the hand-over's wake-ups, a quarter
// as many), 54 MB resident against 48.
const (
	splitBatch   = 16384 // decisions per batch
	splitBatches = 8     // batches in the ring
)

// stages are a split pass's measuring goroutines and the ring of batches
// they share with the deciding stage.
type stages struct {
	batches [splitBatches][]decision
	left    [splitBatches]atomic.Int32 // the measuring stages yet to take each batch
	full    [2]chan int                // the batches decided, for each measuring stage
	free    chan int                   // the batches every stage is done with
	decided int                        // arrivals decided
	lanes   *server.Lanes              // the server, as the deciding stage serves
	count   systemCount                // the requests in the system, as the releases' stage counts them
	// The releases' stage's scratch: a batch's releases, their finishes
	// and the most in the system so far in their windows.
	releases, finishes []float64
	inSystem           []int32
	wg                 sync.WaitGroup
	stopped            bool
}

// Split makes the pass measure on two goroutines of its own from now on
// (before the first Feed), while Feed's caller decides: the point then
// takes up to three cores, measuring the same. The deciding stage serves
// by server.Lanes (a FIFO server of fixed service); the releases' stage
// counts the requests in the system (systemCount). A pass run in the
// event loop (a gate with hooks), under a test's fate log or toy gate,
// with a gate that reads the server's occupancy, or on a server Lanes
// does not model, is not split; Split reports whether the pass is.
// Finish, or Stop for a pass given up, ends the goroutines.
func (f *ForwardPass) Split() bool {
	if f.loop != nil || f.done != nil || f.fate != nil || f.svc != nil || f.readsServer || f.split != nil || f.n > 0 {
		return f.split != nil
	}
	lanes, ok := server.NewLanes(f.cfg.Server)
	if !ok {
		return false
	}
	st := &stages{free: make(chan int, splitBatches), lanes: lanes, count: newSystemCount(f.windowMS),
		releases: make([]float64, splitBatch), finishes: make([]float64, splitBatch), inSystem: make([]int32, splitBatch)}
	for i := range st.batches {
		st.batches[i] = make([]decision, splitBatch)
		st.free <- i
	}
	for k := range st.full {
		st.full[k] = make(chan int, splitBatches)
	}
	measure := [2]func([]decision){func(d []decision) { f.measureReleases(st, d) }, f.measureDelays}
	st.wg.Add(2)
	for k := range st.full {
		go func() {
			defer st.wg.Done()
			for i := range st.full[k] {
				measure[k](st.batches[i])
				if st.left[i].Add(-1) == 0 {
					st.free <- i
				}
			}
		}()
	}
	f.split = st
	return true
}

// Stop ends a split pass's measuring goroutines once they have measured
// every batch decided (nothing for a pass not split); Finish calls it.
// It may be called more than once.
func (f *ForwardPass) Stop() {
	st := f.split
	if st == nil || st.stopped {
		return
	}
	st.stopped = true
	for k := range st.full {
		close(st.full[k])
	}
	st.wg.Wait()
}

// feed decides arrivals ts from clients cs a batch at a time and hands
// each batch to the measuring stages.
func (st *stages) feed(f *ForwardPass, ts []float64, cs []int32) error {
	cs = cs[:len(ts)]
	for lo := 0; lo < len(ts); lo += splitBatch {
		hi := min(lo+splitBatch, len(ts))
		i := <-st.free
		st.batches[i] = st.batches[i][:hi-lo]
		if err := f.decide(st, ts[lo:hi], cs[lo:hi], st.batches[i]); err != nil {
			st.free <- i
			return err
		}
		st.left[i].Store(int32(len(st.full)))
		for k := range st.full {
			st.full[k] <- i
		}
	}
	return nil
}

// decide offers arrivals ts from clients cs (of equal length) to the gate
// and hands the admitted to the server, in order, as forward does (by
// the stages' Lanes),
// writing each one's decision into d (as long as ts). A gate that
// releases out of order or past the horizon, or a cancelled ctx, stops it
// with an error.
func (f *ForwardPass) decide(st *stages, ts []float64, cs []int32, d []decision) error {
	cs, d = cs[:len(ts)], d[:len(ts)]
	gate, lanes, last := f.gate, st.lanes, f.lastRelease
	defer func() { f.lastRelease = last }()
	for i, t := range ts {
		if (st.decided+i)&(1<<20-1) == 0 && st.decided+i > 0 {
			if err := f.ctx.Err(); err != nil {
				return err
			}
		}
		c := cs[i]
		release, ok := gate.Offer(t, c)
		if !ok {
			d[i] = decision{t: t, c: c}
			continue
		}
		if release < last || !(release < f.horizonMS) {
			return releaseError(f.spec, release, last, f.durationMS)
		}
		last = release
		start, _ := lanes.Serve(release)
		d[i] = decision{t: t, release: release, start: start, c: c, admitted: true}
	}
	st.decided += len(ts)
	return nil
}

// measureReleases counts the releases of decisions d (releaseTally), as
// forward does: a split pass's first measuring stage. It gathers the
// batch's releases and finishes, counts the requests in the system
// (systemCount), then tallies the releases (releaseTally.addAll).
func (f *ForwardPass) measureReleases(st *stages, d []decision) {
	rs, fs := st.releases[:0], st.finishes[:0]
	for i := range d {
		if x := &d[i]; x.admitted {
			rs = append(rs, x.release)
			fs = append(fs, x.start+f.serviceMS) // as the server's
		}
	}
	ns := st.inSystem[:len(rs)]
	st.count.addAll(rs, fs, ns)
	f.rel.addAll(&f.s, f.in, rs, ns)
}

// systemCount counts the requests in the system after each release of a
// FIFO server of fixed service, from the releases and their finishes in
// release order (finishes then never decrease), as far as a release
// tally needs them: the most after a release so far in the release's
// series window. The count after a release is at most one more than after
// the one before (every request in the system then was in it before, but
// the new one), so past a window's first release, one comparison with the
// finish that many requests back tells whether the window's most grows;
// a window's first release counts its requests one by one. It keeps the
// finishes of the most requests ever in the system (as the server does).
type systemCount struct {
	fin    []float64 // finish k at fin[k&(len(fin)-1)], the last len(fin) of them
	k      int       // releases counted
	most   int       // the most after a release of the current window
	ever   int       // the most after any release
	window metrics.WindowCursor
	w      float64 // the current window
}

func newSystemCount(windowMS float64) systemCount {
	return systemCount{fin: make([]float64, 64), window: metrics.NewWindowCursor(windowMS), w: -1}
}

// addAll counts releases at releases of requests that finish at
// finishes (as long), in order, and writes into most (as long) the most
// requests in the system after a release of each one's window so far.
func (c *systemCount) addAll(releases, finishes []float64, most []int32) {
	finishes, most = finishes[:len(releases)], most[:len(releases)]
	k, m, ever, w, fin := c.k, c.most, c.ever, c.w, c.fin
	for i, release := range releases {
		if len(fin) < ever+2 { // the next count may look ever+1 requests back
			c.k = k
			c.grow()
			fin = c.fin
		}
		mask := len(fin) - 1
		fin[k&mask] = finishes[i]
		if x := c.window.Index(release); x != w {
			w, m = x, 0
		}
		for m <= k && fin[(k-m)&mask] > release {
			m++
		}
		k++
		ever = max(ever, m)
		most[i] = int32(m)
	}
	c.k, c.most, c.ever, c.w = k, m, ever, w
}

// grow doubles the ring of finishes.
func (c *systemCount) grow() {
	mask := len(c.fin) - 1
	next := make([]float64, 2*len(c.fin))
	for i := max(c.k-len(c.fin), 0); i < c.k; i++ {
		next[i&(len(next)-1)] = c.fin[i&mask]
	}
	c.fin = next
}

// measureDelays measures everything else of decisions d, as forward does:
// a split pass's second measuring stage. It counts the arrivals measured.
// The counts and maxima of the batch are kept in locals (registers) and
// written once at its end.
func (f *ForwardPass) measureDelays(d []decision) {
	in, s := f.in, &f.s
	var admitted, onTime int
	var gate, wait, sojourn metrics.Run // as forward's
	serverSojournMax, gateMax, endToEndMax := f.serverSojournMax, f.gateMax, f.endToEndMax
	for i := range d {
		x := &d[i]
		t, c := x.t, x.c
		if f.countOffered {
			s.Offered[int(f.arrivalWindow.Index(t))]++
		}
		f.clients[c].Offered++
		if !x.admitted {
			s.Rejected[int(f.arrivalWindow.Index(t))]++
			continue
		}
		release, start := x.release, x.start
		finish := start + f.serviceMS // as the server's
		f.clients[c].Admitted++
		if f.fair.on {
			f.fair.admit(t, int(c))
		}
		admitted++
		gate = gate.Add(&in.gate, metrics.Bucket(release-t))
		wait = wait.Add(&in.wait, metrics.Bucket(start-release))
		soj := max(f.serviceMS, metrics.RoundMS(finish-t)) // RoundMS, as forward
		sojourn = sojourn.Add(&in.sojourn, metrics.Bucket(soj))
		if soj <= f.deadlineMS {
			onTime++
		}
		dm := finish - release
		serverSojournMax = max(serverSojournMax, dm)
		if dm > f.clients[c].SojournMaxMS {
			f.clients[c].SojournMaxMS = dm
		}
		gateMax, endToEndMax = max(gateMax, release-t), max(endToEndMax, finish-t)
	}
	gate.End(&in.gate)
	wait.End(&in.wait)
	sojourn.End(&in.sojourn)
	f.m.OnTime += onTime
	f.m.Late += admitted - onTime
	f.serverSojournMax, f.gateMax, f.endToEndMax = serverSojournMax, gateMax, endToEndMax
	f.n += len(d)
}
