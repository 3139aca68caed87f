package sweep

import (
	"context"
	"slices"
	"sync"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/simulate"
	"github.com/ratelab/ratelab/experiments/workload"
)

// followChunk is how many arrivals the producer of a growing load reads
// before the points following it may take them.
const followChunk = 1 << 14

// growing is a load held in memory while it is read: a producer (read)
// reads the stream into t and c a chunk at a time, and the points that
// start before it ends follow it (follow), fed each chunk as it comes, so
// no point waits for the whole load and no core idles while it is read.
// The first n arrivals are final; once done, the load is whole (whole,
// share) or the points must stop (stop).
type growing struct {
	st       *workload.Stream
	count    *simulate.OfferedCounter // the offered series, counted as read (nil: by the points)
	limit    int                      // arrivals it may hold; past them it stops (more)
	expected float64
	chunk    int

	mu    sync.Mutex
	grown sync.Cond // n grew or done
	t     []float64
	c     []int32
	n     int
	done  bool
	// Why the points following stop (nil: the load is whole), one of
	// readErr, the stream past the limit (more), budgetErr, or the
	// sweep's context's error.
	stop      error
	readErr   error
	more      bool
	budgetErr error
	// Once done without stop: the load, and its offered series shared.
	whole *workload.Arrivals
	share *simulate.LoadShare
}

// errMore stops the points following a load that went past the arrivals
// a load may have in memory: it streams instead.
var errMore = errorString("the load streams")

type errorString string

func (e errorString) Error() string { return string(e) }

// newGrowing is st's load, to be read by read: at most limit arrivals
// (at most MaxCurveArrivals, as a load held in memory), about expected,
// chunk at a time, its offered series counted by count as it is read
// (nil: by its points, once it is whole).
func newGrowing(st *workload.Stream, limit int, expected float64, chunk int, count *simulate.OfferedCounter) *growing {
	g := &growing{st: st, limit: limit, expected: expected, chunk: chunk, count: count}
	g.grown.L = &g.mu
	return g
}

// read reads the stream into g until it ends, fails or holds more than
// limit arrivals; check is told the count of a load read whole and says
// whether the sweep may run it (the work budget).
func (g *growing) read(ctx context.Context, check func(n int) error) {
	st, limit, expected, chunk := g.st, g.limit, g.expected, g.chunk
	size := int(min(expected+expected/64+1024, float64(limit+1)))
	t, c := make([]float64, size), make([]int32, size)
	n := 0
	var stop error
	for {
		if err := ctx.Err(); err != nil {
			stop = err
			break
		}
		if n == len(t) {
			grow := min(max(n/2, chunk), limit+1-n)
			t, c = slices.Grow(t[:n], grow), slices.Grow(c[:n], grow)
			t, c = t[:cap(t)], c[:cap(c)]
		}
		m := min(chunk, len(t)-n, limit+1-n)
		k, err := st.Read(t[n:n+m], c[n:n+m])
		if err != nil {
			g.mu.Lock()
			g.readErr = err
			g.mu.Unlock()
			stop = err
			break
		}
		if g.count != nil {
			g.count.Add(t[n : n+k])
		}
		n += k
		if n > limit {
			g.mu.Lock()
			g.more = true
			g.mu.Unlock()
			stop = errMore
		}
		g.mu.Lock()
		g.t, g.c, g.n = t, c, n
		g.mu.Unlock()
		g.grown.Broadcast()
		if stop != nil || k < m {
			break
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	defer g.grown.Broadcast()
	g.t, g.c, g.n, g.done = t[:n:n], c[:n:n], n, true
	if stop == nil {
		if g.budgetErr = check(n); g.budgetErr != nil {
			stop = g.budgetErr
		}
	}
	g.stop = stop
	if stop == nil {
		g.whole = &workload.Arrivals{T: g.t, Client: g.c, Clients: st.Clients, Groups: st.Groups, ClientPart: st.ClientPart}
		g.share = simulate.NewLoadShare(g.t)
		if g.count != nil {
			g.share.File(g.count)
		}
	}
}

// next waits until more than fed arrivals are read, or the load is done,
// and returns those read so far.
func (g *growing) next(fed int) (t []float64, c []int32, done bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.n == fed && !g.done {
		g.grown.Wait()
	}
	return g.t[:g.n], g.c[:g.n], g.done
}

// ended reports whether the load is done and, if so, the error that stops
// its points (nil: it is whole).
func (g *growing) ended() (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.done, g.stop
}

// wait waits until the load is done and returns its stop.
func (g *growing) wait() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for !g.done {
		g.grown.Wait()
	}
	return g.stop
}

// follow runs point pt over g as it is read, on the worker's instruments
// in (simulate.NewLoadPass): it measures what simulate.Point does over the
// whole load. A point that fails (err) waits for the load to end, so that
// an error of the load (its stream's, the limit's, the budget's: stop)
// comes first, as it does when the load is read before its points run.
func (g *growing) follow(ctx context.Context, cfg *experiments.Config, pt *experiments.Point, in *simulate.Instruments, sw *simulate.Switches) (stop, err error) {
	f, err := simulate.NewLoadPass(ctx, cfg, pt, g.st.Clients, len(g.st.Groups), g.limit, int(g.expected), in, sw)
	fed := 0
	for err == nil {
		t, c, done := g.next(fed)
		if len(t) > fed {
			err = f.Feed(t[fed:], c[fed:])
			fed = len(t)
		}
		if done {
			break
		}
	}
	if stop := g.wait(); stop != nil {
		return stop, nil
	}
	if err != nil {
		return nil, err
	}
	return nil, f.FinishLoad(g.share, g.whole.T)
}
