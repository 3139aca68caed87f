package web

import (
	"fmt"
	"net/http"
	"runtime/debug"
	"time"
)

// contentSecurityPolicy allows scripts, style sheets and everything else
// from this origin only: no inline script, no <style> element, no CDN.
//
// The one exception is style-src-attr 'unsafe-inline' (CSP level 3):
// echarts writes its tooltips as HTML whose elements carry style="..."
// attributes (the series' colour markers, the name and value layout), and
// without it the browser drops them (logging a violation per element), so
// a hovered chart shows unstyled text. It is safe here because a style
// attribute runs no script (script-src stays 'self', with no inline
// script or event handler), <style> elements and style sheets stay
// 'self' (style-src-elem falls back to style-src), and no user text
// reaches markup unescaped: templ escapes every value in a page, chart
// options travel in a data- attribute, and echarts' default tooltip
// formatter HTML-escapes (encodeHTML) the axis value, series name, item
// name and value it prints; web/charts sets no tooltip formatter of its
// own. A browser without style-src-attr applies style-src to attributes
// too: its tooltips are plain text, nothing breaks. TestBrowserTooltips
// checks the tooltips of each kind of chart, one with a client named in
// HTML.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// statusWriter records a response's status and size for the request log;
// Unwrap lets http.ResponseController reach Flush and write deadlines.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests writes one slog line per request.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		s.log.Info("http", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"bytes", sw.bytes, "duration_ms", float64(time.Since(start).Microseconds())/1000, "remote", r.RemoteAddr)
	})
}

// recoverPanics turns a handler panic into a logged 500.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic", "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if isAPI(r) {
					problem(w, r, http.StatusInternalServerError, "internal error: the request failed on the server's side", nil)
					return
				}
				http.Error(w, "internal error", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}
