package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
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

// admitBody puts a request's body under the budget: its bytes are counted
// (weight times) as they arrive, not as its Content-Length declares them,
// so a sender holds only what it has sent; and the body must arrive at
// MinBodyRate at least once the first bodyGrace has passed, so a sender
// of 100 B/s loses its connection (408) long before the server's read
// timeout instead of holding its share. A body declared at most smallBody
// long is not counted (its rate is still checked). Past the budget a read
// waits for its turn, at most bodyWait, then fails (503 with Retry-After,
// bodyStatus). The returned function gives the body's bytes back; it is
// never nil.
func (s *Server) admitBody(w http.ResponseWriter, r *http.Request, limit int64, weight int64) (release func()) {
	m := &meteredBody{rc: r.Body, rc2: http.NewResponseController(w), ctx: r.Context(), start: time.Now(), weight: weight, grace: s.bodyGrace}
	if r.ContentLength < 0 || r.ContentLength > smallBody {
		m.gate = s.bodies
	}
	r.Body = m
	return m.release
}

// Body rates: a body must arrive at MinBodyRate bytes a second on average
// once bodyGrace has passed since its request began.
const (
	MinBodyRate = 32 << 10
	bodyGrace   = 5 * time.Second
)

// errSlowBody and errBodyBudget are a metered body's refusals.
var (
	errSlowBody   = fmt.Errorf("the request body arrived slower than %d KiB/s: send it faster, or on a faster link", MinBodyRate>>10)
	errClientGone = errors.New("the client left")
	errBodyBudget = fmt.Errorf("other large submissions are being read (%d MB at once at most): send this one again in %d seconds", BodyBudget>>20, RetryAfterSeconds)
)

// refusedBody answers a request whose body the budget or the rate
// refused (408 too slow; 503 with Retry-After past the budget; nothing to
// a client that left) and reports true; false for any other error.
func (s *Server) refusedBody(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case errors.Is(err, errSlowBody):
		s.fail(w, r, http.StatusRequestTimeout, "The body came too slowly", errSlowBody.Error())
	case errors.Is(err, errBodyBudget):
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
		s.fail(w, r, http.StatusServiceUnavailable, "The lab is busy", errBodyBudget.Error())
	case errors.Is(err, errClientGone):
	default:
		return false
	}
	return true
}

// meteredBody is a request body read under the budget and the rate.
type meteredBody struct {
	rc     io.ReadCloser
	rc2    *http.ResponseController
	ctx    context.Context
	gate   *bodyGate // nil: not counted
	weight int64
	grace  time.Duration // bodyGrace
	start  time.Time
	read   int64 // bytes received
	held   int64 // bytes held in the gate
	err    error
}

func (m *meteredBody) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	// The rate due by now: the read must end by the time the body would
	// fall below MinBodyRate (never before bodyGrace).
	due := m.start.Add(max(m.grace, time.Duration(float64(m.read+1)/MinBodyRate*float64(time.Second))))
	if !time.Now().Before(due) {
		m.err = errSlowBody
		return 0, m.err
	}
	_ = m.rc2.SetReadDeadline(due) // unsupported (a test recorder): the check above still holds
	n, err := m.rc.Read(p)
	m.read += int64(n)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		m.err = errSlowBody
		return n, m.err
	}
	if m.gate != nil && n > 0 {
		// One body holds at most the whole budget (a form counted three
		// times its size may be larger).
		want := min(int64(n)*m.weight, m.gate.capacity-m.held)
		ctx, cancel := context.WithTimeout(m.ctx, bodyWait)
		var aerr error
		if want > 0 {
			aerr = m.gate.acquire(ctx, want)
		}
		cancel()
		if aerr != nil {
			m.err = errBodyBudget
			if m.ctx.Err() != nil {
				m.err = errClientGone
			}
			return 0, m.err
		}
		m.held += max(want, 0)
	}
	return n, err
}

func (m *meteredBody) Close() error { return m.rc.Close() }

// release gives the body's bytes back and lifts its read deadline (the
// handler may still read a trailer, or the next request come).
func (m *meteredBody) release() {
	if m.gate != nil && m.held > 0 {
		m.gate.release(m.held)
		m.held = 0
	}
	_ = m.rc2.SetReadDeadline(time.Time{})
}
