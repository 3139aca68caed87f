package web

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// The limit on heavy requests: sweep submissions (a config document of up
// to MaxAPIBytes to read and decode), downloads (streamed a chunk at a
// time, but each holds a connection and a chunk) and renders of a done
// run's page (the whole stored result in memory). At most
// Options.HeavyLimit run at once; one more waits up to Options.HeavyWait
// for a place and otherwise gets 503 with Retry-After. Pages served from
// the page cache are not heavy.

// errBusy: the heavy-request limit stayed full.
var errBusy = errors.New("the heavy-request limit is full")

// gate is a counting semaphore with a bounded wait.
type gate struct {
	slots chan struct{}
	wait  time.Duration
}

func newGate(limit int, wait time.Duration) *gate {
	return &gate{slots: make(chan struct{}, limit), wait: wait}
}

// enter takes a place, waiting up to g.wait (or until ctx ends); false
// when none came free. A true enter needs a leave.
func (g *gate) enter(ctx context.Context) bool {
	select {
	case g.slots <- struct{}{}:
		return true
	default:
	}
	if g.wait <= 0 {
		return false
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func (g *gate) leave() { <-g.slots }

// limited runs a route's handler inside a gate's limit, or answers 503
// (overloaded) when the limit stays full. Downloads have their own gate,
// apart from the renders of done runs' pages, so slow readers of one
// cannot lock out the other. Submissions take no place here: what makes
// them heavy is their body, which the body budget bounds (bodies.go),
// and a client that sends its body slowly must not hold a place.
func (s *Server) limited(g *gate, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !g.enter(r.Context()) {
			s.overloaded(w, r)
			return
		}
		defer g.leave()
		next(w, r)
	}
}
