package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
)

// heartbeat keeps idle event streams open through proxies.
const heartbeat = 15 * time.Second

// ShutdownEventWait bounds how long an event stream waits at shutdown for
// its run's last event (the runner's grace for a running sweep is 20 s).
const ShutdownEventWait = 25 * time.Second

// runEvents streams a run's progress as Server-Sent Events: an event
// "progress" with {"id","status","done","total","error"} for every update
// the runner publishes (the first one at once), ending after the run's final
// status, or when the client leaves. At shutdown (Options.Done) a stream
// waits, at most ShutdownEventWait, for the run's last event: a queued
// run's "queued" (it stays queued, runner.QueuedAtShutdown), a running
// one's "interrupted" or "partial" with the points it kept, or "done"
// when it finished in the grace period; so the page's last view is true.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	run := s.runOr404(w, r)
	if run == nil {
		return
	}
	client := clientID(r)
	if !s.streams.enter(client) {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
		s.fail(w, r, http.StatusTooManyRequests, "Too many event streams",
			fmt.Sprintf("the lab keeps at most %d event streams open for one client and %d in all: close a run page, or try again in %d seconds", s.streams.perClient, s.streams.all, RetryAfterSeconds))
		return
	}
	defer s.streams.leave(client)
	rc := http.NewResponseController(w)
	// Event streams outlive the server's write timeout.
	if err := rc.SetWriteDeadline(time.Time{}); err != nil && err != http.ErrNotSupported {
		s.log.Warn("event stream: clear write deadline", "err", err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	send := func(ev runner.Event) error {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: progress\ndata: %s\n\n", b); err != nil {
			return err
		}
		return rc.Flush()
	}
	events, unsubscribe := s.runner.Subscribe(run.ID)
	defer unsubscribe()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	sent := false
	done := s.done
	var giveUp <-chan time.Time
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				if !sent {
					// The runner knew nothing: report the stored state.
					if cur, err := s.store.Get(r.Context(), run.ID); err == nil {
						_ = send(runner.Event{ID: cur.ID, Status: cur.Status, Done: cur.PointsDone, Total: cur.PointsTotal, Error: cur.Error})
					}
				}
				return
			}
			sent = true
			if err := send(ev); err != nil || storage.Final(ev.Status) {
				return
			}
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-done:
			// Shutting down: the runner sends this run's last event soon.
			done = nil
			drain := time.NewTimer(ShutdownEventWait)
			defer drain.Stop()
			giveUp = drain.C
		case <-giveUp:
			return
		}
	}
}
