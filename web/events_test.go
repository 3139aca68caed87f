package web

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

// TestEvents reads the event stream of a run over a real connection.
func TestEvents(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	ts := httptest.NewServer(l.srv)
	defer ts.Close()
	id := runIDFrom(t, l.postForm("/runs", formValuesOf(form.Default())))
	resp, err := http.Get(ts.URL + "/runs/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	var last struct {
		Status      string
		Done, Total int
	}
	sc := bufio.NewScanner(resp.Body)
	events := 0
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if err := json.Unmarshal([]byte(data), &last); err != nil {
				t.Fatal(err)
			}
			events++
		}
	}
	if events == 0 || last.Status != storage.StatusDone || last.Done != last.Total || last.Total != 7 {
		t.Errorf("%d events, last %+v", events, last)
	}
	if w := l.get("/runs/aaaaaaaaaaaa/events"); w.Code != http.StatusNotFound {
		t.Errorf("events of an unknown run: %d", w.Code)
	}
}

// TestEventsAtShutdown: when the lab stops, each event stream sends its
// run's last event before it ends: "queued" (it stays queued, and says so)
// for a queued run, "partial" with the points kept for a running one. The
// client's last view is never "running 51/1000".
func TestEventsAtShutdown(t *testing.T) {
	t.Parallel()
	bursts := make([]string, 400)
	for i := range bursts {
		bursts[i] = strconv.Itoa(i + 1)
	}
	slow := `{"version":1,"seed":1,"workload":{"duration_ms":60000,"parts":[{"type":"constant","client":"c","rate_rps":2000}]},"limiters":[{"type":"token-bucket","rate_rps":100,"burst":[` + strings.Join(bursts, ",") + `]}]}`
	for _, c := range []struct {
		name, doc, status string
		start             bool
	}{{"queued", goodDoc, storage.StatusQueued, false}, {"running", slow, storage.StatusPartial, true}} {
		t.Run(c.name, func(t *testing.T) {
			l := newLab(t, c.start, 4)
			done := make(chan struct{})
			srv := New(l.store, l.runner, Options{Logger: slog.New(slog.DiscardHandler), Done: done})
			ts := httptest.NewServer(srv)
			defer ts.Close()
			w := post(l, "/api/runs", "application/json", c.doc, nil)
			if w.Code != http.StatusAccepted {
				t.Fatalf("submit: %d %s", w.Code, w.Body)
			}
			id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
			resp, err := http.Get(ts.URL + "/runs/" + id + "/events")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			events := make(chan runner.Event, 100)
			go func() {
				defer close(events)
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
						var ev runner.Event
						if json.Unmarshal([]byte(data), &ev) == nil {
							events <- ev
						}
					}
				}
			}()
			deadline := time.After(60 * time.Second)
			for started := false; !started; {
				select {
				case ev := <-events:
					started = ev.Status == storage.StatusQueued && !c.start || ev.Status == storage.StatusRunning && ev.Done > 0
				case <-deadline:
					t.Fatal("no first event")
				}
			}
			// The lab stops as lab serve stops it: the streams are told,
			// the runner interrupts at once.
			close(done)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			l.runner.Shutdown(ctx)
			var last runner.Event
			for ev := range events {
				last = ev
			}
			if last.Status != c.status {
				t.Fatalf("last event %+v, want %s", last, c.status)
			}
			if c.status == storage.StatusQueued && last.Error != runner.QueuedAtShutdown {
				t.Errorf("the queued run's last event says %q", last.Error)
			}
			if c.status == storage.StatusPartial && (last.Done == 0 || !strings.Contains(last.Error, "the server stopped after")) {
				t.Errorf("the running run's last event %+v: want the points kept", last)
			}
		})
	}
}
