package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// Access control for a lab others can reach (Options.Token; lab serve
// requires one on an address that is not loopback). The API takes the
// token as "Authorization: Bearer TOKEN"; a browser signs in once at
// /signin and gets a session cookie (HttpOnly, SameSite=Strict; Secure
// over TLS) that holds an HMAC of the token, never the token, so forms
// and event streams keep working. Without either, /api/* answers 401 with
// WWW-Authenticate, a page 303 to /signin, anything else 401. The sign-in
// page and the static assets are open.
//
// Per client (clientID) the lab limits submissions with its own
// library-exact token bucket (limiter.XTimeRate, golang.org/x/time/rate's
// AllowN), 429 with the bucket's Retry-After past it, and caps the event
// streams open at once, per client and in all (429).

// SessionCookie is the name of the sign-in cookie.
const SessionCookie = "ratelab_session"

// sessionMaxAge is how long a sign-in lasts.
const sessionMaxAge = 30 * 24 * time.Hour

// Defaults of the per-client limits (lab serve's flags).
const (
	DefaultSubmitBurst      = 4
	DefaultStreamsPerClient = 16
	DefaultStreamsTotal     = 256
	// signinPerMinute and signinBurst bound sign-in attempts per client.
	signinPerMinute = 10
	signinBurst     = 5
)

// sessionValue is the cookie's value for a token: an HMAC, so the cookie
// never carries the token itself, and a new token ends every session.
func sessionValue(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("ratelab session v1"))
	return hex.EncodeToString(m.Sum(nil))
}

// authorized reports whether the request carries the token (Bearer) or the
// session cookie.
func (s *Server) authorized(r *http.Request) bool {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.token)) == 1 {
			return true
		}
	}
	if c, err := r.Cookie(SessionCookie); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.session)) == 1 {
		return true
	}
	return false
}

// requireAuth refuses a request without the token or a session, but for
// the sign-in page and the static assets.
func (s *Server) requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == "/signin" || strings.HasPrefix(p, "/static/") || p == "/favicon.ico" || s.authorized(r) {
			next.ServeHTTP(w, r)
			return
		}
		switch {
		case isAPI(r):
			w.Header().Set("WWW-Authenticate", `Bearer realm="ratelab"`)
			problem(w, r, http.StatusUnauthorized, "this lab needs its access token: send Authorization: Bearer TOKEN (lab serve --token)", nil)
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		default:
			s.errorPage(w, r, http.StatusUnauthorized, "Sign in first", "This lab needs its access token: sign in at /signin, then send the form again.")
		}
	})
}

// localPath is next if it is a path of this lab ("/runs/x?y"), else "/".
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/"
	}
	return next
}

// signinPage shows the sign-in form.
func (s *Server) signinPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, SignInPage(localPath(r.URL.Query().Get("next")), ""))
}

// signin checks the posted token: right, the session cookie and 303 to
// where the browser was going; wrong, 401 and the form again. Attempts
// are limited per client.
func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	if wait, ok := s.signins.allow(clientID(r), time.Now()); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		s.render(w, r, http.StatusTooManyRequests, SignInPage("/", fmt.Sprintf("Too many attempts: try again in %d seconds.", wait)))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.render(w, r, http.StatusBadRequest, SignInPage("/", "The form could not be read: "+err.Error()))
		return
	}
	next := localPath(r.PostForm.Get("next"))
	if s.token == "" || subtle.ConstantTimeCompare([]byte(r.PostForm.Get("token")), []byte(s.token)) != 1 {
		s.render(w, r, http.StatusUnauthorized, SignInPage(next, "That is not this lab's access token."))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: s.session, Path: "/", MaxAge: int(sessionMaxAge / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// clientLimits is a token bucket per client: limiter.XTimeRate in allow
// mode, the lab's library-exact x/time/rate, on the server's clock in ms.
type clientLimits struct {
	mu      sync.Mutex
	rateRPS float64
	burst   int
	epoch   time.Time
	buckets map[string]*clientBucket
}

type clientBucket struct {
	gate *limiter.XTimeRate
	last float64 // ms of the last request: idle buckets are full, and dropped
}

// newClientLimits limits each client to perMinute requests a minute with
// bursts of burst (nil: no limit).
func newClientLimits(perMinute float64, burst int) *clientLimits {
	if perMinute <= 0 {
		return nil
	}
	return &clientLimits{rateRPS: perMinute / 60, burst: max(burst, 1), epoch: time.Now(), buckets: map[string]*clientBucket{}}
}

// allow takes a token of the client's bucket at now; when there is none,
// ok is false and wait is the whole seconds until there is (Retry-After).
func (c *clientLimits) allow(client string, now time.Time) (wait int, ok bool) {
	if c == nil {
		return 0, true
	}
	t := float64(now.Sub(c.epoch).Microseconds()) / 1000
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buckets[client]
	if b == nil {
		if len(c.buckets) >= 100_000 {
			c.drop(t)
		}
		b = &clientBucket{gate: limiter.NewXTimeRate(c.rateRPS, c.burst, false, 0)}
		c.buckets[client] = b
	}
	b.last = t
	if _, ok := b.gate.Offer(t, 0); ok {
		return 0, true
	}
	return max(1, int((b.gate.NextAdmitMS(t, 0)-t+999)/1000)), false
}

// drop forgets the buckets idle long enough to be full again; c.mu held.
func (c *clientLimits) drop(t float64) {
	full := float64(c.burst) / c.rateRPS * 1000
	for k, b := range c.buckets {
		if t-b.last > full {
			delete(c.buckets, k)
		}
	}
}

// throttled runs a submission's handler within its client's limit, or
// answers 429 with Retry-After before reading the body.
func (s *Server) throttled(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if wait, ok := s.submits.allow(clientID(r), time.Now()); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(wait))
			s.fail(w, r, http.StatusTooManyRequests, "Too many submissions",
				fmt.Sprintf("this client submitted more sweeps than the lab takes from one client (%g a minute, %d at once): try again in %d seconds", s.submits.rateRPS*60, s.submits.burst, wait))
			return
		}
		next(w, r)
	}
}

// streamCaps counts the event streams open, per client and in all.
type streamCaps struct {
	mu             sync.Mutex
	perClient, all int
	open           map[string]int
	total          int
}

func newStreamCaps(perClient, all int) *streamCaps {
	return &streamCaps{perClient: perClient, all: all, open: map[string]int{}}
}

// enter takes a place for a stream of client; false when a cap is reached.
func (c *streamCaps) enter(client string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total >= c.all || c.open[client] >= c.perClient {
		return false
	}
	c.total++
	c.open[client]++
	return true
}

func (c *streamCaps) leave(client string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	if c.open[client]--; c.open[client] <= 0 {
		delete(c.open, client)
	}
}
