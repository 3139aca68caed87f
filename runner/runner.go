// Package runner runs the lab's sweeps in the background: a bounded pool of
// workers takes stored runs from a bounded queue, runs the engine, and
// stores the results.
//
// The model: Submit stores a run as queued and puts it in the queue, or
// refuses with ErrQueueFull (storing nothing) when Options.Queue runs are
// already waiting. Options.Workers sweeps run at once; each ends exactly
// once as done (results and files written by one storage.Complete), failed
// (the engine's error), cancelled (Cancel) or interrupted (Shutdown: a
// running sweep; a queued run stays queued in the store, and Requeue
// queues it again at the next start). Progress
// goes to the store at most every ProgressStoreEvery and to subscribers at
// most every ProgressEventEvery; status changes and the final state always
// go to both.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/shadow"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/storage"
)

var (
	// ErrQueueFull: Options.Queue runs are already waiting; nothing was stored.
	ErrQueueFull = errors.New("queue full")
	// ErrClosed: the runner is shutting down and takes no new runs.
	ErrClosed = errors.New("runner is shut down")
)

// Throttles of progress reports.
const (
	ProgressEventEvery = 100 * time.Millisecond
	ProgressStoreEvery = 250 * time.Millisecond
)

// CancelledError is the error text of a run cancelled by Cancel.
const CancelledError = "cancelled by request"

// Options configure a Runner.
type Options struct {
	Workers int // sweeps run at once (default 1)
	Queue   int // runs waiting at most (default 16)
	Logger  *slog.Logger
	// EngineWorkers is experiments.Options.Workers for each sweep: points
	// run at once (0 = all cores).
	EngineWorkers int
	// Traces opens the trace files a config's trace parts name (lab serve
	// --traces DIR), and TraceNames lists them; Submit refuses a config
	// that names another. nil: the lab has no trace files.
	Traces     workload.TraceOpener
	TraceNames func() ([]string, error)
	// NewSpill, when not nil, gives each run that reads trace files a
	// spill (sweep.Options.Spill: each trace parsed once) and the func
	// that removes it when the run ends.
	NewSpill func() (spill workload.Spill, remove func())
	// Logs are the logs shadow replays read and where uploads go (nil:
	// none; SubmitShadow refuses every replay).
	Logs Logs
}

// TraceError is Submit's refusal of a config whose trace part names a file
// the lab does not have.
type TraceError struct{ Errs field.List }

func (e *TraceError) Error() string { return e.Errs.Err().Error() }

// TraceNames lists the lab's trace files (none without a trace directory).
func (r *Runner) TraceNames() []string {
	if r.opt.TraceNames == nil {
		return nil
	}
	names, err := r.opt.TraceNames()
	if err != nil {
		r.log.Error("list the trace files", "err", err)
	}
	return names
}

// checkTraces refuses trace files the lab does not have, at their parts:
// the workload's (which a load without parts of its own replays, and an
// empirical server reads the column of) and each load's own.
func (r *Runner) checkTraces(cfg *experiments.Config) error {
	var names []string
	listed := false
	var errs field.List
	check := func(path string, parts []workload.Part) {
		for i, p := range parts {
			if p.File == "" {
				continue
			}
			if !listed {
				names, listed = r.TraceNames(), true
			}
			if !slices.Contains(names, p.File) {
				at := fmt.Sprintf("%s[%d].file", path, i)
				if len(names) == 0 {
					errs.Add(at, "%q: this lab has no trace files (lab serve --traces DIR)", p.File)
				} else {
					errs.Add(at, "%q is not one of the lab's trace files", p.File)
				}
			}
		}
	}
	check("workload.parts", cfg.Workload.Parts)
	for lo := range cfg.Loads {
		check(fmt.Sprintf("loads[%d].parts", lo), cfg.Loads[lo].Parts)
	}
	if len(errs) > 0 {
		return &TraceError{errs}
	}
	return nil
}

// Event tells a subscriber where a run is: its status, points done of
// total, and the error text of a failed, cancelled or interrupted run.
// While a streamed pass runs (a trace too large to hold, read once for
// several points), Reading is how far it has got, in points: the pass's
// points times the share of its load read (experiments.Reading), so
// Done + Reading is how much of the run is done.
type Event struct {
	ID      string  `json:"id"`
	Status  string  `json:"status"`
	Done    int     `json:"done"`
	Total   int     `json:"total"`
	Reading float64 `json:"reading,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// QueuedAtShutdown is the Error of the last event a queued run's
// subscribers get when the lab stops: the run stays queued.
const QueuedAtShutdown = "the lab is stopping: this run stays queued and starts when the lab starts again"

// Final reports whether the event is the run's last: its status is an end
// state.
func (e Event) Final() bool { return storage.Final(e.Status) }

// Runner is the background pool. Its methods are safe for concurrent use.
type Runner struct {
	st    *storage.Store
	opt   Options
	log   *slog.Logger
	start sync.Once
	wg    sync.WaitGroup

	mu       sync.Mutex
	wake     *sync.Cond // signalled when pending grows or closed is set
	closed   bool
	pending  []*job          // queued jobs, oldest first
	reserved int             // places held by Submits storing their run
	jobs     map[string]*job // queued, running and ending jobs by id
	subs     map[string]map[*subscriber]struct{}
}

// job is one active (queued or running) run.
type job struct {
	id     string
	cfg    *experiments.Config // read from the store when the job runs
	ctx    context.Context
	cancel context.CancelCauseFunc
	// Guarded by Runner.mu.
	status      string
	done, total int
	reading     float64 // Event.Reading
	// ending is set once the job's end is decided (cancelled or interrupted
	// while queued); it stays in Runner.jobs until the end is stored.
	ending bool
}

type subscriber struct {
	ch     chan Event
	closed bool
}

// Causes of a job's context ending.
var (
	errCancelled = errors.New("cancelled by request")
	errShutdown  = errors.New("server shutting down")
)

// subBuffer is the channel buffer of a subscriber.
const subBuffer = 16

// New returns a runner over st; call Start to run sweeps.
func New(st *storage.Store, opt Options) *Runner {
	if opt.Workers <= 0 {
		opt.Workers = 1
	}
	if opt.Queue <= 0 {
		opt.Queue = 16
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Runner{
		st:   st,
		opt:  opt,
		log:  log,
		jobs: map[string]*job{},
		subs: map[string]map[*subscriber]struct{}{},
	}
	r.wake = sync.NewCond(&r.mu)
	return r
}

// Start launches the workers; later calls do nothing.
func (r *Runner) Start() {
	r.start.Do(func() {
		for range r.opt.Workers {
			r.wg.Go(r.work)
		}
	})
}

// Submit stores cfg as a new queued run named name (a re-run of rerunOf
// when not "") and queues it. When Options.Queue runs are already waiting it
// stores nothing and returns ErrQueueFull; after Shutdown, ErrClosed.
func (r *Runner) Submit(ctx context.Context, cfg *experiments.Config, name, rerunOf string) (*storage.Run, error) {
	if err := r.checkTraces(cfg); err != nil {
		return nil, err
	}
	run := &storage.Run{
		Name:          name,
		Status:        storage.StatusQueued,
		PointsTotal:   len(cfg.Points()),
		Config:        cfg.JSON(),
		Seed:          cfg.Seed,
		EngineVersion: experiments.EngineVersion,
		RerunOf:       rerunOf,
	}
	for i := range cfg.Limiters {
		run.Limiters = append(run.Limiters, cfg.Limiters[i].Label())
	}
	return r.queue(ctx, run)
}

// queue stores a new run as queued and puts it in the queue (Submit,
// SubmitShadow).
func (r *Runner) queue(ctx context.Context, run *storage.Run) (*storage.Run, error) {
	name := run.Name
	// Hold a place in the queue while the run is stored, so a run is
	// stored only when it has a place.
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	if len(r.pending)+r.reserved >= r.opt.Queue {
		r.mu.Unlock()
		return nil, ErrQueueFull
	}
	r.reserved++
	r.mu.Unlock()

	err := r.st.Create(ctx, run)
	r.mu.Lock()
	r.reserved--
	if err != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("submit: %w", err)
	}
	jctx, cancel := context.WithCancelCause(context.Background())
	// A queued job holds no config: a waiting sweep costs no memory (its
	// inline traces may be tens of MB); run reads it back from the store.
	j := &job{id: run.ID, ctx: jctx, cancel: cancel, status: storage.StatusQueued, total: run.PointsTotal}
	if r.closed {
		// Shut down while the run was being stored.
		j.ending = true
		r.jobs[j.id] = j
		r.mu.Unlock()
		r.end(j, storage.StatusInterrupted, storage.InterruptedError)
		return nil, ErrClosed
	}
	r.jobs[j.id] = j
	r.pending = append(r.pending, j)
	queued := len(r.pending)
	r.wake.Signal()
	r.mu.Unlock()
	r.log.Info("run queued", "run", run.ID, "name", name, "points", run.PointsTotal, "queued", queued)
	return run, nil
}

// Cancel cancels a queued or running sweep; it ends as cancelled. It
// reports whether the run was active (false for unknown or ended runs).
func (r *Runner) Cancel(id string) bool {
	r.mu.Lock()
	j, ok := r.jobs[id]
	if !ok || j.ending {
		r.mu.Unlock()
		return ok
	}
	j.cancel(errCancelled)
	if j.status != storage.StatusQueued {
		// The worker sees the cancelled context and ends the run.
		r.mu.Unlock()
		return true
	}
	// A queued run leaves the queue and ends now.
	r.unqueue(j)
	j.ending = true
	r.mu.Unlock()
	r.end(j, storage.StatusCancelled, CancelledError)
	return true
}

// unqueue removes j from pending; r.mu must be held.
func (r *Runner) unqueue(j *job) {
	for i, p := range r.pending {
		if p == j {
			r.pending = append(r.pending[:i], r.pending[i+1:]...)
			return
		}
	}
}

// Queued is how many runs wait in the queue (at most Options.Queue) and
// how many sweeps run now: for a Retry-After estimate or a status line.
func (r *Runner) Queued() (waiting, running int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, j := range r.jobs {
		if j.status == storage.StatusRunning && !j.ending {
			running++
		}
	}
	return len(r.pending) + r.reserved, running
}

// Subscribe follows a run. The channel first gets the run's current state,
// then status changes and progress (at most every ProgressEventEvery), and
// last the final event (done, failed, cancelled or interrupted), after which
// it is closed. A subscriber that reads slowly loses intermediate events but
// always gets the final one. A run that has already ended gives just its
// final event; an unknown run, a closed channel with no event.
// unsubscribe stops the events and may be called any number of times.
func (r *Runner) Subscribe(id string) (events <-chan Event, unsubscribe func()) {
	s := &subscriber{ch: make(chan Event, subBuffer)}
	r.mu.Lock()
	j, active := r.jobs[id]
	if active {
		if r.subs[id] == nil {
			r.subs[id] = map[*subscriber]struct{}{}
		}
		r.subs[id][s] = struct{}{}
		s.ch <- Event{ID: id, Status: j.status, Done: j.done, Total: j.total, Reading: j.reading}
	}
	r.mu.Unlock()
	if !active {
		// Ended (or never existed): the store has the final state, since a
		// job leaves r.jobs only after its end is stored.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		run, err := r.st.Get(ctx, id)
		cancel()
		if err == nil {
			s.ch <- Event{ID: id, Status: run.Status, Done: run.PointsDone, Total: run.PointsTotal, Error: run.Error}
		} else if !errors.Is(err, storage.ErrNotFound) {
			r.log.Error("subscribe", "run", id, "err", err)
		}
		close(s.ch)
		return s.ch, func() {}
	}
	return s.ch, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if set := r.subs[id]; set != nil {
			delete(set, s)
			if len(set) == 0 {
				delete(r.subs, id)
			}
		}
		if !s.closed {
			s.closed = true
			close(s.ch)
		}
	}
}

// publish sends ev to the run's subscribers; r.mu must be held. Intermediate
// events are dropped for a full subscriber; a final event is the last
// (publishLast).
func (r *Runner) publish(ev Event) {
	if ev.Final() {
		r.publishLast(ev)
		return
	}
	for s := range r.subs[ev.ID] {
		select {
		case s.ch <- ev:
		default:
		}
	}
}

// publishLast sends ev to the run's subscribers as their last event,
// making room by dropping the oldest buffered event of a full one, and
// closes their channels: a final status, or a queued run at shutdown;
// r.mu must be held.
func (r *Runner) publishLast(ev Event) {
	for s := range r.subs[ev.ID] {
		select {
		case s.ch <- ev:
		default:
			select {
			case <-s.ch:
			default:
			}
			s.ch <- ev // room made above; only publish sends, under r.mu
		}
		s.closed = true
		close(s.ch)
	}
	delete(r.subs, ev.ID)
}

// Requeue queues again the runs the store holds as queued (a stopped
// lab's, oldest first), before or after Start, whatever Options.Queue
// says: they were accepted. A run whose stored config no longer decodes
// ends as failed, saying why. It returns how many runs it queued.
func (r *Runner) Requeue(ctx context.Context) (int, error) {
	runs, err := r.st.Queued(ctx)
	if err != nil {
		return 0, fmt.Errorf("requeue: %w", err)
	}
	n := 0
	for _, run := range runs {
		var err error
		if run.Kind == storage.KindShadow {
			_, err = shadow.DecodeSpec(run.Config)
		} else {
			_, err = document.DecodeConfig(run.Config)
		}
		if err != nil {
			msg := "its stored config no longer decodes with this engine: " + err.Error()
			if ferr := r.st.Finish(ctx, run.ID, storage.StatusFailed, msg); ferr != nil {
				r.log.Error("requeue: fail a run", "run", run.ID, "err", ferr)
			}
			continue
		}
		jctx, cancel := context.WithCancelCause(context.Background())
		j := &job{id: run.ID, ctx: jctx, cancel: cancel, status: storage.StatusQueued, total: run.PointsTotal}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			cancel(errShutdown)
			break
		}
		if _, dup := r.jobs[j.id]; dup {
			r.mu.Unlock()
			cancel(nil)
			continue
		}
		r.jobs[j.id] = j
		r.pending = append(r.pending, j)
		r.wake.Signal()
		r.mu.Unlock()
		n++
	}
	if n > 0 {
		r.log.Info("runs queued again after a restart", "runs", n)
	}
	return n, nil
}

// Shutdown stops taking runs and stops the workers. Queued runs stay
// queued in the store (the next runner's Requeue takes them): their
// subscribers get a last "queued" event saying so (QueuedAtShutdown), then
// the channel closes. Running sweeps may finish (and be stored as done)
// while ctx lasts; when ctx ends they are cancelled and stored as
// interrupted, or partial with the points they finished, and their
// subscribers get that final event. Pass an already cancelled context to
// interrupt them at once. Shutdown waits for the workers to stop and
// returns ctx's error when it had to interrupt a sweep.
func (r *Runner) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	queued := r.pending
	r.pending = nil
	for _, j := range queued {
		j.cancel(errShutdown)
		delete(r.jobs, j.id)
		r.publishLast(Event{ID: j.id, Status: storage.StatusQueued, Done: j.done, Total: j.total, Error: QueuedAtShutdown})
	}
	r.wake.Broadcast()
	r.mu.Unlock()
	if len(queued) > 0 {
		r.log.Info("queued runs stay queued for the next start", "runs", len(queued))
	}

	stopped := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
	}
	select {
	case <-stopped: // stopped just as ctx ended
		return nil
	default:
	}
	r.mu.Lock()
	for _, j := range r.jobs {
		j.cancel(errShutdown)
	}
	r.mu.Unlock()
	<-stopped
	return ctx.Err()
}

// work is one worker: it runs queued jobs until the queue is closed.
func (r *Runner) work() {
	for {
		r.mu.Lock()
		for len(r.pending) == 0 && !r.closed {
			r.wake.Wait()
		}
		if len(r.pending) == 0 { // closed and drained
			r.mu.Unlock()
			return
		}
		j := r.pending[0]
		r.pending = r.pending[1:]
		j.status = storage.StatusRunning
		r.mu.Unlock()
		r.run(j)
	}
}

// run runs one sweep and ends it.
func (r *Runner) run(j *job) {
	bg := context.Background()
	start := time.Now()
	if err := r.st.SetStatus(bg, j.id, storage.StatusRunning); err != nil {
		r.log.Error("run start", "run", j.id, "err", err)
	}
	stored, err := r.st.Get(bg, j.id)
	if err == nil && stored.Kind == storage.KindShadow {
		r.mu.Lock()
		j.total = ShadowTotal
		r.publish(Event{ID: j.id, Status: storage.StatusRunning, Done: j.done, Total: j.total})
		r.mu.Unlock()
		r.log.Info("replay started", "run", j.id)
		r.replay(j, stored, newProgressWriter(r, j))
		return
	}
	if err == nil {
		j.cfg, err = document.DecodeConfig(stored.Config)
	}
	if err != nil {
		r.end(j, storage.StatusFailed, "read the run's config: "+err.Error())
		return
	}
	r.mu.Lock()
	// The engine counts a replicated point's runs (Progress, Reading): a
	// streamed pass's Reading, told before the first Progress, is a share
	// of them, not of the points the run was queued with.
	j.total = len(j.cfg.Points()) * j.cfg.Replicas()
	r.publish(Event{ID: j.id, Status: storage.StatusRunning, Done: j.done, Total: j.total})
	r.mu.Unlock()
	r.log.Info("run started", "run", j.id, "points", j.total)

	prog := newProgressWriter(r, j)
	res, files, err := r.sweep(j, prog)
	prog.stop()
	if err == nil && j.ctx.Err() != nil {
		err = context.Cause(j.ctx) // cancelled after the last point: still cancelled
	}
	if err == nil {
		// Complete is not cancelled by Cancel: once the results exist, they
		// are stored whole or not at all.
		if err = r.st.Complete(bg, j.id, res, files); err == nil {
			r.finish(j, storage.StatusDone, "")
			r.log.Info("run done", "run", j.id, "points", len(res.Points), "files", len(files), "elapsed", time.Since(start).Round(time.Millisecond))
			return
		}
		r.log.Error("store results", "run", j.id, "err", err)
		r.end(j, storage.StatusFailed, "storing the results failed: "+err.Error())
		return
	}
	if res != nil && res.Partial != nil && j.ctx.Err() != nil {
		// Cancelled or interrupted after some points finished: keep them.
		why := fmt.Sprintf("cancelled by request after %d of %d points: the run keeps those", res.Partial.PointsDone, res.Partial.PointsTotal)
		if errors.Is(context.Cause(j.ctx), errShutdown) {
			why = fmt.Sprintf("the server stopped after %d of %d points: the run keeps those; re-run it for them all", res.Partial.PointsDone, res.Partial.PointsTotal)
		}
		kerr := r.st.Keep(bg, j.id, res, files, why)
		if kerr == nil {
			r.mu.Lock()
			j.done = res.Partial.PointsDone
			r.mu.Unlock()
			r.finish(j, storage.StatusPartial, why)
			r.log.Info("run partial", "run", j.id, "kept", res.Partial.PointsDone, "total", res.Partial.PointsTotal)
			return
		}
		r.log.Error("store partial results", "run", j.id, "err", kerr)
	}
	switch cause := context.Cause(j.ctx); {
	case j.ctx.Err() != nil && errors.Is(cause, errCancelled):
		r.end(j, storage.StatusCancelled, CancelledError)
		r.log.Info("run cancelled", "run", j.id, "done", j.done, "total", j.total)
	case j.ctx.Err() != nil && errors.Is(cause, errShutdown):
		r.end(j, storage.StatusInterrupted, storage.InterruptedError)
		r.log.Info("run interrupted", "run", j.id, "done", j.done, "total", j.total)
	default:
		r.end(j, storage.StatusFailed, err.Error())
		r.log.Warn("run failed", "run", j.id, "err", err)
	}
}

// sweep runs the engine and writes the output files. A panic on this
// goroutine (config expansion, output writing) fails this run instead of
// the server; the engine's own worker goroutines are not covered.
func (r *Runner) sweep(j *job, prog *progressWriter) (res *experiments.Result, files []output.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("sweep panicked", "run", j.id, "panic", p, "stack", string(debug.Stack()))
			res, files, err = nil, nil, fmt.Errorf("internal error: %v", p)
		}
	}()
	opt := sweep.Options{Workers: r.opt.EngineWorkers, Progress: prog.report, Reading: prog.reading, MaxDecisions: experiments.MaxWork, Traces: r.opt.Traces}
	if r.opt.Traces != nil && r.opt.NewSpill != nil {
		spill, remove := r.opt.NewSpill()
		defer remove()
		opt.Spill = spill
	}
	res, err = sweep.Run(j.ctx, j.cfg, opt)
	if err != nil && res != nil && res.Partial != nil {
		// Cut short with points finished: their files, and still err.
		if files, ferr := output.Files(res); ferr == nil {
			return res, files, err
		}
	}
	if err != nil {
		return nil, nil, err
	}
	files, err = output.Files(res)
	return res, files, err
}

// end stores a failed, cancelled or interrupted end, then announces it.
func (r *Runner) end(j *job, status, errText string) {
	if err := r.st.Finish(context.Background(), j.id, status, errText); err != nil {
		r.log.Error("store run end", "run", j.id, "status", status, "err", err)
	}
	r.finish(j, status, errText)
}

// finish removes an ended job and sends its final event.
func (r *Runner) finish(j *job, status, errText string) {
	j.cancel(nil) // release the context's resources
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.jobs, j.id)
	done := j.done
	if status == storage.StatusDone {
		done = j.total
	}
	r.publish(Event{ID: j.id, Status: status, Done: done, Total: j.total, Error: errText})
}

// progressWriter throttles a sweep's progress: the engine's callback only
// records the count; a goroutine sends events and store updates on a tick,
// so a slow database never stalls the engine.
type progressWriter struct {
	r         *Runner
	j         *job
	ping      chan struct{} // points done: to subscribers and the store
	pingEvent chan struct{} // a streamed pass read further: to subscribers
	quit      chan struct{}
	wg        sync.WaitGroup
}

func newProgressWriter(r *Runner, j *job) *progressWriter {
	p := &progressWriter{r: r, j: j, ping: make(chan struct{}, 1), pingEvent: make(chan struct{}, 1), quit: make(chan struct{})}
	p.wg.Go(p.loop)
	return p
}

// report is the engine's Progress callback.
func (p *progressWriter) report(done, total int) {
	p.r.mu.Lock()
	p.j.done, p.j.total, p.j.reading = done, total, 0
	p.r.mu.Unlock()
	nudge(p.ping)
}

// reading is the engine's Reading callback: it goes to subscribers only
// (the store keeps whole points).
func (p *progressWriter) reading(done, total, points int, read float64) {
	p.r.mu.Lock()
	p.j.done, p.j.total, p.j.reading = done, total, float64(points)*read
	p.r.mu.Unlock()
	nudge(p.pingEvent)
}

// nudge wakes the loop on ch without waiting.
func nudge(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (p *progressWriter) loop() {
	tick := time.NewTicker(ProgressEventEvery)
	defer tick.Stop()
	var (
		eventDue, storeDue bool
		lastStore          time.Time
	)
	for {
		select {
		case <-p.quit:
			if storeDue { // the last count, so an ended run shows how far it got
				p.store()
			}
			return
		case <-p.ping:
			eventDue, storeDue = true, true
			continue
		case <-p.pingEvent:
			eventDue = true
			continue
		case <-tick.C:
		}
		if !eventDue && !storeDue {
			continue
		}
		if eventDue {
			p.r.mu.Lock()
			p.r.publish(Event{ID: p.j.id, Status: storage.StatusRunning, Done: p.j.done, Total: p.j.total, Reading: p.j.reading})
			p.r.mu.Unlock()
			eventDue = false
		}
		if storeDue && time.Since(lastStore) >= ProgressStoreEvery {
			storeDue = false
			lastStore = time.Now()
			p.store()
		}
	}
}

// store writes the current count to the store.
func (p *progressWriter) store() {
	p.r.mu.Lock()
	done, total := p.j.done, p.j.total
	p.r.mu.Unlock()
	if err := p.r.st.SetProgress(context.Background(), p.j.id, done, total); err != nil && !errors.Is(err, storage.ErrFinished) {
		p.r.log.Error("store progress", "run", p.j.id, "err", err)
	}
}

// stop ends the loop and waits for it, so no progress write lands after
// the run's end.
func (p *progressWriter) stop() {
	close(p.quit)
	p.wg.Wait()
}
