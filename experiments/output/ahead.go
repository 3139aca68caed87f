package output

import (
	"fmt"
	"io"
	"sync"

	"github.com/ratelab/ratelab/experiments"
)

// SeriesAhead writes series.csv while a sweep runs: told each point as it
// finishes (Finished, the sweep's Options.Finished), it writes the rows of
// the points in order as soon as every point before them is done, so the
// file's formatting, hashing and writing (80 MB at the seed model's 9,900
// s) run beside the simulation instead of after it. WriteAhead takes the
// file from it when it holds the result's bytes, and otherwise (a partial
// result, a sweep with replications, whose points are made at its end)
// writes series.csv again as Write does. The bytes are Write's either way.
//
// It also makes each series report (a few points' series: the seed model's
// Post 3 shaping report, 2.3 MB at 9,900 s) once the points it reads are
// done, which WriteAhead takes for a result told whole.
//
// The header's client columns are decided before the points run, from the
// config (a point whose clients behave runs the client model, whose series
// have them); a result that has them otherwise is written again.
type SeriesAhead struct {
	open func(name string) (io.Writer, error)

	mu      sync.Mutex
	res     *experiments.Result
	done    []bool
	stopped bool
	wake    chan struct{} // a point done or the sweep ended (capacity 1)
	ended   chan struct{} // closed when the writer has returned

	// The series reports made beside the points (reportsAhead), by their
	// index in Config.Reports: each made once the points it reads are
	// done; nil for the other reports.
	reports []*reportAhead

	// The writer's, read once ended is closed.
	out     Output
	clients bool
	written int // points written
	err     error
}

// NewSeriesAhead is a SeriesAhead writing series.csv to the writer open
// gives (open is called once, when the first point is done).
func NewSeriesAhead(open func(name string) (io.Writer, error)) *SeriesAhead {
	return &SeriesAhead{open: open, wake: make(chan struct{}, 1), ended: make(chan struct{})}
}

// Finished tells a that point k of res is done (sweep.Finished); the
// first call starts the writer.
func (a *SeriesAhead) Finished(res *experiments.Result, k int) {
	a.mu.Lock()
	switch {
	case a.res == nil && !a.stopped:
		// The writer reads the points it is told of through its own
		// result: the sweep may cut res.Points once it ends (partial).
		a.res, a.done = res, make([]bool, len(res.Points))
		own := &experiments.Result{Config: res.Config, Points: res.Points}
		a.reports = reportsAhead(own)
		go a.write(own)
	case a.res != res:
		a.mu.Unlock()
		return // another result's: never the case in one sweep
	}
	a.done[k] = true
	a.mu.Unlock()
	a.signal()
}

func (a *SeriesAhead) signal() {
	select {
	case a.wake <- struct{}{}:
	default: // a wake is pending already
	}
}

// Stop ends the writer after the points it was told of; Stop after
// WriteAhead, or twice, does nothing. A run that fails calls it.
func (a *SeriesAhead) Stop() {
	a.mu.Lock()
	a.stopped = true
	started := a.res != nil
	a.mu.Unlock()
	a.signal()
	if started {
		<-a.ended
	}
}

// wait waits until point k is done (true) or the writer is stopped with it
// not done (false).
func (a *SeriesAhead) wait(k int) bool {
	for {
		a.mu.Lock()
		done, stopped := a.done[k], a.stopped
		a.mu.Unlock()
		if done {
			return true
		}
		if stopped {
			return false
		}
		<-a.wake
	}
}

// reportAhead is a series report made beside the points: its bytes or
// error once done is closed.
type reportAhead struct {
	last int // the latest point (in Result.Points) it reads
	done chan struct{}
	data []byte
	err  error
}

// reportsAhead are the series reports of res that SeriesAhead makes
// beside the points (each reads the series of a few points: the seed
// model's Post 3 report, 2.3 MB at 9,900 s, was made after the last
// point), by index in Config.Reports; nil for the others.
func reportsAhead(res *experiments.Result) []*reportAhead {
	var out []*reportAhead
	for i := range res.Config.Reports {
		r := &res.Config.Reports[i]
		if r.Type != experiments.ReportSeries || len(res.Points) == 0 {
			continue
		}
		last := 0 // offered_rps without a point reads the first point's
		for _, c := range r.Columns {
			var p *experiments.Point
			pi := max(0, res.Config.PolicyIndex(c.Policy))
			switch {
			case c.Limiter != nil:
				p = findPoint(res, *c.Limiter, c.Swept, c.Server, c.Load, pi)
			case c.Value == "offered_rps" && (c.Load != nil || c.Policy != ""):
				p = findPoint(res, -1, nil, c.Server, c.Load, pi)
			}
			for k := range res.Points {
				if p == &res.Points[k] {
					last = max(last, k)
				}
			}
		}
		if out == nil {
			out = make([]*reportAhead, len(res.Config.Reports))
		}
		out[i] = &reportAhead{last: last, done: make(chan struct{})}
	}
	return out
}

// report is report i of res made beside the points, when a made it
// (for res, told whole: not a sweep cut short).
func (a *SeriesAhead) report(res *experiments.Result, i int) (data []byte, err error, ok bool) {
	a.mu.Lock()
	same := a.res == res
	a.mu.Unlock()
	if !same || res.Partial != nil || i >= len(a.reports) || a.reports[i] == nil {
		return nil, nil, false
	}
	r := a.reports[i]
	select {
	case <-r.done:
		return r.data, r.err, true
	case <-a.ended: // the writer stopped before the report's points were done
	}
	select {
	case <-r.done:
		return r.data, r.err, true
	default:
		return nil, nil, false
	}
}

// write writes series.csv of res (the sweep's config and points), a point
// at a time as each is done, and starts each series report once the
// points it reads are done.
func (a *SeriesAhead) write(res *experiments.Result) {
	var reports sync.WaitGroup
	defer close(a.ended)
	defer reports.Wait()
	started := make([]bool, len(a.reports))
	startReports := func(k int) { // points 0 to k are done
		for i, r := range a.reports {
			if r != nil && !started[i] && r.last <= k {
				started[i] = true
				reports.Add(1)
				go func() {
					defer reports.Done()
					defer close(r.done)
					r.data, r.err = Report(res, &res.Config.Reports[i])
				}()
			}
		}
	}
	a.clients = false
	for i := range res.Points {
		pt := &res.Points[i]
		a.clients = a.clients || res.Config.UsesClients(pt.Policy, pt.Load)
	}
	sf := newSeriesFileWith(res, a.clients)
	w, err := a.open(experiments.FileSeries)
	if err != nil {
		a.err = fmt.Errorf("%s: %w", experiments.FileSeries, err)
		return
	}
	sw := newSummingWriter(w)
	defer sw.stop()
	if _, err := sw.Write(sf.header); err != nil {
		a.err = fmt.Errorf("%s: %w", experiments.FileSeries, err)
		return
	}
	var bufs [][]byte // the pieces' buffers, reused point after point
	for k := range res.Points {
		if !a.wait(k) {
			return
		}
		startReports(k)
		sf.label(k)
		if err := sf.writePoints(sw, k, k+1, &bufs); err != nil {
			a.err = fmt.Errorf("%s: %w", experiments.FileSeries, err)
			return
		}
		a.written = k + 1
	}
	a.out = Output{Name: experiments.FileSeries, SHA256: sw.Sum(), Bytes: sw.n}
}

// end stops the writer once it has written every point it was told of
// and says whether it wrote res's series.csv (out lists it), or its error.
func (a *SeriesAhead) end(res *experiments.Result) (out Output, ok bool, err error) {
	a.Stop()
	a.mu.Lock()
	same := a.res == res
	a.mu.Unlock()
	if !same {
		return Output{}, false, nil
	}
	if a.err != nil {
		return Output{}, false, a.err
	}
	if res.Partial != nil || a.written != len(res.Points) || a.written != len(a.done) || a.clients != seriesClients(res) {
		return Output{}, false, nil
	}
	return a.out, true, nil
}
