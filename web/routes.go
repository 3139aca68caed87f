package web

import (
	"fmt"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/ratelab/ratelab/static"
)

// NavLink is an entry of the top bar.
type NavLink struct{ Href, Label string }

// navLinks are the top bar's entries after "New sweep" and "All runs".
var navLinks = []NavLink{{Href: "/shadow", Label: "Replay a log"}, {Href: "/calculus", Label: "Calculus"}}

// routes is the lab's whole URL space, in one place.
func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.recoverPanics, s.logRequests, securityHeaders)
	if s.hosts != nil {
		r.Use(s.checkHost) // a Host not served gets 421 (DNS rebinding)
	}
	// State-changing requests from other origins are refused (403).
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusForbidden, "Cross-origin request refused",
			r.Method+" "+r.URL.Path+" came from a page of another origin: the lab takes state-changing requests only from its own pages or from clients that send no Origin or Sec-Fetch-Site header")
	}))
	r.Use(cop.Handler)
	if s.token != "" {
		r.Use(s.requireAuth) // the token, as Bearer or the sign-in cookie (access.go)
	}
	// HEAD is GET without the body: curl -I on a download shows its size
	// and X-Checksum-Sha256.
	r.Use(middleware.GetHead)
	// HTML, CSV and JSON go gzip-compressed to clients that take it
	// (compress.go; the run page's cache keeps its gzip bytes).
	r.Use(compressResponses)

	r.Get("/", s.home)                                                  // new-sweep form + recent runs
	r.Post("/runs", s.throttled(s.createRun))                           // the form posts here
	r.Get("/runs", s.listRuns)                                          // every run, paged
	r.Get("/shadow", s.shadowPage)                                      // "Replay a log" (shadow.go)
	r.Post("/shadow", s.throttled(s.createShadow))                      // its post: the log streamed to a file
	r.Get("/runs/{id}", s.runPage)                                      // permalink (finished: cached, pagecache.go)
	r.Get("/runs/{id}/events", s.runEvents)                             // live progress (SSE)
	r.Get("/runs/{id}/files/{name}", s.limited(s.downloads, s.runFile)) // downloads, streamed (heavy.go)
	r.Get("/runs/{id}/files.zip", s.limited(s.downloads, s.runZip))     // all of them in one zip (zip.go)
	r.Post("/runs/{id}/cancel", s.cancelRun)                            // cancel a queued or running sweep
	r.Post("/runs/{id}/rerun", s.throttled(s.rerunRun))                 // run the stored config again
	r.Get("/runs/{id}/delete", s.deleteConfirm)                         // asks before deleting (delete.go)
	r.Post("/runs/{id}/delete", s.deleteRun)                            // deletes a finished run, confirmed
	r.Get("/runs/delete", s.deleteRunsConfirm)                          // asks before deleting the ticked runs (runs_list.go)
	r.Post("/runs/delete", s.deleteRuns)                                // deletes them, confirmed, in one transaction
	r.Get("/runs/{id}/labels", s.labelsPage)                            // a run's tags and note (runs_list.go)
	r.Post("/runs/{id}/labels", s.saveLabels)                           // stores them
	r.Post("/api/runs", s.throttled(s.apiCreateRun))                    // JSON API: submit a config document
	r.Get("/api/runs", s.apiListRuns)                                   // JSON API: the run list, its filters (api.go)
	r.Get("/api/runs/{id}", s.apiGetRun)                                // JSON API: status, progress, manifest
	r.Patch("/api/runs/{id}", s.apiPatchRun)                            // JSON API: a run's tags and note
	r.Delete("/api/runs/{id}", s.apiDeleteRun)                          // JSON API: delete a finished run (runs_api.go)
	r.Get("/api/types", s.apiTypes)                                     // JSON API: the limiter and workload part types
	r.Post("/api/form/count", s.formCount)                              // the form's live count (formcount.go)
	r.Get("/diff", s.limited(s.heavy, s.diffPage))                      // two points decision by decision (diff.go)
	r.Get("/diff.csv", s.limited(s.heavy, s.diffCSV))                   // every disagreement, streamed
	r.Get("/compare", s.comparePage)                                    // several runs side by side (compare.go)
	r.Get("/calculus", s.calculusPage)                                  // the network-calculus calculator
	r.Get("/calculus/check", s.calculusCheck)                           // its answer as a sweep to run
	r.Get("/calculus/edit/{id}", s.editRun)                             // a stored run's config document, to edit and run
	r.Post("/calculus/run", s.throttled(s.runDocument))                 // run a config document from the editor
	r.Handle("/static/*", staticFiles())                                // echarts, CSS, app.js
	r.Get("/favicon.ico", http.NotFound)
	r.Get("/signin", s.signinPage) // the access token, once per browser (access.go)
	r.Post("/signin", s.signin)

	// "Deploy this setting": a point as the config that deploys it.
	r.Get("/runs/{id}/export", s.runExport)                       // as a file
	r.Post("/runs/{id}/export/rerun", s.throttled(s.rerunExport)) // the config plus the deployed setting's gate, as a new run
	r.Get("/api/runs/{id}/export", s.apiExport)                   // JSON API: text, notes, rerun

	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		s.fail(w, req, http.StatusNotFound, "Not found", "There is no page at "+req.URL.Path+".")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		allow := allowed(r, req.URL.Path)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.fail(w, req, http.StatusMethodNotAllowed, "Method not allowed",
			fmt.Sprintf("%s is not allowed on %s: it takes %s.", req.Method, req.URL.Path, strings.Join(allow, ", ")))
	})
	return r
}

// allowed lists the methods a path takes (HEAD wherever GET is).
func allowed(r *chi.Mux, path string) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := m
		if m == http.MethodHead {
			probe = http.MethodGet
		}
		if r.Match(chi.NewRouteContext(), probe, path) {
			out = append(out, m)
		}
	}
	return out
}

// staticFiles serves the assets. A content-hashed name (static.URL, what
// pages link) is immutable: cached for a year, gzip-compressed for clients
// that take it (compressed once, kept). The plain names still answer,
// cached for an hour.
func staticFiles() http.Handler {
	fs := http.StripPrefix("/static/", http.FileServerFS(static.FS))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := static.ByHashedName(strings.TrimPrefix(r.URL.Path, "/static/")); a != nil {
			serveAsset(w, r, a)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fs.ServeHTTP(w, r)
	})
}

// serveAsset answers with a hashed asset, gzip-compressed when the client
// accepts it.
func serveAsset(w http.ResponseWriter, r *http.Request, a *static.Asset) {
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("Vary", "Accept-Encoding")
	h.Set("Content-Type", mime.TypeByExtension(path.Ext(a.Name)))
	identity := `"` + a.SHA256 + `"`
	body, etag := a.Body, identity
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body, etag = a.Gzip(), gzipETag(identity)
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	// compressResponses hands a "-gz" tag in as the identity tag
	if match := r.Header.Get("If-None-Match"); match != "" && (strings.Contains(match, etag) || strings.Contains(match, identity)) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip (and
// does not refuse it with q=0).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
