package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
)

// APIProblem is every error answer of the JSON API (/api/*): an RFC 9457
// problem document, served as application/problem+json. Type is
// about:blank, so Title is the status's phrase; Detail says what went
// wrong in a sentence; the extension member Errors lists each error with
// the path of the config field at fault ("" when it is not about one
// field), the first of them what Detail says.
type APIProblem struct {
	Type     string     `json:"type"`
	Title    string     `json:"title"`
	Status   int        `json:"status"`
	Detail   string     `json:"detail"`
	Instance string     `json:"instance,omitempty"`
	Errors   field.List `json:"errors"`
}

// ProblemType is the media type of an APIProblem.
const ProblemType = "application/problem+json"

// isAPI reports whether a request is the JSON API's: its errors are
// problem documents, not pages.
func isAPI(r *http.Request) bool {
	return r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/")
}

// problem answers an API request with a problem document. Without errs,
// detail is the one error, without a path.
func problem(w http.ResponseWriter, r *http.Request, status int, detail string, errs field.List) {
	if len(errs) == 0 {
		errs = field.List{{Msg: detail}}
	}
	p := APIProblem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, Instance: r.URL.Path, Errors: errs}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		b = []byte(`{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"encode the error","errors":[{"path":"","message":"encode the error"}]}`)
		status = http.StatusInternalServerError
	}
	h := w.Header()
	h.Set("Content-Type", ProblemType)
	h.Set("Cache-Control", "no-store")
	h.Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// fieldsDetail is the detail of a problem with field errors: the first
// error, and how many more there are.
func fieldsDetail(what string, errs field.List) string {
	switch len(errs) {
	case 0:
		return what
	case 1:
		return what + ": " + errs[0].Error()
	}
	return fmt.Sprintf("%s: %s (and %d more errors)", what, errs[0].Error(), len(errs)-1)
}

// fail answers an error in the form of the request: a problem document
// on the API, else an error page.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	if isAPI(r) {
		problem(w, r, status, msg, nil)
		return
	}
	s.errorPage(w, r, status, title, msg)
}
