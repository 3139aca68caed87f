package experiments

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/workload"
)

// Progress is told how many points of total are done; calls are serialized
// and done never decreases.
type Progress func(done, total int)

// Options tune how a sweep runs; they never change its output.
type Options struct {
	// Workers is how many points run at once (default GOMAXPROCS).
	Workers  int
	Progress Progress
	// Traces opens the trace files the workload names (a trace part's
	// file); nil when the run reads none.
	Traces workload.TraceOpener
	// Points, when not nil, runs only the points of these indexes (into
	// Config.Points, increasing): one shard of a sweep run across machines.
	// The result holds those points alone, each with the same numbers as in
	// the whole sweep.
	Points []int
	// MaxDecisions is the run's work budget, arrivals × points (0 or more
	// than MaxDecisions: MaxDecisions); the web lab runs with MaxWork.
	MaxDecisions int64
}

// job is one point to run.
type job struct {
	limiter int
	params  limiter.Params
}

// Points lists the sweep's points in output order without running them:
// limiters in the order given, then their parameter values, then the
// servers, the swept server fields, the client policies, the loads, the
// swept workload fields
// and the seed (axes.go). A replicated point is one point.
func (c *Config) Points() []Point {
	pts := c.expandedPoints()
	if reps := c.Replicas(); reps > 1 {
		out := make([]Point, 0, len(pts)/reps)
		for i := 0; i < len(pts); i += reps {
			out = append(out, pts[i])
		}
		pts = out
	}
	return pts
}

// Run streams each load's arrivals once through every point of the sweep,
// in parallel; the result (and every byte written from it) is the same for
// any number of workers. cfg must be valid (DecodeConfig or Validate).
func Run(ctx context.Context, cfg *Config, opt Options) (*Result, error) {
	shape := cfg.shape()
	return runGens(ctx, cfg, func(g int) (*workload.Stream, error) {
		w, seed := cfg.genWorkload(&shape, g)
		return workload.OpenWith(&w, seed, opt.Traces)
	}, opt)
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
// most MaxArrivals).
var streamCacheArrivals = MaxCurveArrivals

const streamBatch = 1 << 16

var maxLivePoints = 128

// RunArrivals runs the sweep over an arrival list already generated (a
// config with one load).
func RunArrivals(ctx context.Context, cfg *Config, arrivals *workload.Arrivals, opt Options) (*Result, error) {
	if n := cfg.genCount(); n != 1 {
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
	res.ArrivalCurves = arrivalCurves(cfg, arrivals.T)
	pr := newProgress(opt.Progress, len(points))
	pts := make([]*Point, len(points))
	for i := range points {
		pts[i] = &points[i]
	}
	if err := runMemory(ctx, cfg, arrivals, pts, opt, pr); err != nil {
		return partialResult(ctx, res, pr, err)
	}
	res.aggregate()
	return res, nil
}

// RunStreams runs the sweep over the arrival streams open opens, one per
// load of the config: each is read once (once per maxLivePoints points of
// its load). A config whose swept workload fields, seeds or replications
// multiply its loads opens load i for each of its generated loads (the
// same stream each time: open them with Run to vary them).
func RunStreams(ctx context.Context, cfg *Config, open OpenLoad, opt Options) (*Result, error) {
	shape := cfg.shape()
	return runGens(ctx, cfg, func(g int) (*workload.Stream, error) { return open(cfg.genAt(&shape, g).load) }, opt)
}

// runGens runs the sweep over the arrival streams of its generated loads
// (axes.go), open(g) opening load g.
func runGens(ctx context.Context, cfg *Config, open OpenLoad, opt Options) (*Result, error) {
	shape := cfg.shape()
	res, points, budget, err := startResult(cfg, opt)
	if err != nil {
		return nil, err
	}
	if d := cfg.expectedArrivals() * float64(len(points)); d > budget {
		return nil, budgetError(d, budget)
	}
	loadErr := func(g int, err error) error {
		if len(cfg.Loads) > 0 {
			return fmt.Errorf("loads[%d]: %w", cfg.genAt(&shape, g).load, err)
		}
		return err
	}
	pr := newProgress(opt.Progress, len(points))
	decisions := 0.0
	perLoad := cfg.genCount() / cfg.LoadCount()
	for lo := range cfg.genCount() {
		var pts []*Point
		queue := false
		for i := range points {
			if pt := &points[i]; pt.gen == lo {
				pts = append(pts, pt)
				queue = queue || queueForAll.Load() || cfg.usesQueue(pt.Server) || cfg.usesClients(pt.Policy, pt.Load) || !cfg.fixedService(pt)
			}
		}
		st, err := open(lo)
		if err != nil {
			return nil, loadErr(lo, err)
		}
		if lo == 0 {
			res.Clients, res.Groups = st.Clients, st.Groups
		}
		limit := streamCacheArrivals
		if queue {
			limit = MaxArrivals
		}
		w, seed := cfg.genWorkload(&shape, lo)
		t, c, more, err := readUpTo(st, limit, w.Expected())
		if err != nil {
			return nil, loadErr(lo, err)
		}
		var n int
		switch {
		case more && queue:
			return nil, loadErr(lo, fmt.Errorf("workload: more than %d arrivals; the limit is %d for points that run the queue model, the client model or a service distribution (they hold the arrivals in memory)", limit, MaxArrivals))
		case more:
			count, err := runStream(ctx, cfg, open, lo, st, t, c, pts, opt, budget-decisions, pr)
			if err != nil {
				return partialResult(ctx, res, pr, loadErr(lo, err))
			}
			n = int(count)
		default:
			a := &workload.Arrivals{T: t, Client: c, Clients: st.Clients, Groups: st.Groups, ClientPart: st.ClientPart}
			if a.GivenServiceMS, err = cfg.givenService(w, seed, a.Len(), opt.Traces); err != nil {
				return nil, loadErr(lo, err)
			}
			n = a.Len()
			if d := decisions + float64(n)*float64(len(pts)); d > budget {
				return nil, budgetError(d, budget)
			}
			if lo == 0 {
				res.ArrivalCurves = arrivalCurves(cfg, t)
			}
			if lo == 0 {
				res.Arrivals = n
			}
			if err := runMemory(ctx, cfg, a, pts, opt, pr); err != nil {
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
	res.aggregate()
	return res, nil
}

// startResult is the result of the sweep's points (all, or opt.Points),
// before they run, and the run's work budget.
func startResult(cfg *Config, opt Options) (*Result, []Point, float64, error) {
	points := cfg.expandedPoints()
	if opt.Points != nil {
		sel, err := selectPoints(cfg.Points(), opt.Points)
		if err != nil {
			return nil, nil, 0, err
		}
		keep := make(map[int]bool, len(sel))
		for _, p := range sel {
			keep[p.Index] = true
		}
		points = slices.DeleteFunc(points, func(p Point) bool { return !keep[p.Index] }) // a point's replications with it
	}
	budget := float64(MaxDecisions)
	if opt.MaxDecisions > 0 {
		budget = float64(min(opt.MaxDecisions, MaxDecisions))
	}
	return &Result{Config: cfg, Points: points}, points, budget, nil
}

func budgetError(d, budget float64) error {
	return fmt.Errorf("the sweep takes about %.0f decisions (arrivals × points); this run's budget is %.0f: sweep fewer values or a shorter workload", d, budget)
}

// arrivalCurves is the empirical arrival curve of the offered traffic, nil
// above MaxCurveArrivals.
func arrivalCurves(cfg *Config, t []float64) *ArrivalCurves {
	if len(t) > MaxCurveArrivals {
		return nil
	}
	grid := calculus.Grid(cfg.Workload.DurationMS)
	return &ArrivalCurves{GridMS: grid, Offered: calculus.Empirical(t, grid)}
}

// readUpTo reads a stream into memory until it ends or holds more than
// limit arrivals (more), sized from the expected count.
func readUpTo(st *workload.Stream, limit int, expected float64) (t []float64, c []int32, more bool, err error) {
	size := streamBatch
	if expected > 0 {
		size = int(min(expected+expected/64+1024, float64(limit+1)))
	}
	t, c = make([]float64, 0, size), make([]int32, 0, size)
	for {
		if len(t) == cap(t) {
			t, c = slices.Grow(t, max(len(t)/2, streamBatch)), slices.Grow(c, max(len(t)/2, streamBatch))
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
	finished map[*Point]bool
}

func newProgress(f Progress, total int) *progress {
	return &progress{f: f, total: total, finished: map[*Point]bool{}}
}

// finish records finished points.
func (p *progress) finish(pts ...*Point) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += len(pts)
	for _, pt := range pts {
		p.finished[pt] = true
	}
	if p.f != nil {
		p.f(p.done, p.total)
	}
}

// Partial marks a result cut short: its sweep was cancelled (or the
// process interrupted) after the first PointsDone of its PointsTotal
// points had finished, and it holds those alone.
type Partial struct {
	PointsDone  int `json:"points_done"`
	PointsTotal int `json:"points_total"`
}

// partialResult is what a sweep ended by its context (cancelled, or its
// deadline passed) keeps: the longest run of finished points from the
// first, in sweep order, so a partial result is the first k points of the
// sweep with their numbers unchanged (points that finished after the
// first unfinished one, at most a worker's share, are dropped). With no
// point finished, or an error of the sweep's own, it is nil and err.
func partialResult(ctx context.Context, res *Result, pr *progress, err error) (*Result, error) {
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
	res.Partial = &Partial{PointsDone: k / reps, PointsTotal: len(res.Points) / reps}
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
	res.aggregate()
	return res, err
}

// runMemory runs points over a load held in memory, each worker a point at
// a time over the whole list.
func runMemory(ctx context.Context, cfg *Config, a *workload.Arrivals, points []*Point, opt Options, pr *progress) error {
	classes := cfg.drawClasses(a.Len())
	served := cfg.serviceArrivals(a, points)
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(points))

	var (
		next     atomic.Int64
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := new(instruments)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(points) || ctx.Err() != nil {
					return
				}
				pt := points[i]
				if err := simulatePoint(ctx, cfg, served[i], classes, in, pt); err != nil {
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
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

func pointError(pt *Point, err error) error {
	return fmt.Errorf("point %d (%s %s): %w", pt.Index, pt.Limiter, limiter.FormatParams(pt.Type, pt.Params), err)
}

// batch is a slice of a stream handed to every live point.
type batch struct {
	t      []float64
	c      []int32
	err    error
	pooled bool // one of the producer's ring, returned after use
}

// runStream runs the forward pass of points over a stream whose first
// arrivals (t, c) were read already: the points share each batch of the
// stream, the workers feeding them a point and a batch at a time, while a
// producer reads the next batch. Points beyond maxLivePoints take further
// passes, each over the stream opened again. It returns the arrivals.
func runStream(ctx context.Context, cfg *Config, open OpenLoad, lo int, st *workload.Stream, t []float64, c []int32, points []*Point, opt Options, budget float64, pr *progress) (int64, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var count int64
	for from := 0; from < len(points); from += maxLivePoints {
		live := points[from:min(from+maxLivePoints, len(points))]
		if from > 0 {
			var err error
			if st, err = open(lo); err != nil {
				return 0, err
			}
			t, c = nil, nil
		}
		n, err := streamPass(ctx, cfg, st, t, c, live, min(workers, len(live)), budget)
		if err != nil {
			return 0, err
		}
		budget -= float64(n) * float64(len(live))
		count = n
		pr.finish(live...)
	}
	return count, nil
}

// streamPass is one pass of live points over a stream.
func streamPass(ctx context.Context, cfg *Config, st *workload.Stream, headT []float64, headC []int32, live []*Point, workers int, budget float64) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runs := make([]*fwd, len(live))
	for k, pt := range live {
		f, err := newFwd(ctx, cfg.pointConfig(pt), st.Clients, len(st.Groups), &cfg.Limiters[pt.LimiterIndex], pt.Params, new(instruments), pt, false, 0)
		if err != nil {
			return 0, pointError(pt, err)
		}
		runs[k] = f
	}

	// The producer hands out the arrivals read already, then reads the
	// rest into a ring of batches the points return when done.
	batches := make(chan batch, 2)
	free := make(chan batch, 3)
	for range cap(free) {
		free <- batch{t: make([]float64, streamBatch), c: make([]int32, streamBatch), pooled: true}
	}
	go func() {
		defer close(batches)
		for i := 0; i < len(headT); i += streamBatch {
			j := min(i+streamBatch, len(headT))
			select {
			case batches <- batch{t: headT[i:j], c: headC[i:j]}:
			case <-ctx.Done():
				return
			}
		}
		for {
			var b batch
			select {
			case b = <-free:
			case <-ctx.Done():
				return
			}
			k, err := st.Read(b.t[:cap(b.t)], b.c[:cap(b.c)])
			b.t, b.c, b.err = b.t[:k], b.c[:k], err
			if k == 0 && err == nil {
				return
			}
			select {
			case batches <- b:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()

	var (
		cur      batch
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	tasks := make(chan int)
	defer close(tasks)
	for range workers {
		go func() {
			for k := range tasks {
				if err := runs[k].feed(cur.t, cur.c); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = pointError(runs[k].pt, err)
					}
					mu.Unlock()
					cancel()
				}
				wg.Done()
			}
		}()
	}
	var n int64
	for b := range batches {
		if b.err != nil {
			return 0, b.err
		}
		n += int64(len(b.t))
		if d := float64(n) * float64(len(live)); d > budget {
			return 0, budgetError(d, budget)
		}
		cur = b
		wg.Add(len(runs))
		for k := range runs {
			tasks <- k
		}
		wg.Wait()
		if firstErr != nil {
			return 0, firstErr
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if b.pooled {
			free <- batch{t: b.t[:cap(b.t)], c: b.c[:cap(b.c)], pooled: true}
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for _, f := range runs {
		f.finish()
		cfg.pointConfig(f.pt).applyPercentiles(f.pt)
	}
	return n, nil
}

// selectPoints keeps the points of the given indexes (all when idx is nil).
func selectPoints(all []Point, idx []int) ([]Point, error) {
	if idx == nil {
		return all, nil
	}
	out := make([]Point, 0, len(idx))
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
