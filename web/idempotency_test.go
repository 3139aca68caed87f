package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestIdempotencyKey: a retried submission with its Idempotency-Key gets
// the first run, not a second; the document is still checked first; a key
// is one submission's.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	l := attackLab(t, false, 100)
	key := map[string]string{IdempotencyHeader: "retry-7f3a"}
	first := post(l, "/api/runs", "application/json", goodDoc, key)
	if first.Code != http.StatusAccepted {
		t.Fatalf("first: %d %s", first.Code, first.Body)
	}
	again := post(l, "/api/runs", "application/json", goodDoc, key)
	if again.Code != http.StatusAccepted || again.Header().Get("Location") != first.Header().Get("Location") || again.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %d %s %v, want the first run's Location %s", again.Code, again.Body, again.Header(), first.Header().Get("Location"))
	}
	var run APIRun
	if err := json.Unmarshal(again.Body.Bytes(), &run); err != nil || "/api/runs/"+run.ID != first.Header().Get("Location") {
		t.Errorf("retry's body: %v %+v", err, run)
	}
	// Validation stays before the key: a bad document is refused, and does
	// not use the key up.
	other := map[string]string{IdempotencyHeader: "second"}
	if w := post(l, "/api/runs", "application/json", editDoc(`"burst":[1,5]`, `"burst":0`), other); w.Code != http.StatusUnprocessableEntity {
		t.Errorf("bad document with a key: %d", w.Code)
	}
	if w := post(l, "/api/runs", "application/json", goodDoc, other); w.Code != http.StatusAccepted || w.Header().Get("Location") == first.Header().Get("Location") {
		t.Errorf("a good document after a refused one with the key: %d %s", w.Code, w.Header().Get("Location"))
	}
	// Without a key, every post is a new run.
	if w := post(l, "/api/runs", "application/json", goodDoc, nil); w.Code != http.StatusAccepted || w.Header().Get("Location") == first.Header().Get("Location") {
		t.Errorf("no key: %d %s", w.Code, w.Header().Get("Location"))
	}
	if _, total, err := l.store.List(context.Background(), 10, 0); err != nil || total != 3 {
		t.Errorf("%d runs stored (%v), want 3", total, err)
	}
	// The same key with another document: 422 naming the header.
	w := post(l, "/api/runs", "application/json", editDoc(`"seed":1`, `"seed":2`), key)
	checkProblem(t, w, http.StatusUnprocessableEntity, IdempotencyHeader, "was used for another config document")

	// A key whose first request is still being handled: 409.
	m := newIdempotency()
	now := time.Now()
	if id, status := m.begin("k", "doc", now); id != "" || status != 0 {
		t.Fatalf("begin: %q %d", id, status)
	}
	if _, status := m.begin("k", "doc", now); status != http.StatusConflict {
		t.Errorf("a key in flight: %d, want 409", status)
	}
	m.end("k", "") // that request queued nothing (429): the key is free
	if _, status := m.begin("k", "doc", now); status != 0 {
		t.Errorf("a key whose request queued nothing: %d, want free", status)
	}
	m.end("k", "run1")
	if id, _ := m.begin("k", "doc", now.Add(idempotencyTTL+time.Second)); id != "" {
		t.Errorf("a key past its %v: still %q", idempotencyTTL, id)
	}
}

// TestSlowBodyKeepsItsAnswer: a body that takes longer to arrive than the
// server's write timeout still gets its 202 (the answer's deadline counts
// from the document read), so a client has no reason to retry.
func TestSlowBodyKeepsItsAnswer(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	ts := httptest.NewUnstartedServer(l.srv)
	ts.Config.WriteTimeout = 300 * time.Millisecond
	ts.Start()
	defer ts.Close()
	pr, pw := io.Pipe()
	go func() {
		half := len(goodDoc) / 2
		pw.Write([]byte(goodDoc[:half]))
		time.Sleep(700 * time.Millisecond)
		pw.Write([]byte(goodDoc[half:]))
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/runs", pr)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the answer was lost: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted || !strings.Contains(string(body), `"status": "queued"`) {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// TestSlowSendersLoseTheirShare: three posts declaring 32 MB and sending
// 100 B/s once held the whole 64 MB budget until the read timeout, and a
// normal 2 MB submission got 503 after 20 s. The budget now holds the
// bytes received, and a body slower than MinBodyRate past the grace gets
// 408: the 2 MB post is accepted at once, the slow ones cut.
func TestSlowSendersLoseTheirShare(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 16)
	l.srv.bodyGrace = 500 * time.Millisecond
	ts := httptest.NewServer(l.srv)
	defer ts.Close()
	slow := make(chan int, 3)
	for range 3 {
		go func() {
			pr, pw := io.Pipe()
			go func() {
				defer pw.Close()
				pw.Write([]byte(`{"version":1,"name":"`))
				for range 100 {
					if _, err := pw.Write([]byte(strings.Repeat("s", 10))); err != nil {
						return
					}
					time.Sleep(100 * time.Millisecond) // 100 B/s
				}
			}()
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/runs", pr)
			req.Header.Set("Content-Type", "application/json")
			req.ContentLength = 32 << 20
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				slow <- 0 // the server closed the connection on it
				return
			}
			resp.Body.Close()
			slow <- resp.StatusCode
		}()
	}
	time.Sleep(200 * time.Millisecond) // the slow ones have started
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/runs", strings.NewReader(goodDoc+strings.Repeat(" ", 2<<20)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// At once: well before bodyWait (20 s), what it waited before the fix;
	// 10 s leaves a loaded machine room to read and store 2 MB.
	if resp.StatusCode != http.StatusAccepted || time.Since(start) > 10*time.Second {
		t.Errorf("a 2 MB post beside slow senders: %d after %v, want 202 at once", resp.StatusCode, time.Since(start))
	}
	for range 3 {
		select {
		case code := <-slow:
			if code != http.StatusRequestTimeout && code != 0 {
				t.Errorf("a slow sender got %d, want 408", code)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a slow sender still holds its connection")
		}
	}
}
