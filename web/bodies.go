package web

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// Large request bodies (a config document or a form with a trace) are read
// under a budget of bytes, so twenty 31 MB posts at once do not hold twenty
// documents: past the budget a post waits for its turn (at most
// bodyWait, then 503 with Retry-After). Bodies of at most smallBody bytes
// are not counted. When the last large body is done the memory it took is
// given back to the system (a garbage collection and a scavenge), since an
// idle server would otherwise keep it until its next collection.
const (
	// BodyBudget is the bytes of large bodies read at once.
	BodyBudget = 64 << 20
	smallBody  = 1 << 20
	bodyWait   = 20 * time.Second
	// formWeight counts a new-sweep form three times its size: it is
	// read whole, then written as a document, then decoded.
	formWeight = 3
)

// bodyGate is a counting semaphore of bytes.
type bodyGate struct {
	mu       sync.Mutex
	used     int64
	capacity int64
	wake     chan struct{} // closed at every release
	freed    time.Time     // when memory was last given back
}

func newBodyGate(capacity int64) *bodyGate {
	return &bodyGate{capacity: capacity, wake: make(chan struct{})}
}

func (g *bodyGate) acquire(ctx context.Context, n int64) error {
	n = min(n, g.capacity)
	for {
		g.mu.Lock()
		if g.used+n <= g.capacity {
			g.used += n
			g.mu.Unlock()
			return nil
		}
		wake := g.wake
		g.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (g *bodyGate) release(n int64) {
	n = min(n, g.capacity)
	g.mu.Lock()
	g.used -= n
	close(g.wake)
	g.wake = make(chan struct{})
	idle := g.used == 0 && time.Since(g.freed) > time.Second
	if idle {
		g.freed = time.Now()
	}
	g.mu.Unlock()
	if idle {
		go debug.FreeOSMemory()
	}
}

// admitBody waits for the budget to read a body of up to limit bytes (its
// Content-Length when it has one) counted weight times, and returns the
// function that gives it back; or answers 503 and returns nil.
func (s *Server) admitBody(w http.ResponseWriter, r *http.Request, limit int64, weight int64) (release func()) {
	n := limit
	if r.ContentLength >= 0 {
		n = min(r.ContentLength, limit)
	}
	if n <= smallBody {
		return func() {}
	}
	n *= weight
	ctx, cancel := context.WithTimeout(r.Context(), bodyWait)
	defer cancel()
	if err := s.bodies.acquire(ctx, n); err != nil {
		if r.Context().Err() != nil {
			return nil // the client left
		}
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
		s.fail(w, r, http.StatusServiceUnavailable, "The lab is busy",
			fmt.Sprintf("other large submissions are being read (%d MB at once at most): send this one again in %d seconds", BodyBudget>>20, RetryAfterSeconds))
		return nil
	}
	return func() { s.bodies.release(n) }
}
