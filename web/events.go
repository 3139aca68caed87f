package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
)

// heartbeat keeps idle event streams open through proxies.
const heartbeat = 15 * time.Second

// runEvents streams a run's progress as Server-Sent Events: an event
// "progress" with {"id","status","done","total","error"} for every update
// the runner publishes (the first one at once), ending after the run's final
// status. The stream ends early at shutdown or when the client leaves.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	run := s.runOr404(w, r)
	if run == nil {
		return
	}
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
		case <-s.done:
			return
		}
	}
}
