package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/seedlab"
	"github.com/ratelab/ratelab/storage"
)

func newStore(t *testing.T) *storage.Store {
	t.Helper()
	st, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

func newRunner(t *testing.T, st *storage.Store, opt Options) *Runner {
	t.Helper()
	if opt.Logger == nil {
		opt.Logger = testLogger(t)
	}
	if opt.EngineWorkers == 0 {
		opt.EngineWorkers = 1 // the test machine is shared
	}
	r := New(st, opt)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // interrupt whatever still runs
		r.Shutdown(ctx)
	})
	return r
}

func tokenVsLeakyConfig(t *testing.T) *experiments.Config {
	t.Helper()
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// slowConfig has 10,000 points over 20,000 arrivals: minutes of work on one
// core, so it is still running when a test cancels or interrupts it.
func slowConfig(t *testing.T) *experiments.Config {
	t.Helper()
	rates := make([]string, 1000)
	for i := range rates {
		rates[i] = fmt.Sprint(100 + i)
	}
	doc := `{"version": 1, "name": "slow", "seed": 3,
	  "workload": {"duration_ms": 10000, "parts": [{"type": "poisson", "rate_rps": 2000}]},
	  "server": {"workers": 4, "service_ms": 2, "deadline_ms": 100},
	  "limiters": [{"type": "sliding-window-log", "limit": [` + strings.Join(rates[:100], ",") + `], "window_ms": [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]},
	               {"type": "token-bucket", "rate_rps": [` + strings.Join(rates, ",") + `], "burst": [1, 2, 4, 8, 16, 32, 64, 128, 256]}]}`
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cfg.Points()); n < 9000 {
		t.Fatalf("slow config has %d points", n)
	}
	return cfg
}

// waitFinal reads events until the final one; it fails the test when the
// channel closes first or the deadline passes.
func waitFinal(t *testing.T, events <-chan Event, timeout time.Duration) (Event, []Event) {
	t.Helper()
	var seen []Event
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("events closed without a final event; saw %v", seen)
			}
			seen = append(seen, ev)
			if ev.Final() {
				if _, open := <-events; open {
					t.Error("events not closed after the final event")
				}
				return ev, seen
			}
		case <-deadline:
			t.Fatalf("no final event in %v; saw %v", timeout, seen)
		}
	}
}

func TestPost3PresetRunsToDone(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{})
	r.Start()
	cfg := tokenVsLeakyConfig(t)
	run, err := r.Submit(t.Context(), cfg, "seed", "")
	if err != nil {
		t.Fatal(err)
	}
	if !storage.ValidID(run.ID) || run.Status != storage.StatusQueued || run.PointsTotal != 20 {
		t.Fatalf("submitted run: %+v", run)
	}
	events, unsubscribe := r.Subscribe(run.ID)
	defer unsubscribe()
	final, seen := waitFinal(t, events, time.Minute)
	if final.Status != storage.StatusDone || final.Done != 20 || final.Total != 20 || final.Error != "" || final.ID != run.ID {
		t.Fatalf("final event %+v (events %v)", final, seen)
	}

	got, err := st.Get(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != storage.StatusDone || got.PointsDone != 20 || got.FinishedAt == nil || got.Name != "seed" {
		t.Errorf("stored run %+v", got)
	}
	if want := []string{"token-bucket", "leaky-bucket"}; strings.Join(got.Limiters, ",") != strings.Join(want, ",") {
		t.Errorf("limiters %v, want %v", got.Limiters, want)
	}
	f, err := st.File(t.Context(), run.ID, seedlab.Post3BurstSweepFile)
	if err != nil {
		t.Fatal(err)
	}
	if f.SHA256 != seedlab.Post3BurstSweepSHA256 || (output.File{Data: f.Data}).SHA256() != seedlab.Post3BurstSweepSHA256 {
		t.Errorf("bp-post3-burst-sweep.csv sha256 %s, want %s", f.SHA256, seedlab.Post3BurstSweepSHA256)
	}
	// Every stored file is what output.Files writes for the same config.
	res, err := sweep.Run(t.Context(), cfg, sweep.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	want, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	files, err := st.Files(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Fatalf("%d files stored, want %d", len(files), len(want))
	}
	for i, w := range want {
		if files[i].Name != w.Name || files[i].SHA256 != w.SHA256() {
			t.Errorf("file %d: %s %s, want %s %s", i, files[i].Name, files[i].SHA256, w.Name, w.SHA256())
		}
	}

	// A late subscriber gets the final state at once.
	late, unsub := r.Subscribe(run.ID)
	defer unsub()
	if ev, _ := waitFinal(t, late, 10*time.Second); ev.Status != storage.StatusDone || ev.Done != 20 {
		t.Errorf("late subscriber: %+v", ev)
	}
	// An unknown run: closed at once.
	if _, ok := <-func() <-chan Event { ch, _ := r.Subscribe("nosuchrunxxx"); return ch }(); ok {
		t.Error("unknown run: got an event")
	}
	if r.Cancel(run.ID) {
		t.Error("Cancel of a done run reported true")
	}
}

func TestQueueFullStoresNothing(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{Workers: 1, Queue: 2})
	// Not started: nothing leaves the queue.
	cfg := tokenVsLeakyConfig(t)
	var ids []string
	for range 2 {
		run, err := r.Submit(t.Context(), cfg, "fits", "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}
	if w, n := r.Queued(); w != 2 || n != 0 {
		t.Errorf("Queued: %d waiting, %d running; want 2, 0", w, n)
	}
	run, err := r.Submit(t.Context(), cfg, "too many", "")
	if !errors.Is(err, ErrQueueFull) || run != nil {
		t.Fatalf("third Submit: %v, %v; want ErrQueueFull", run, err)
	}
	_, total, err := st.List(t.Context(), 10, 0)
	if err != nil || total != 2 {
		t.Fatalf("%d runs stored (%v), want 2", total, err)
	}
	// Cancelling a queued run frees its place.
	if !r.Cancel(ids[0]) {
		t.Fatal("Cancel of a queued run reported false")
	}
	if got, _ := st.Get(t.Context(), ids[0]); got.Status != storage.StatusCancelled || got.Error != CancelledError {
		t.Errorf("cancelled queued run: %s %q", got.Status, got.Error)
	}
	if _, err := r.Submit(t.Context(), cfg, "fits again", ""); err != nil {
		t.Fatalf("Submit after a cancel: %v", err)
	}

	// Shutdown leaves what is still queued queued (the next start takes
	// it again) and refuses new runs.
	if err := r.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	runs, _, err := st.List(t.Context(), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		want := storage.StatusQueued
		if run.ID == ids[0] {
			want = storage.StatusCancelled
		}
		if run.Status != want {
			t.Errorf("run %s %q: %s, want %s", run.ID, run.Name, run.Status, want)
		}
	}
	if _, err := r.Submit(t.Context(), cfg, "late", ""); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Shutdown: %v, want ErrClosed", err)
	}
}

func TestCancelRunningSweep(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{})
	r.Start()
	run, err := r.Submit(t.Context(), slowConfig(t), "slow", "")
	if err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := r.Subscribe(run.ID)
	defer unsubscribe()
	// Wait until it runs and has done some points.
	deadline := time.After(time.Minute)
	for progressed := false; !progressed; {
		select {
		case ev := <-events:
			if ev.Final() {
				t.Fatalf("ended before cancel: %+v", ev)
			}
			progressed = ev.Status == storage.StatusRunning && ev.Done > 0
		case <-deadline:
			t.Fatal("no progress in a minute")
		}
	}
	// Progress reached the store too (throttled).
	waitStored(t, st, run.ID, func(r *storage.Run) bool { return r.Status == storage.StatusRunning && r.PointsDone > 0 })

	start := time.Now()
	if !r.Cancel(run.ID) {
		t.Fatal("Cancel reported false for a running sweep")
	}
	final, _ := waitFinal(t, events, 30*time.Second)
	t.Logf("cancelled after %d/%d points; ended %v after Cancel", final.Done, final.Total, time.Since(start))
	// The points that finished are kept: the run ends partial.
	if final.Status != storage.StatusPartial || !strings.HasPrefix(final.Error, "cancelled by request after ") || final.Done == 0 || final.Done >= final.Total {
		t.Fatalf("final event %+v", final)
	}
	got, err := st.Get(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != storage.StatusPartial || got.FinishedAt == nil || got.PointsDone != final.Done || got.PointsTotal != final.Total || got.StoredBytes == 0 {
		t.Errorf("stored run: %s, %d of %d points done (final event %d), finished %v, %d bytes", got.Status, got.PointsDone, got.PointsTotal, final.Done, got.FinishedAt, got.StoredBytes)
	}
	if w, n := r.Queued(); w != 0 || n != 0 {
		t.Errorf("Queued after the cancel: %d waiting, %d running", w, n)
	}
	if files, err := st.Files(t.Context(), run.ID); err != nil || len(files) == 0 {
		t.Errorf("a partial run has no files: %v, %v", files, err)
	}
	res, err := st.Result(t.Context(), run.ID)
	if err != nil || res.Partial == nil || len(res.Points) != got.PointsDone || res.Partial.PointsTotal != got.PointsTotal {
		t.Fatalf("a partial run's result: %v", err)
	}
	for i, p := range res.Points {
		if p.Index != i {
			t.Fatalf("partial point %d has index %d", i, p.Index)
		}
	}
}

func waitStored(t *testing.T, st *storage.Store, id string, ok func(*storage.Run) bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		got, err := st.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stored run never got there: %+v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestShutdownInterruptsRunningSweep(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{Workers: 1, Queue: 4})
	r.Start()
	slow, err := r.Submit(t.Context(), slowConfig(t), "slow", "")
	if err != nil {
		t.Fatal(err)
	}
	queued, err := r.Submit(t.Context(), tokenVsLeakyConfig(t), "behind", "")
	if err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := r.Subscribe(slow.ID)
	defer unsubscribe()
	queuedEvents, unsubscribeQueued := r.Subscribe(queued.ID)
	defer unsubscribeQueued()
	waitStored(t, st, slow.ID, func(r *storage.Run) bool { return r.Status == storage.StatusRunning && r.PointsDone > 0 })

	// Graceful for 50 ms: not enough for the slow sweep.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := r.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v, want DeadlineExceeded (it had to interrupt)", err)
	}
	// The running sweep keeps the points that finished (partial); the
	// queued one stays queued, and its subscribers hear so last.
	final, _ := waitFinal(t, events, 10*time.Second)
	if final.Status != storage.StatusPartial || !strings.HasPrefix(final.Error, "the server stopped after ") || final.Done == 0 {
		t.Errorf("final event %+v, want partial with the points kept", final)
	}
	var last Event
	for ev := range queuedEvents {
		last = ev
	}
	if last.Status != storage.StatusQueued || last.Error != QueuedAtShutdown {
		t.Errorf("the queued run's last event %+v, want queued: %q", last, QueuedAtShutdown)
	}
	for id, want := range map[string]string{slow.ID: storage.StatusPartial, queued.ID: storage.StatusQueued} {
		got, err := st.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != want {
			t.Errorf("run %s: %s %q, want %s", got.Name, got.Status, got.Error, want)
		}
	}
}

func TestShutdownLetsSweepFinish(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{})
	r.Start()
	run, err := r.Submit(t.Context(), tokenVsLeakyConfig(t), "seed", "")
	if err != nil {
		t.Fatal(err)
	}
	waitStored(t, st, run.ID, func(r *storage.Run) bool { return r.Status != storage.StatusQueued })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := r.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got, _ := st.Get(t.Context(), run.ID); got.Status != storage.StatusDone {
		t.Errorf("run %s after a patient shutdown, want done", got.Status)
	}
}

func TestEngineErrorFails(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{})
	r.Start()
	cfg := tokenVsLeakyConfig(t)
	// A report naming a limiter the config lacks passes no validation: build
	// one by hand, as a caller that skipped DecodeConfig could.
	bad := *cfg
	bad.Reports = []experiments.Report{{Type: experiments.ReportSeries, File: "x.csv", Columns: []experiments.ReportColumn{
		{Header: "r", Value: "released_rps", Limiter: new(int(7)), Swept: new(float64(1))},
	}}}
	run, err := r.Submit(t.Context(), &bad, "bad", "")
	if err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := r.Subscribe(run.ID)
	defer unsubscribe()
	final, _ := waitFinal(t, events, time.Minute)
	if final.Status != storage.StatusFailed || final.Error == "" {
		t.Fatalf("final event %+v, want failed with an error", final)
	}
	got, _ := st.Get(t.Context(), run.ID)
	if got.Status != storage.StatusFailed || got.Error != final.Error {
		t.Errorf("stored: %s %q; event error %q", got.Status, got.Error, final.Error)
	}
	t.Logf("failure text: %s", got.Error)
}

func TestSlowSubscriberGetsFinal(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{Workers: 1})
	// Several runs queued, so plenty of status events; the subscriber reads
	// nothing until the end.
	var ids []string
	for range 3 {
		run, err := r.Submit(t.Context(), tokenVsLeakyConfig(t), "seed", "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}
	var chans []<-chan Event
	for _, id := range ids {
		for range 3 {
			ch, unsub := r.Subscribe(id)
			defer unsub()
			chans = append(chans, ch)
		}
	}
	r.Start()
	for _, id := range ids {
		waitStored(t, st, id, func(r *storage.Run) bool { return storage.Final(r.Status) })
	}
	for i, ch := range chans {
		var last Event
		n := 0
		for ev := range ch { // closed after the final event
			last = ev
			n++
		}
		if last.Status != storage.StatusDone || last.ID != ids[i/3] {
			t.Errorf("subscriber %d: last of %d events %+v, want done", i, n, last)
		}
	}
}

func TestUnsubscribeStopsEvents(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{})
	run, err := r.Submit(t.Context(), tokenVsLeakyConfig(t), "seed", "")
	if err != nil {
		t.Fatal(err)
	}
	ch, unsub := r.Subscribe(run.ID)
	if ev := <-ch; ev.Status != storage.StatusQueued {
		t.Errorf("first event %+v, want the queued state", ev)
	}
	unsub()
	unsub() // twice is fine
	if _, ok := <-ch; ok {
		t.Error("event after unsubscribe")
	}
	r.Start()
	waitStored(t, st, run.ID, func(r *storage.Run) bool { return r.Status == storage.StatusDone })
}

func TestFullSubscriberDropsProgressButGetsFinal(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{})
	run, err := r.Submit(t.Context(), tokenVsLeakyConfig(t), "seed", "")
	if err != nil {
		t.Fatal(err)
	}
	ch, unsub := r.Subscribe(run.ID)
	defer unsub()
	// A subscriber that reads nothing while 100 progress events go out.
	r.mu.Lock()
	for i := range 100 {
		r.publish(Event{ID: run.ID, Status: storage.StatusRunning, Done: i, Total: 100})
	}
	r.mu.Unlock()
	if len(ch) != subBuffer {
		t.Fatalf("buffered %d events, want a full buffer of %d", len(ch), subBuffer)
	}
	if !r.Cancel(run.ID) {
		t.Fatal("Cancel of a queued run reported false")
	}
	var got []Event
	for ev := range ch {
		got = append(got, ev)
	}
	if len(got) != subBuffer {
		t.Errorf("%d events, want %d", len(got), subBuffer)
	}
	if last := got[len(got)-1]; last.Status != storage.StatusCancelled {
		t.Errorf("last event %+v, want the final cancelled one", last)
	}
	for i := 1; i < len(got)-1; i++ {
		if got[i].Done < got[i-1].Done {
			t.Errorf("events out of order: %v", got)
		}
	}
}

// TestStreamedRunSaysHowFarItRead: a load too large to hold (8 million
// arrivals, streamed a batch at a time to its points, which all run at
// once) finishes no point until its end; meanwhile its events carry
// Reading, how far the pass has got in points, so Done + Reading rises
// through the run and never passes Total.
func TestStreamedRunSaysHowFarItRead(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{})
	r.Start()
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 3,
	  "workload": {"duration_ms": 4000000, "parts": [{"type": "poisson", "rate_rps": 2000}]},
	  "server": {"workers": 4, "service_ms": 2, "deadline_ms": 100},
	  "limiters": [{"type": "token-bucket", "rate_rps": [1500, 2500], "burst": 20}]}`))
	if err != nil {
		t.Fatal(err)
	}
	run, err := r.Submit(t.Context(), cfg, "streamed", "")
	if err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := r.Subscribe(run.ID)
	defer unsubscribe()
	final, seen := waitFinal(t, events, 5*time.Minute)
	if final.Status != storage.StatusDone || final.Done != 2 || final.Reading != 0 {
		t.Fatalf("final event %+v", final)
	}
	reading, last := 0, 0.0
	for _, ev := range seen {
		at := float64(ev.Done) + ev.Reading
		if at < last || at > float64(ev.Total) || ev.Reading < 0 || ev.Reading > 2 {
			t.Fatalf("event %+v after %g points' worth: want done + reading rising, within 0 and total", ev, last)
		}
		last = at
		if ev.Reading > 0 && ev.Reading < 2 {
			reading++
		}
	}
	if reading == 0 {
		t.Fatalf("no event said how far the stream was read: %v", seen)
	}
}

// TestRunningEventsCountRuns: the engine counts a replicated point's runs
// (Progress, and Reading, which a streamed pass tells before any run
// ends), so a running run's events give that total from the start: a
// first event of 0 / 1 points, then 1 / 3, had a streamed pass's reading
// read as a share of 1 (the page said 90% done, then 33%).
func TestRunningEventsCountRuns(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{})
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 3, "replications": 3,
	  "workload": {"duration_ms": 2000, "parts": [{"type": "poisson", "rate_rps": 200}]},
	  "server": {"workers": 1, "service_ms": 2, "deadline_ms": 100},
	  "limiters": [{"type": "token-bucket", "rate_rps": 150, "burst": 20}]}`))
	if err != nil {
		t.Fatal(err)
	}
	run, err := r.Submit(t.Context(), cfg, "replicated", "")
	if err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := r.Subscribe(run.ID) // before the run starts: every event
	defer unsubscribe()
	r.Start()
	final, seen := waitFinal(t, events, time.Minute)
	if final.Status != storage.StatusDone {
		t.Fatalf("final event %+v", final)
	}
	running := 0
	for _, ev := range seen {
		if ev.Status != storage.StatusRunning {
			continue
		}
		running++
		if ev.Total != 3 {
			t.Errorf("running event %+v: want a total of 3 runs (1 point × 3 replications)", ev)
		}
	}
	if running == 0 {
		t.Fatalf("no running event: %v", seen)
	}
}

// TestQueuedRunsComeBackQueued: runs a stopped lab had queued (a shutdown,
// or a crash: the store says queued either way) are queued again by the
// next runner's Requeue, oldest first, and run to done; a running one the
// crash left is interrupted by MarkInterrupted, not run again.
func TestQueuedRunsComeBackQueued(t *testing.T) {
	st := newStore(t)
	first := New(st, Options{Workers: 1, Queue: 4, Logger: testLogger(t)}) // never started: a crash before it ran them
	var ids []string
	for i := range 3 {
		run, err := first.Submit(t.Context(), tokenVsLeakyConfig(t), fmt.Sprintf("waiting %d", i), "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}
	if err := st.SetStatus(t.Context(), ids[2], storage.StatusRunning); err != nil { // the one the crash left running
		t.Fatal(err)
	}
	if n, err := st.MarkInterrupted(t.Context()); err != nil || n != 1 {
		t.Fatalf("MarkInterrupted: %d, %v; want 1", n, err)
	}
	second := newRunner(t, st, Options{Workers: 1, Queue: 1})
	n, err := second.Requeue(t.Context())
	if err != nil || n != 2 {
		t.Fatalf("Requeue: %d, %v; want 2", n, err)
	}
	if w, _ := second.Queued(); w != 2 {
		t.Errorf("Queued: %d waiting, want 2 (accepted runs pass the queue's limit)", w)
	}
	second.Start()
	for _, id := range ids[:2] {
		waitStored(t, st, id, func(r *storage.Run) bool { return r.Status == storage.StatusDone })
	}
	if got, _ := st.Get(t.Context(), ids[2]); got.Status != storage.StatusInterrupted {
		t.Errorf("the run left running: %s, want interrupted", got.Status)
	}
}
