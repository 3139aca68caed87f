// Package web is ratelab's browser lab: a chi router serving templ pages
// (the new-sweep form, the run list, each run's permalink with its charts
// and downloads, the network-calculus calculator and the config document
// editor), Server-Sent Events for live progress, and a JSON API. Sweeps
// are stored by package storage and run by package runner; the page never
// computes a number itself, it shows what the engine measured.
//
// The server, its routes and one handler file per page live here; package
// web/form is the new-sweep form, package web/charts turns a stored result
// into the run page's charts and tables. Charts travel as echarts option
// JSON in data attributes; static/app.js draws them. The pages carry no
// inline script, and the Content-Security-Policy forbids any.
package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/a-h/templ"

	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
)

// Limits of the HTTP layer.
const (
	// MaxAPIBytes bounds a config document posted to /api/runs.
	MaxAPIBytes = 32 << 20
	// RetryAfterSeconds is what a 429 asks the client to wait.
	RetryAfterSeconds = 5
	// PageSize is how many runs /runs lists per page.
	PageSize = 25
)

// Server serves the lab. Create it with New; it is an http.Handler.
type Server struct {
	store   *storage.Store
	runner  *runner.Runner
	log     *slog.Logger
	handler http.Handler
	// done ends long-lived responses (event streams) at shutdown.
	done <-chan struct{}
}

// Options configure a Server.
type Options struct {
	// Logger receives one line per request (default slog.Default()).
	Logger *slog.Logger
	// Done, when closed, ends open event streams so a graceful shutdown
	// does not wait for them.
	Done <-chan struct{}
}

// New returns the lab's handler over a store and a started runner.
func New(st *storage.Store, rn *runner.Runner, opt Options) *Server {
	s := &Server{store: st, runner: rn, log: opt.Logger, done: opt.Done}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.handler = s.routes()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// render writes a component with a status, rendering into a buffer first so
// a failed render never sends half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		s.log.Error("render page", "path", r.URL.Path, "err", err)
		http.Error(w, "internal error: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorPage renders a plain error page.
func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	s.render(w, r, status, ErrorPage(title, msg))
}

// internalError logs err and tells the user something failed on our side.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.log.Error(what, "path", r.URL.Path, "err", err)
	if errors.Is(err, context.Canceled) {
		return
	}
	s.errorPage(w, r, http.StatusInternalServerError, "Something failed", what+": "+err.Error())
}

// writeJSON writes v as indented JSON with a status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, `{"errors":[{"path":"","message":"encode response"}]}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// submitStatus is the HTTP status that answers an error of runner.Submit:
// 429 when the queue is full (with Retry-After), 503 when the runner is
// closed (the lab is shutting down), else 500.
func submitStatus(w http.ResponseWriter, err error) int {
	switch {
	case errors.Is(err, runner.ErrQueueFull):
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
		return http.StatusTooManyRequests
	case errors.Is(err, runner.ErrClosed):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
