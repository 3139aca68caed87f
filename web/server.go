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
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
)

// Limits of the HTTP layer.
const (
	// MaxAPIBytes bounds a config document posted to /api/runs.
	MaxAPIBytes = 32 << 20
	// RetryAfterSeconds is what a 429 (queue full) or a 503 (heavy-request
	// limit full) asks the client to wait.
	RetryAfterSeconds = 5
	// PageSize is how many runs /runs lists per page.
	PageSize = 25
	// DefaultHeavyLimit, DefaultHeavyWait and DefaultPageCacheBytes are
	// the defaults of Options.HeavyLimit, HeavyWait and PageCacheBytes.
	DefaultHeavyLimit     = 16
	DefaultHeavyWait      = 5 * time.Second
	DefaultPageCacheBytes = 64 << 20
)

// Server serves the lab. Create it with New; it is an http.Handler.
type Server struct {
	store   *storage.Store
	runner  *runner.Runner
	log     *slog.Logger
	handler http.Handler
	// done ends long-lived responses (event streams) at shutdown.
	done <-chan struct{}
	// heavy bounds the renders of done runs' pages served at once, and
	// downloads the downloads (heavy.go).
	heavy, downloads *gate
	// pages holds finished runs' rendered pages (pagecache.go).
	pages *pageCache
	// hosts are the Host header values served (nil: any).
	hosts *hostPolicy
	// bodies is the budget of large request bodies read at once.
	bodies *bodyGate
	// bodyGrace is how long a body may take before MinBodyRate applies
	// (bodyGrace; a test shortens it).
	bodyGrace time.Duration
	// token is the access token ("" : none, every request served);
	// session the sign-in cookie's value (access.go).
	token, session string
	// submits limits submissions per client, signins sign-in attempts
	// (nil: no limit); streams caps the event streams open.
	submits, signins *clientLimits
	streams          *streamCaps
	// idem remembers the runs Idempotency-Keys queued (idempotency.go).
	idem *idempotency
	// maxUpload is the largest log upload (Options.MaxUploadBytes).
	maxUpload int64
}

// Options configure a Server.
type Options struct {
	// Logger receives one line per request (default slog.Default()).
	Logger *slog.Logger
	// Done, when closed, tells open event streams that the lab stops:
	// each sends its run's last event (runner.Shutdown publishes it) and
	// ends, waiting at most ShutdownEventWait for it.
	Done <-chan struct{}
	// HeavyLimit is how many heavy requests (sweep submissions, downloads,
	// renders of a done run's page) are served at once (default
	// DefaultHeavyLimit). One more waits up to HeavyWait (default
	// DefaultHeavyWait; negative: not at all) for a place, then gets 503
	// with Retry-After.
	HeavyLimit int
	HeavyWait  time.Duration
	// PageCacheBytes bounds the finished runs' pages kept rendered
	// (default DefaultPageCacheBytes; negative: no cache).
	PageCacheBytes int
	// Listen is the address the server listens on ("127.0.0.1:8080").
	// With it, only requests for localhost, 127.0.0.1 or [::1] on its port
	// (or for the address itself, or for AllowedHosts) are served; others
	// get 421 Misdirected Request, which defeats DNS rebinding. Without it
	// (a handler mounted in a test) the Host header is not checked.
	Listen string
	// AllowedHosts are more names to serve, as ParseHosts reads them.
	AllowedHosts []string
	// MaxMemoryBytes is the memory ceiling the server keeps under
	// (default DefaultMaxMemoryBytes): half of it is the budget of request
	// bodies by what they cost decoded (bodies.go); lab serve also sets
	// the Go runtime's memory limit from it.
	MaxMemoryBytes int64
	// Token, when not "", is the access token every request but the
	// sign-in page and the static assets must carry: "Authorization:
	// Bearer TOKEN", or the session cookie /signin gives (access.go).
	Token string
	// SubmitsPerMinute limits each client's submissions (sweeps posted to
	// the API, the form, the editor, a re-run or an export's rerun) with
	// bursts of SubmitBurst (default DefaultSubmitBurst); 0: no limit.
	SubmitsPerMinute float64
	SubmitBurst      int
	// StreamsPerClient and StreamsTotal cap the event streams open at once
	// per client and in all (defaults DefaultStreamsPerClient and
	// DefaultStreamsTotal).
	StreamsPerClient, StreamsTotal int
	// MaxUploadBytes is the largest log the "Replay a log" form takes,
	// streamed to a file (default DefaultMaxUploadBytes; shadow.go).
	MaxUploadBytes int64
}

// New returns the lab's handler over a store and a started runner.
func New(st *storage.Store, rn *runner.Runner, opt Options) *Server {
	s := &Server{store: st, runner: rn, log: opt.Logger, done: opt.Done, idem: newIdempotency(), bodyGrace: bodyGrace}
	if s.log == nil {
		s.log = slog.Default()
	}
	if opt.HeavyLimit <= 0 {
		opt.HeavyLimit = DefaultHeavyLimit
	}
	if opt.HeavyWait == 0 {
		opt.HeavyWait = DefaultHeavyWait
	}
	if opt.PageCacheBytes == 0 {
		opt.PageCacheBytes = DefaultPageCacheBytes
	}
	if opt.MaxMemoryBytes <= 0 {
		opt.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	s.bodies = newBodyGate(opt.MaxMemoryBytes / 2)
	if opt.SubmitBurst <= 0 {
		opt.SubmitBurst = DefaultSubmitBurst
	}
	if opt.StreamsPerClient <= 0 {
		opt.StreamsPerClient = DefaultStreamsPerClient
	}
	if opt.StreamsTotal <= 0 {
		opt.StreamsTotal = DefaultStreamsTotal
	}
	s.maxUpload = opt.MaxUploadBytes
	if s.maxUpload <= 0 {
		s.maxUpload = DefaultMaxUploadBytes
	}
	s.token = opt.Token
	if s.token != "" {
		s.session = sessionValue(s.token)
		s.signins = newClientLimits(signinPerMinute, signinBurst)
	}
	s.submits = newClientLimits(opt.SubmitsPerMinute, opt.SubmitBurst)
	s.streams = newStreamCaps(opt.StreamsPerClient, opt.StreamsTotal)
	s.heavy = newGate(opt.HeavyLimit, opt.HeavyWait)
	s.downloads = newGate(opt.HeavyLimit, opt.HeavyWait)
	s.pages = newPageCache(opt.PageCacheBytes)
	if opt.Listen != "" {
		hosts, err := newHostPolicy(opt.Listen, opt.AllowedHosts)
		if err != nil {
			panic("web.New: " + err.Error()) // the caller's listener gave the address
		}
		s.hosts = hosts
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

// overloaded answers a request that found the heavy-request limit full:
// 503 with Retry-After, the error page, or for /api/* the API's error
// answer.
func (s *Server) overloaded(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
	const msg = "The lab is serving as many heavy requests (sweep submissions, downloads, result pages) as it takes at once; try again in a few seconds."
	s.fail(w, r, http.StatusServiceUnavailable, "The lab is busy", msg)
}

// writeJSON writes v as indented JSON with a status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		w.Header().Set("Content-Type", ProblemType)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"encode the response","errors":[{"path":"","message":"encode the response"}]}` + "\n"))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// submitStatus is the HTTP status that answers an error of runner.Submit:
// 429 when the queue is full, 503 when the runner is closed (the lab is
// shutting down; a restarted one takes the sweep), both with Retry-After;
// 422 for a trace file the lab does not have (runner.TraceError); else 500.
func submitStatus(w http.ResponseWriter, err error) int {
	var te *runner.TraceError
	switch {
	case errors.As(err, &te):
		return http.StatusUnprocessableEntity
	case errors.Is(err, runner.ErrQueueFull):
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
		return http.StatusTooManyRequests
	case errors.Is(err, runner.ErrClosed):
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// clientID names the client a request comes from, for what the lab keeps
// per client (Idempotency-Keys, submission limits, event streams): its
// IP address.
func clientID(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
