package experiments

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
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
	// Points, when not nil, runs only the points of these indexes (into
	// Config.Points, increasing): one shard of a sweep run across machines.
	// The result holds those points alone, each with the same numbers as in
	// the whole sweep.
	Points []int
}

// job is one point to run.
type job struct {
	limiter int
	params  limiter.Params
}

// Points lists the sweep's points in output order without running them:
// limiters in the order given, then their parameter values, then the
// servers, then the loads.
func (c *Config) Points() []Point {
	var pts []Point
	for li := range c.Limiters {
		l := &c.Limiters[li]
		for _, p := range l.Points() {
			for si := range c.ServerCount() {
				for lo := range c.LoadCount() {
					pt := Point{Index: len(pts), LimiterIndex: li, Limiter: l.Label(), Type: l.Type, Params: p, Swept: l.Swept(), Server: si, Load: lo}
					if len(c.Servers) > 0 {
						pt.ServerName = c.Servers[si].Name
					}
					if len(c.Loads) > 0 {
						pt.LoadName = c.Loads[lo].Name
					}
					pts = append(pts, pt)
				}
			}
		}
	}
	return pts
}

// Run generates the workload once and replays it through every point of the
// sweep, in parallel; the result (and every byte written from it) is the same
// for any number of workers. cfg must be valid (DecodeConfig or Validate).
func Run(ctx context.Context, cfg *Config, opt Options) (*Result, error) {
	loads := make([]*workload.Arrivals, cfg.LoadCount())
	for i := range loads {
		w := cfg.WorkloadAt(i)
		arrivals, err := workload.Generate(&w, cfg.Seed)
		if err != nil {
			if len(cfg.Loads) > 0 {
				return nil, fmt.Errorf("loads[%d]: %w", i, err)
			}
			return nil, err
		}
		if arrivals.Len() > MaxArrivals {
			return nil, fmt.Errorf("workload: %d arrivals; the limit is %d", arrivals.Len(), MaxArrivals)
		}
		loads[i] = arrivals
	}
	return runLoads(ctx, cfg, loads, opt)
}

// RunArrivals runs the sweep over an arrival list already generated (a
// config with one load).
func RunArrivals(ctx context.Context, cfg *Config, arrivals *workload.Arrivals, opt Options) (*Result, error) {
	if cfg.LoadCount() != 1 {
		return nil, fmt.Errorf("the config has %d loads: run it with Run", cfg.LoadCount())
	}
	return runLoads(ctx, cfg, []*workload.Arrivals{arrivals}, opt)
}

func runLoads(ctx context.Context, cfg *Config, loads []*workload.Arrivals, opt Options) (*Result, error) {
	arrivals := loads[0]
	classes := make([][]uint8, len(loads))
	for i, a := range loads {
		classes[i] = cfg.drawClasses(a.Len())
	}
	served := cfg.serviceLoads(loads)
	points, err := selectPoints(cfg.Points(), opt.Points)
	if err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, Arrivals: arrivals.Len(), Clients: arrivals.Clients, Groups: arrivals.Groups, Points: points}
	if len(cfg.Loads) > 0 {
		for _, a := range loads {
			res.LoadArrivals = append(res.LoadArrivals, a.Len())
		}
	}
	if arrivals.Len() <= MaxCurveArrivals {
		grid := calculus.Grid(cfg.Workload.DurationMS)
		res.ArrivalCurves = &ArrivalCurves{GridMS: grid, Offered: calculus.Empirical(arrivals.T, grid)}
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(points))

	var (
		next     atomic.Int64
		mu       sync.Mutex
		done     int
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
				pt := &points[i]
				if err := simulatePoint(ctx, cfg, served[pt.Load][pt.Server], classes[pt.Load], in, pt); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("point %d (%s %s): %w", i, pt.Limiter, limiter.FormatParams(pt.Type, pt.Params), err)
					}
					mu.Unlock()
					cancel()
					return
				}
				mu.Lock()
				done++
				if opt.Progress != nil {
					opt.Progress(done, len(points))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// serviceLoads gives every load its requests' service times on every
// server (server.Spec.Draw): loads[l] itself where the server's service is
// fixed, else a copy with ServiceMS. Servers with the same distribution
// share one draw; every draw starts from the seed, so request i always
// takes the i-th draw whatever the server.
func (c *Config) serviceLoads(loads []*workload.Arrivals) [][]*workload.Arrivals {
	out := make([][]*workload.Arrivals, len(loads))
	for l, a := range loads {
		out[l] = make([]*workload.Arrivals, c.ServerCount())
		var seen []server.Spec
		var drawn [][]float64
		for si := range out[l] {
			srv := c.ServerAt(si)
			if srv.FixedService() {
				out[l][si] = a
				continue
			}
			var svc []float64
			for k := range seen {
				if seen[k].SameService(&srv) {
					svc = drawn[k]
				}
			}
			if svc == nil {
				svc = srv.Draw(c.Seed, a.Len(), a.GivenServiceMS)
				seen, drawn = append(seen, srv), append(drawn, svc)
			}
			cp := *a
			cp.ServiceMS = svc
			out[l][si] = &cp
		}
	}
	return out
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
