package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/shadow"
	"github.com/ratelab/ratelab/storage"
)

// ShadowTotal is a replay's progress total: it counts thousandths of the
// log's bytes read.
const ShadowTotal = 1000

// Logs are the files a shadow replay reads (lab serve: the --traces
// directory's files by name, and the uploads), and where an upload is
// written. cmd/lab gives them; nil: the lab replays no logs.
type Logs interface {
	// Open opens a log by name, decompressed, telling its size and how
	// far it has been read.
	Open(name string) (*LogFile, error)
	// Exists reports whether a log of that name is there.
	Exists(name string) bool
	// Create starts an upload named after base: the log's name, the file
	// to write it to, and abort, which removes it (after a refused
	// upload).
	Create(base string) (name string, w io.WriteCloser, abort func(), err error)
	// Remove removes an uploaded log (one Create named) that no stored
	// run reads any more; any other log (a --traces file, the user's own)
	// stays, and Remove returns nil. A log already gone is no error.
	Remove(name string) error
}

// LogFile is an open log: its text (decompressed), its size on disk,
// and, as it is read, the bytes read of it (Position) and their sha256 and
// count as an experiments.Input (Input: the whole file's once read to the
// end).
type LogFile struct {
	io.ReadCloser
	Size     int64
	Position func() int64
	Input    func() experiments.Input
}

// SubmitShadow stores a replay as a new queued run of kind shadow (its
// document, sp.JSON(), as its config) and queues it, as Submit does a
// sweep. The log must exist (Logs.Exists), else a *TraceError at "log".
func (r *Runner) SubmitShadow(ctx context.Context, sp *shadow.Spec, name, rerunOf string) (*storage.Run, error) {
	if r.opt.Logs == nil || !r.opt.Logs.Exists(sp.Log) {
		e := &TraceError{}
		e.Errs.Add("log", "%q is not one of the lab's logs", sp.Log)
		return nil, e
	}
	run := &storage.Run{Name: name, Status: storage.StatusQueued, PointsTotal: ShadowTotal, Config: sp.JSON(),
		EngineVersion: experiments.EngineVersion, RerunOf: rerunOf, Kind: storage.KindShadow,
		Limiters: []string{"shadow replay: " + sp.Format + " log, " + configFormat(sp) + " config"}}
	return r.queue(ctx, run)
}

func configFormat(sp *shadow.Spec) string {
	if sp.ConfigFormat != "" {
		return sp.ConfigFormat
	}
	return shadow.DetectConfigFormat(sp.Config)
}

// Logs are the runner's logs (nil without).
func (r *Runner) Logs() Logs { return r.opt.Logs }

// replay runs a shadow run: the log read through the imported config,
// its files stored (CompleteFiles); cancelled or interrupted, the files of
// what was read, as partial. A log with too many bad lines fails it,
// storing nothing, naming the first bad lines.
func (r *Runner) replay(j *job, stored *storage.Run, prog *progressWriter) {
	bg := context.Background()
	start := time.Now()
	res, files, err := r.replayFiles(j, stored, prog)
	prog.stop()
	cause := context.Cause(j.ctx)
	switch {
	case err == nil: // the whole log read: done, even if cancelled just after
		err = r.st.CompleteFiles(bg, j.id, false, "", ShadowTotal, ShadowTotal, files)
		if err == nil {
			r.finish(j, storage.StatusDone, "")
			r.log.Info("replay done", "run", j.id, "requests", res.Requests, "elapsed", time.Since(start).Round(time.Millisecond))
			return
		}
	case errors.Is(err, shadow.ErrStopped) && files != nil:
		why := fmt.Sprintf("cancelled by request after %d lines: the run keeps the verdict of those", res.Log.Lines)
		if errors.Is(cause, errShutdown) {
			why = fmt.Sprintf("the server stopped after %d lines: the run keeps the verdict of those; re-run it for the whole log", res.Log.Lines)
		}
		r.mu.Lock()
		done := j.done
		r.mu.Unlock()
		if err = r.st.CompleteFiles(bg, j.id, true, why, done, ShadowTotal, files); err == nil {
			r.finish(j, storage.StatusPartial, why)
			r.log.Info("replay partial", "run", j.id, "lines", res.Log.Lines)
			return
		}
	}
	switch {
	case j.ctx.Err() != nil && errors.Is(cause, errCancelled):
		r.end(j, storage.StatusCancelled, CancelledError)
	case j.ctx.Err() != nil && errors.Is(cause, errShutdown):
		r.end(j, storage.StatusInterrupted, storage.InterruptedError)
	default:
		r.end(j, storage.StatusFailed, err.Error())
		r.log.Warn("replay failed", "run", j.id, "err", err)
	}
}

func (r *Runner) replayFiles(j *job, stored *storage.Run, prog *progressWriter) (res *shadow.Result, files []output.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("replay panicked", "run", j.id, "panic", p, "stack", string(debug.Stack()))
			res, files, err = nil, nil, fmt.Errorf("internal error: %v", p)
		}
	}()
	sp, err := shadow.DecodeSpec(stored.Config)
	if err != nil {
		return nil, nil, err
	}
	opt, errs := sp.Prepare()
	if len(errs) > 0 {
		return nil, nil, errs.Err()
	}
	if sp.LogTZ != "" {
		if opt.Log.Location, err = time.LoadLocation(sp.LogTZ); err != nil {
			return nil, nil, fmt.Errorf("log_tz: %w", err)
		}
	}
	if r.opt.Logs == nil {
		return nil, nil, errors.New("this lab has no logs (lab serve)")
	}
	lf, err := r.opt.Logs.Open(sp.Log)
	if err != nil {
		return nil, nil, fmt.Errorf("open the log: %w", err)
	}
	defer lf.Close()
	opt.Stopped = func() bool { return j.ctx.Err() != nil }
	var wg sync.WaitGroup
	quit := make(chan struct{})
	wg.Go(func() {
		tick := time.NewTicker(ProgressEventEvery)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				if lf.Size > 0 {
					prog.report(int(min(lf.Position()*ShadowTotal/lf.Size, ShadowTotal-1)), ShadowTotal)
				}
			}
		}
	})
	defer func() {
		close(quit)
		wg.Wait()
	}()
	rp, err := shadow.Open(lf, opt)
	if err != nil {
		return nil, nil, err
	}
	res, err = rp.Run()
	var tooMany *shadow.TooManyBad
	if errors.As(err, &tooMany) {
		var b strings.Builder
		b.WriteString(err.Error())
		for _, bl := range tooMany.Stats.FirstBad {
			fmt.Fprintf(&b, "\nline %d: %s: %s", bl.Line, bl.Reason, bl.Text)
		}
		return nil, nil, errors.New(b.String())
	}
	if err != nil && !errors.Is(err, shadow.ErrStopped) {
		return nil, nil, err
	}
	where := opt.Import.Format + " " + opt.Import.Where
	fs, ferr := res.Files(sp, where, lf.Input())
	if ferr != nil {
		return nil, nil, ferr
	}
	return res, fs, err
}
