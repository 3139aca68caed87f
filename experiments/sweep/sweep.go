// Package sweep runs a config's sweep: every point of the config
// (experiments.Config.Runs) over its generated load, held in memory or
// streamed in shared passes, in parallel over workers with the same bytes
// at any worker count, into an experiments.Result: partial when cancelled,
// with replications' means and intervals, and the digests of the trace
// files it read.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/simulate"
	"github.com/ratelab/ratelab/experiments/workload"
)

// Progress is told how many points of total are done; calls are serialized
// and done never decreases.
type Progress func(done, total int)

// Reading is told, while a streamed pass runs (a load too large to hold,
// replayed a batch at a time to points that all run at once), the points
// done of total (as Progress counts them, which it may not have said yet),
// how many points the pass runs and how far through its load it has read:
// the time of the latest arrival read over the load's duration_ms, from 0
// to 1 (the points take the batches a few behind it). Its calls are
// serialized with Progress's; a pass that ends is then counted by Progress.
type Reading func(done, total, points int, read float64)

// Finished is told each point as it is done, by its place k in res.Points:
// res is the result being filled (its Config and Points are set, nothing
// else yet) and res.Points[k]'s measures are final. Calls are serialized
// with Progress's, in the order the points finish (about their order in
// res.Points). A consumer may read res.Points[k] from another goroutine
// once told (lab run writes series.csv while the sweep runs,
// output.SeriesAhead).
type Finished func(res *experiments.Result, k int)

// Options tune how a sweep runs; they never change the files output
// writes (NoCurves leaves the charts' curves out of the Result).
type Options struct {
	// Workers is how many points run at once (default GOMAXPROCS).
	Workers  int
	Progress Progress
	Reading  Reading
	// Finished, when set, is told each point as it is done (a sweep
	// without replications; with them the result's points are made at the
	// end, from the runs, and it is told nothing).
	Finished Finished
	// Traces opens the trace files the workload names (a trace part's
	// file); nil when the run reads none.
	Traces workload.TraceOpener
	// Spill, when not nil, keeps the rows of each trace file the run reads:
	// the text is decompressed and parsed once, every pass after the first
	// reads the spill (workload.SpilledTraces; bounded by the work budget
	// over the run's points). It never changes the output.
	Spill workload.Spill
	// Points, when not nil, runs only the points of these indexes (into
	// Config.Points, increasing): one shard of a sweep run across machines.
	// The result holds those points alone, each with the same numbers as in
	// the whole sweep.
	Points []int
	// MaxDecisions is the run's work budget, arrivals × points (0 or more
	// than MaxDecisions: MaxDecisions); the web lab runs with MaxWork.
	MaxDecisions int64
	// NoCurves skips the empirical arrival curves (Result.ArrivalCurves
	// and each point's OutputCurve: a pass over the load's arrivals and
	// over each point's releases per window length), which only the web's
	// charts draw; every other measure, and every file output writes, is
	// the same. lab run, which writes the files alone, sets it.
	NoCurves bool
	// Simulate holds a test's switches of the points' simulation
	// (Switches: another model, a toy gate), which must measure the same;
	// the zero value runs as the engine does.
	Simulate simulate.Switches

	// test holds a test's switches of the sweep (export_test.go); the
	// zero value runs as the engine does.
	test testSwitches
}

// testSwitches are a test's settings of how a sweep holds its arrivals:
// none changes its output (the tests that set them check it), each makes
// another path run it.
type testSwitches struct {
	// How a sweep holds its arrivals (streamCacheArrivals and the others,
	// their defaults): set, a load of more than streamCache arrivals
	// streams (0: every load whose points run the forward pass).
	streamCacheSet bool
	streamCache    int
	streamBatch    int  // arrivals per batch of a stream (0: the default)
	maxLivePoints  int  // points sharing a pass over a stream (0: the default)
	noSplit        bool // no point's pass is split, whatever the spare workers
	// How a load held in memory is read: before its points run (noFollow),
	// or while they follow it (the default), in chunks of followChunk
	// arrivals (0: the default), and followed even when it is expected to
	// hold more arrivals than it may (followAny: it then streams).
	noFollow    bool
	followChunk int
	followAny   bool
}

// chunk is how many arrivals the producer of a growing load reads at a
// time.
func (s *testSwitches) chunk() int {
	if s.followChunk > 0 {
		return s.followChunk
	}
	return followChunk
}

// follows reports whether the points of a load of about expected arrivals
// (at most limit held in memory, not streamed) follow it as it is read
// (growing): when they all run the forward pass at a fixed service time
// (not queue) and need nothing of the load but its arrivals (no classes, no
// service column), and it is expected to fit (else, or when nothing says
// how long it is, it is read first, as before, and streams when it does
// not: points that followed a load past the limit would have done their
// work for nothing).
func (s *testSwitches) follows(cfg *experiments.Config, queue bool, limit int, expected float64) bool {
	if s.noFollow || queue || len(cfg.Classes) > 0 || cfg.UsesEmpirical() || limit > experiments.MaxCurveArrivals {
		return false
	}
	return s.followAny || expected > 0 && expected+expected/64+1024 <= float64(limit)
}

// cacheArrivals is how many arrivals a load may have to be held in memory.
func (s *testSwitches) cacheArrivals() int {
	if s.streamCacheSet {
		return s.streamCache
	}
	return streamCacheArrivals
}

// batch is how many arrivals a batch of a stream holds.
func (s *testSwitches) batch() int {
	if s.streamBatch > 0 {
		return s.streamBatch
	}
	return streamBatch
}

// livePoints is how many points share a pass over a stream.
func (s *testSwitches) livePoints() int {
	if s.maxLivePoints > 0 {
		return s.maxLivePoints
	}
	return maxLivePoints
}

// Run streams each load's arrivals once through every point of the sweep,
// in parallel; the result (and every byte written from it) is the same for
// any number of workers. cfg must be valid (DecodeConfig or Validate).
//
// With Options.Traces, every trace it reads to the end is hashed: the
// result's Inputs name them with their digests, and a trace whose text
// changes between two reads of one sweep fails it.
func Run(ctx context.Context, cfg *experiments.Config, opt Options) (*experiments.Result, error) {
	var digests *traceDigests
	if opt.Traces != nil {
		digests = newTraceDigests(opt.Traces)
		opt.Traces = digests.opener
		if opt.Spill != nil {
			opt.Traces = workload.NewSpilledTraces(opt.Traces, opt.Spill, spillRows(cfg, opt)).Open
		}
	}
	cfg, err := cfg.WithTraceFileColumn(opt.Traces)
	if err != nil {
		return nil, err
	}
	res, err := runGens(ctx, cfg, func(g int) (*workload.Stream, error) {
		_, w, seed := cfg.GeneratedLoad(g)
		return workload.OpenWith(&w, seed, opt.Traces)
	}, opt)
	if digests != nil && res != nil {
		inputs, derr := digests.inputs()
		if derr != nil {
			return nil, derr
		}
		res.Inputs = inputs
	}
	return res, err
}

// spillRows bounds a trace's spill by the run's work budget: no more
// arrivals than the budget allows its points (at least one point).
func spillRows(cfg *experiments.Config, opt Options) int64 {
	budget := int64(experiments.MaxDecisions)
	if opt.MaxDecisions > 0 {
		budget = min(opt.MaxDecisions, budget)
	}
	points := len(cfg.Runs())
	if opt.Points != nil {
		points = len(opt.Points) * cfg.Replicas()
	}
	return budget / int64(max(points, 1))
}

// OpenLoad opens the arrival stream of load i (0 without loads): the
// config's generators (workload.Open), or a trace read from disk
// (workload.NewStream over a reader's Run).
type OpenLoad func(load int) (*workload.Stream, error)

// How a sweep holds its arrivals. A load of at most streamCacheArrivals
// arrivals is held in memory and every point replays it whole, each worker
// a point at a time (the empirical arrival curves need it all). A longer
// one streams: its points share one pass over the stream, fed batches of
// streamBatch arrivals, so memory grows with clients, points and windows,
// not arrivals; at most maxLivePoints points share a pass (each holds its
// histograms), a sweep of more opens the stream again for each further
// pass. The queue model, and a server with a service distribution (the
// requests' service times are drawn per load), hold the load in memory (at
// most MaxArrivals). Options' test switches change the three (for tests).
const (
	streamCacheArrivals = experiments.MaxCurveArrivals
	streamBatch         = 1 << 16
	maxLivePoints       = 128
)

// RunArrivals runs the sweep over an arrival list already generated (a
// config with one load).
func RunArrivals(ctx context.Context, cfg *experiments.Config, arrivals *workload.Arrivals, opt Options) (*experiments.Result, error) {
	if n := cfg.GeneratedLoads(); n != 1 {
		return nil, fmt.Errorf("the config has %d loads (loads, swept workload fields, seeds, replications): run it with Run", n)
	}
	res, points, budget, err := startResult(cfg, opt)
	if err != nil {
		return nil, err
	}
	if d := float64(arrivals.Len()) * float64(len(points)); d > budget {
		return nil, budgetError(d, budget)
	}
	res.Arrivals, res.Clients, res.Groups = arrivals.Len(), arrivals.Clients, arrivals.Groups
	if !opt.NoCurves {
		res.ArrivalCurves = arrivalCurves(cfg, arrivals.T)
	}
	pr := newProgress(opt, res)
	pts := make([]*experiments.Point, len(points))
	for i := range points {
		pts[i] = &points[i]
	}
	if err := runMemory(ctx, cfg, arrivals, nil, pts, opt, pr); err != nil {
		return partialResult(ctx, res, pr, err)
	}
	aggregate(res)
	return res, nil
}

// RunStreams runs the sweep over the arrival streams open opens, one per
// load of the config: each is read once (once per maxLivePoints points of
// its load). A config whose swept workload fields, seeds or replications
// multiply its loads opens load i for each of its generated loads (the
// same stream each time: open them with Run to vary them).
func RunStreams(ctx context.Context, cfg *experiments.Config, open OpenLoad, opt Options) (*experiments.Result, error) {
	return runGens(ctx, cfg, func(g int) (*workload.Stream, error) {
		load, _, _ := cfg.GeneratedLoad(g)
		return open(load)
	}, opt)
}

// runGens runs the sweep over the arrival streams of its generated loads
// (Config.GeneratedLoad), open(g) opening load g.
func runGens(ctx context.Context, cfg *experiments.Config, open OpenLoad, opt Options) (*experiments.Result, error) {
	res, points, budget, err := startResult(cfg, opt)
	if err != nil {
		return nil, err
	}
	if d := cfg.ExpectedArrivals() * float64(len(points)); d > budget {
		return nil, budgetError(d, budget)
	}
	loadErr := func(g int, err error) error {
		if len(cfg.Loads) > 0 {
			load, _, _ := cfg.GeneratedLoad(g)
			return fmt.Errorf("loads[%d]: %w", load, err)
		}
		return err
	}
	pr := newProgress(opt, res)
	decisions := 0.0
	perLoad := cfg.GeneratedLoads() / cfg.LoadCount()
	gens := make([]int, len(points))
	for i := range points {
		gens[i] = cfg.GeneratedLoadOf(&points[i])
	}
	for lo := range cfg.GeneratedLoads() {
		var pts []*experiments.Point
		queue := false
		for i := range points {
			if pt := &points[i]; gens[i] == lo {
				pts = append(pts, pt)
				queue = queue || simulate.HoldsArrivals(cfg, pt, &opt.Simulate)
			}
		}
		st, err := open(lo)
		if err != nil {
			return nil, loadErr(lo, err)
		}
		if lo == 0 {
			res.Clients, res.Groups = st.Clients, st.Groups
		}
		limit := opt.test.cacheArrivals()
		if queue {
			limit = experiments.MaxArrivals
		}
		_, w, seed := cfg.GeneratedLoad(lo)
		expected := max(w.Expected(), float64(st.AtLeast())) // a trace file's length, known from its first read
		readLimit := limit
		if expected > float64(limit) {
			readLimit, expected = 0, 0 // it streams: read one batch ahead, not limit arrivals
		}
		var (
			t        []float64
			c        []int32
			more     bool
			followed bool // read while its points ran
			n        int
		)
		if (readLimit > 0 || opt.test.followAny) && opt.test.follows(cfg, queue, limit, expected) {
			var count *simulate.OfferedCounter
			if len(pts) > 0 {
				count = simulate.NewOfferedCounter(cfg.PointConfig(pts[0]))
			}
			g := newGrowing(st, limit, expected, opt.test.chunk(), count)
			curves := make(chan []int, 1)
			go func() {
				g.read(ctx, func(n int) error {
					if d := decisions + float64(n)*float64(len(pts)); d > budget {
						return budgetError(d, budget)
					}
					return nil
				})
				if opt.NoCurves || g.stop != nil {
					curves <- nil
				} else {
					curves <- offeredCurve(cfg, lo, w.DurationMS, g.t)
				}
			}()
			err := runMemory(ctx, cfg, nil, g, pts, opt, pr)
			curve := <-curves // g is done: read it
			switch {
			case g.readErr != nil:
				return nil, loadErr(lo, g.readErr)
			case g.more:
				t, c, more = g.t, g.c, true
			case g.budgetErr != nil:
				return nil, g.budgetErr
			default:
				followed, n = true, g.n
				if lo == 0 {
					res.Arrivals = n
				}
				fileCurve(cfg, res, lo, curve)
				if err != nil {
					return partialResult(ctx, res, pr, err)
				}
			}
		} else {
			var err error
			if t, c, more, err = readUpTo(st, readLimit, expected, opt.test.batch()); err != nil {
				return nil, loadErr(lo, err)
			}
		}
		switch {
		case followed:
		case more && queue:
			return nil, loadErr(lo, fmt.Errorf("workload: more than %d arrivals; the limit is %d for points that run the queue model, the client model or a service distribution (they hold the arrivals in memory)", limit, experiments.MaxArrivals))
		case more:
			count, err := runStream(ctx, cfg, open, lo, w.DurationMS, st, t, c, pts, opt, budget-decisions, pr)
			if err != nil {
				return partialResult(ctx, res, pr, loadErr(lo, err))
			}
			n = int(count)
		default:
			a := &workload.Arrivals{T: t, Client: c, Clients: st.Clients, Groups: st.Groups, ClientPart: st.ClientPart}
			if a.GivenServiceMS, err = givenService(cfg, w, seed, a.Len(), opt.Traces); err != nil {
				return nil, loadErr(lo, err)
			}
			n = a.Len()
			if d := decisions + float64(n)*float64(len(pts)); d > budget {
				return nil, budgetError(d, budget)
			}
			// The arrival curves are computed beside the points (a worker
			// less busy at the end of the load takes them), not before.
			curves := make(chan []int, 1)
			if opt.NoCurves {
				curves <- nil
			} else {
				go func() { curves <- offeredCurve(cfg, lo, w.DurationMS, t) }()
			}
			if lo == 0 {
				res.Arrivals = n
			}
			err := runMemory(ctx, cfg, a, nil, pts, opt, pr)
			fileCurve(cfg, res, lo, <-curves)
			if err != nil {
				return partialResult(ctx, res, pr, err)
			}
		}
		decisions += float64(n) * float64(len(pts))
		if lo == 0 {
			res.Arrivals = n
		}
		if len(cfg.Loads) > 0 && lo%perLoad == 0 {
			res.LoadArrivals = append(res.LoadArrivals, n)
		}
	}
	aggregate(res)
	return res, nil
}

// startResult is the result of the sweep's points (all, or opt.Points),
// before they run, and the run's work budget.
func startResult(cfg *experiments.Config, opt Options) (*experiments.Result, []experiments.Point, float64, error) {
	points := cfg.Runs()
	if opt.Points != nil {
		sel, err := selectPoints(cfg.Points(), opt.Points)
		if err != nil {
			return nil, nil, 0, err
		}
		keep := make(map[int]bool, len(sel))
		for _, p := range sel {
			keep[p.Index] = true
		}
		points = slices.DeleteFunc(points, func(p experiments.Point) bool { return !keep[p.Index] }) // a point's replications with it
	}
	budget := float64(experiments.MaxDecisions)
	if opt.MaxDecisions > 0 {
		budget = float64(min(opt.MaxDecisions, experiments.MaxDecisions))
	}
	return &experiments.Result{Config: cfg, Points: points}, points, budget, nil
}

func budgetError(d, budget float64) error {
	return fmt.Errorf("the sweep takes about %.0f decisions (arrivals × points); this run's budget is %.0f: sweep fewer values or a shorter workload", d, budget)
}

// arrivalCurves is the empirical arrival curve of the offered traffic, nil
// above MaxCurveArrivals.
func arrivalCurves(cfg *experiments.Config, t []float64) *experiments.ArrivalCurves {
	if len(t) > experiments.MaxCurveArrivals {
		return nil
	}
	grid := calculus.Grid(cfg.Workload.DurationMS)
	return &experiments.ArrivalCurves{GridMS: grid, Offered: calculus.Empirical(t, grid)}
}

// offeredCurve is the empirical arrival curve of generated load lo's
// arrivals t: load 0's on the run's grid, another load's on its own (kept
// only when the run has several loads); nil above MaxCurveArrivals.
func offeredCurve(cfg *experiments.Config, lo int, durationMS float64, t []float64) []int {
	switch {
	case len(t) > experiments.MaxCurveArrivals:
		return nil
	case lo == 0:
		return calculus.Empirical(t, calculus.Grid(cfg.Workload.DurationMS))
	case cfg.GeneratedLoads() < 2:
		return nil
	}
	return calculus.Empirical(t, calculus.Grid(durationMS))
}

// fileCurve files load lo's offered curve: the run's
// (ArrivalCurves.Offered) for load 0, and with several generated loads
// each load's own in ArrivalCurves.Loads, so a point's chart draws what
// its own load offered. A load streamed (more than MaxCurveArrivals), or
// any load when load 0 was streamed, has none.
func fileCurve(cfg *experiments.Config, res *experiments.Result, lo int, curve []int) {
	if lo == 0 && curve != nil {
		res.ArrivalCurves = &experiments.ArrivalCurves{GridMS: calculus.Grid(cfg.Workload.DurationMS), Offered: curve}
	}
	n := cfg.GeneratedLoads()
	if n < 2 || res.ArrivalCurves == nil || curve == nil {
		return
	}
	ac := res.ArrivalCurves
	if ac.Loads == nil {
		ac.Loads = make([][]int, n)
	}
	ac.Loads[lo] = curve
}

// readUpTo reads a stream into memory until it ends or holds more than
// limit arrivals (more), sized from the expected count.
func readUpTo(st *workload.Stream, limit int, expected float64, batch int) (t []float64, c []int32, more bool, err error) {
	size := batch
	if expected > 0 {
		size = int(min(expected+expected/64+1024, float64(limit+1)))
	}
	t, c = make([]float64, 0, size), make([]int32, 0, size)
	for {
		if len(t) == cap(t) {
			t, c = slices.Grow(t, max(len(t)/2, batch)), slices.Grow(c, max(len(t)/2, batch))
		}
		free := min(cap(t), cap(c)) - len(t)
		k, err := st.Read(t[len(t):len(t)+free], c[len(c):len(c)+free])
		t, c = t[:len(t)+k], c[:len(c)+k]
		if err != nil {
			return nil, nil, false, err
		}
		if len(t) > limit {
			return t, c, true, nil
		}
		if k < free {
			return t, c, false, nil
		}
	}
}

// progress counts finished points for Options.Progress and remembers
// which they are (for a partial result).
type progress struct {
	mu       sync.Mutex
	done     int
	total    int
	f        Progress
	reading  Reading
	finished map[*experiments.Point]bool
	res      *experiments.Result
	told     Finished
	index    map[*experiments.Point]int // each point's place in res.Points, with told
}

func newProgress(opt Options, res *experiments.Result) *progress {
	p := &progress{f: opt.Progress, reading: opt.Reading, total: len(res.Points), finished: map[*experiments.Point]bool{}, res: res}
	if opt.Finished != nil && res.Config.Replicas() <= 1 {
		p.told, p.index = opt.Finished, make(map[*experiments.Point]int, len(res.Points))
		for k := range res.Points {
			p.index[&res.Points[k]] = k
		}
	}
	return p
}

// read tells Options.Reading how far a streamed pass of points has read.
func (p *progress) read(points int, read float64) {
	if p.reading == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reading(p.done, p.total, points, read)
}

// finish records finished points.
func (p *progress) finish(pts ...*experiments.Point) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += len(pts)
	for _, pt := range pts {
		p.finished[pt] = true
		if p.told != nil {
			p.told(p.res, p.index[pt])
		}
	}
	if p.f != nil {
		p.f(p.done, p.total)
	}
}

// partialResult is what a sweep ended by its context (cancelled, or its
// deadline passed) keeps: the longest run of finished points from the
// first, in sweep order, so a partial result is the first k points of the
// sweep with their numbers unchanged (points that finished after the
// first unfinished one, at most a worker's share, are dropped). With no
// point finished, or an error of the sweep's own, it is nil and err.
func partialResult(ctx context.Context, res *experiments.Result, pr *progress, err error) (*experiments.Result, error) {
	if err == nil || ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return nil, err
	}
	pr.mu.Lock()
	k := 0
	for k < len(res.Points) && pr.finished[&res.Points[k]] {
		k++
	}
	pr.mu.Unlock()
	reps := res.Config.Replicas()
	k -= k % reps // a replicated point is done when all its runs are
	if k == 0 {
		return nil, err
	}
	res.Partial = &experiments.Partial{PointsDone: k / reps, PointsTotal: len(res.Points) / reps}
	res.Points = res.Points[:k:k]
	// The arrivals of loads whose pass had not ended: from their points.
	if res.Arrivals == 0 {
		res.Arrivals = res.Points[0].Metrics.Arrivals
	}
	if len(res.Config.Loads) > 0 && len(res.LoadArrivals) < len(res.Config.Loads) {
		for lo := len(res.LoadArrivals); lo < len(res.Config.Loads); lo++ {
			n := 0
			for i := range res.Points {
				if res.Points[i].Load == lo {
					n = res.Points[i].Metrics.Arrivals
					break
				}
			}
			res.LoadArrivals = append(res.LoadArrivals, n)
		}
	}
	aggregate(res)
	return res, err
}

// runMemory runs points over a load held in memory, each worker a point at
// a time over the whole list: a, read before, or (a nil) g while it is
// read, the points that start before it ends following it. With g, it
// returns g's stop when the load stops its points.
func runMemory(ctx context.Context, cfg *experiments.Config, a *workload.Arrivals, g *growing, points []*experiments.Point, opt Options, pr *progress) error {
	var (
		classes []uint8
		served  []*workload.Arrivals
		share   *simulate.LoadShare
	)
	if g == nil {
		classes = simulate.DrawClasses(cfg, a.Len())
		served = simulate.ServiceArrivals(cfg, a, points)
		share = simulate.NewLoadShare(a.T)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(points))

	var (
		next     atomic.Int64
		mu       sync.Mutex
		firstErr error
		stopped  error
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := new(simulate.Instruments)
			in.ShareLoad(share)
			if opt.NoCurves {
				in.NoCurves()
			}
			for {
				i := int(next.Add(1) - 1)
				if i >= len(points) || ctx.Err() != nil {
					return
				}
				pt := points[i]
				var stop, err error
				switch {
				case g == nil:
					err = simulate.Point(ctx, cfg, served[i], classes, in, pt, &opt.Simulate)
				default:
					done, s := g.ended()
					switch {
					case !done:
						stop, err = g.follow(ctx, cfg, pt, in, &opt.Simulate)
					case s != nil:
						stop = s
					default:
						in.ShareLoad(g.share)
						err = simulate.Point(ctx, cfg, g.whole, nil, in, pt, &opt.Simulate) // no classes, the service fixed (follows)
					}
				}
				if stop != nil {
					mu.Lock()
					stopped = stop
					mu.Unlock()
					cancel()
					return
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = pointError(pt, err)
					}
					mu.Unlock()
					cancel()
					return
				}
				pr.finish(pt)
			}
		}()
	}
	wg.Wait()
	if stopped != nil {
		return stopped
	}
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

func pointError(pt *experiments.Point, err error) error {
	return fmt.Errorf("point %d (%s %s): %w", pt.Index, pt.Limiter, limiter.FormatParams(pt.Type, pt.Params), err)
}

// runStream runs the forward pass of points over a stream whose first
// arrivals (t, c) were read already: the points share each batch of the
// stream, the workers feeding them a point and a batch at a time, while a
// producer reads the next batch. Points beyond maxLivePoints take further
// passes, each over the stream opened again. It returns the arrivals.
func runStream(ctx context.Context, cfg *experiments.Config, open OpenLoad, lo int, durationMS float64, st *workload.Stream, t []float64, c []int32, points []*experiments.Point, opt Options, budget float64, pr *progress) (int64, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var count int64
	livePoints := opt.test.livePoints()
	for from := 0; from < len(points); from += livePoints {
		live := points[from:min(from+livePoints, len(points))]
		if from > 0 {
			var err error
			if st, err = open(lo); err != nil {
				return 0, err
			}
			t, c = nil, nil
		}
		n, err := streamPass(ctx, cfg, st, t, c, live, workers, &opt.test, &opt.Simulate, budget, func(read float64) {
			pr.read(len(live), min(read/durationMS, 1))
		})
		if err != nil {
			return 0, err
		}
		budget -= float64(n) * float64(len(live))
		count = n
		pr.finish(live...)
	}
	return count, nil
}

// streamRing is how many batches a pass holds: the producer reads ahead
// while the slowest point is at most this many batches behind it.
const streamRing = 8

// streamPass is one pass of live points over a stream, on at most workers
// goroutines besides its producer. A producer reads
// batches into a ring while the workers feed them to the points, each
// worker taking, batch by batch, the idle point furthest behind: no
// barrier between batches, so a worker waits only when every point it
// could run is at the producer's batch or at the ring's end. Each point
// still takes every batch in order, so its numbers are the same for any
// number of workers; of several errors the pass returns the one of the
// earliest batch (then the earliest point), whatever the timing. With
// fewer points than workers, each point's pass is split
// (simulate.ForwardPass.Split): its measures take the spare cores.
func streamPass(ctx context.Context, cfg *experiments.Config, st *workload.Stream, headT []float64, headC []int32, live []*experiments.Point, workers int, sw *testSwitches, sim *simulate.Switches, budget float64, reading func(readMS float64)) (int64, error) {
	runs := make([]*simulate.ForwardPass, len(live))
	for k, pt := range live {
		f, err := simulate.NewForwardPass(ctx, cfg, pt, st.Clients, len(st.Groups), sim)
		if err != nil {
			return 0, pointError(pt, err)
		}
		runs[k] = f
		defer f.Stop()
	}
	if workers > len(live) && !sw.noSplit {
		for _, f := range runs {
			f.Split()
		}
	}
	workers = min(workers, len(live))
	p := &pass{
		live:   live,
		cursor: make([]int, len(runs)),
		busy:   make([]bool, len(runs)),
		failed: make([]bool, len(runs)),
		errAt:  math.MaxInt,
	}
	p.ready.L, p.room.L = &p.mu, &p.mu
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.cancelled = true
		p.wake()
		p.mu.Unlock()
	})
	defer stop()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.produce(st, headT, headC, sw.batch(), float64(len(live)), budget, reading)
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.work(runs, w, workers)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if p.err != nil {
		return 0, p.err
	}
	for k, f := range runs {
		if err := f.Finish(); err != nil {
			return 0, pointError(live[k], err)
		}
	}
	return p.n, nil
}

// pass is the state a stream pass's producer and workers share, under mu.
// Batch j of the pass is ring[j%streamRing] while some point still needs
// it.
type pass struct {
	mu    sync.Mutex
	ready sync.Cond // workers wait for a batch or an idle point
	room  sync.Cond // the producer waits for a free slot of the ring
	ring  [streamRing]struct {
		t []float64
		c []int32
	}
	produced  int  // batches read
	ended     bool // the producer is done: the stream ended or failed
	n         int64
	live      []*experiments.Point // the points, in the order of the runs
	cursor    []int                // each point's next batch
	busy      []bool               // a worker is feeding the point
	failed    []bool
	cancelled bool
	// The error of the earliest batch errAt (then the lowest point errK;
	// the producer's is -1), math.MaxInt without one. No point starts a
	// batch after errAt.
	errAt, errK int
	err         error
}

// fail records an error of batch j at point k (-1: the producer's).
func (p *pass) fail(j, k int, err error) {
	if j < p.errAt || (j == p.errAt && k < p.errK) {
		p.errAt, p.errK, p.err = j, k, err
	}
	p.wake()
}

// wake wakes the workers and the producer.
func (p *pass) wake() {
	p.ready.Broadcast()
	p.room.Broadcast()
}

// oldest is the earliest batch a point still needs (produced when none).
func (p *pass) oldest() int {
	o := p.produced
	for k, c := range p.cursor {
		if !p.failed[k] {
			o = min(o, c)
		}
	}
	return o
}

// produce hands out the arrivals read already (headT, headC), then reads
// the rest of the stream, a batch at a time into the ring.
func (p *pass) produce(st *workload.Stream, headT []float64, headC []int32, batch int, points, budget float64, reading func(readMS float64)) {
	var bufT [streamRing][]float64
	var bufC [streamRing][]int32
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := 0; ; i += batch {
		for !p.cancelled && p.errAt == math.MaxInt && p.produced-p.oldest() >= streamRing {
			p.room.Wait()
		}
		if p.cancelled || p.errAt != math.MaxInt {
			p.ended = true
			p.ready.Broadcast()
			return
		}
		j := p.produced
		slot := &p.ring[j%streamRing]
		var k int
		var err error
		if i < len(headT) {
			e := min(i+batch, len(headT))
			slot.t, slot.c, k = headT[i:e], headC[i:e], e-i
		} else {
			if bufT[j%streamRing] == nil {
				bufT[j%streamRing], bufC[j%streamRing] = make([]float64, batch), make([]int32, batch)
			}
			t, c := bufT[j%streamRing], bufC[j%streamRing]
			p.mu.Unlock() // no point reads slot j%streamRing: all are past j-streamRing
			k, err = st.Read(t, c)
			p.mu.Lock()
			slot.t, slot.c = t[:k], c[:k]
		}
		if err == nil && k == 0 {
			p.ended = true
			p.ready.Broadcast()
			p.mu.Unlock()
			reading(math.Inf(1)) // all of it
			p.mu.Lock()
			return
		}
		if err == nil {
			if d := float64(p.n+int64(k)) * points; d > budget {
				err = budgetError(d, budget)
			}
		}
		if err != nil {
			p.fail(j, -1, err)
			p.ended = true
			return
		}
		p.n += int64(k)
		p.produced++
		p.ready.Broadcast()
		last := slot.t[k-1]
		p.mu.Unlock() // told outside the pass's lock: the workers go on
		reading(last)
		p.mu.Lock()
	}
}

// work feeds batches to points until the pass ends: each time, the idle
// point furthest behind (then the first) takes its next batch. Worker w of
// workers keeps to its own block of the points, taking another's only
// when it is two batches behind: two workers feeding neighbouring points
// (allocated side by side) would share cache lines.
func (p *pass) work(runs []*simulate.ForwardPass, w, workers int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if p.cancelled {
			return
		}
		k, key := -1, 0
		for i, c := range p.cursor {
			if p.busy[i] || p.failed[i] || c >= p.produced || c > p.errAt {
				continue
			}
			kc := c
			if i*workers/len(p.cursor) != w {
				kc++ // another worker's
			}
			if k < 0 || kc < key {
				k, key = i, kc
			}
		}
		if k < 0 {
			busy := slices.Contains(p.busy, true)
			if !busy && (p.ended || p.errAt != math.MaxInt) {
				p.wake()
				return
			}
			p.ready.Wait()
			continue
		}
		j := p.cursor[k]
		b := p.ring[j%streamRing]
		p.busy[k] = true
		p.mu.Unlock()
		err := runs[k].Feed(b.t, b.c)
		p.mu.Lock()
		p.busy[k] = false
		if err != nil {
			p.failed[k] = true
			p.fail(j, k, pointError(p.live[k], err))
			continue
		}
		p.cursor[k]++
		if j == p.oldest()-1 {
			p.room.Signal() // the oldest batch is done: its slot is free
		}
		p.ready.Broadcast()
	}
}

// selectPoints keeps the points of the given indexes (all when idx is nil).
func selectPoints(all []experiments.Point, idx []int) ([]experiments.Point, error) {
	if idx == nil {
		return all, nil
	}
	out := make([]experiments.Point, 0, len(idx))
	for k, i := range idx {
		if i < 0 || i >= len(all) {
			return nil, fmt.Errorf("point %d: the sweep has %d points", i, len(all))
		}
		if k > 0 && i <= idx[k-1] {
			return nil, fmt.Errorf("points must be increasing: %d after %d", i, idx[k-1])
		}
		out = append(out, all[i])
	}
	return out, nil
}

// givenService is the service_ms column of a generated load's traces (w
// from seed), one value per arrival in stream order (NaN where a line
// gives none), when a server draws from it (empirical); nil otherwise. The
// stream does not carry the column: the load is generated whole
// (workload.GenerateWith, the same arrivals in the same order) to read it.
func givenService(c *experiments.Config, w workload.Spec, seed uint64, n int, traces workload.TraceOpener) ([]float64, error) {
	if !c.UsesEmpirical() {
		return nil, nil
	}
	a, err := workload.GenerateWith(&w, seed, traces)
	if err != nil {
		return nil, err
	}
	if a.GivenServiceMS != nil && a.Len() != n {
		return nil, fmt.Errorf("workload: %d arrivals with service times, %d streamed", a.Len(), n)
	}
	return a.GivenServiceMS, nil
}
