package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/web/form"
)

// goodDoc is a small config document that runs; bad inputs edit it.
const goodDoc = `{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","client":"c","rate_rps":50}]},"limiters":[{"type":"token-bucket","rate_rps":10,"burst":[1,5]}]}`

func editDoc(old, new string) string {
	if !strings.Contains(goodDoc, old) {
		panic("goodDoc has no " + old)
	}
	return strings.Replace(goodDoc, old, new, 1)
}

// testHost is the Host the servers of these tests listen on.
const testHost = "127.0.0.1:8080"

// attackLab is a lab whose server checks the Host as lab serve's does.
func attackLab(t *testing.T, start bool, queue int) *lab {
	l := newLab(t, start, queue)
	l.srv = New(l.store, l.runner, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Listen: testHost})
	return l
}

// badInput is one request the lab must refuse: its status, whether the
// answer is a problem document (else an HTML page), and the field it names
// (errors[].path of a problem; for a form page, the key of the input the
// message stands beside) with a piece of the message.
type badInput struct {
	name    string
	method  string
	path    string
	ctype   string // Content-Type of the request ("" for none)
	body    string
	header  map[string]string // more request headers; "Host" sets the Host
	lab     string            // "" (queue free), "full" (queue full), "closed" (runner shut down)
	status  int
	problem bool
	field   string // the path (problem) or form input key (page) named
	msg     string
	allow   string // the Allow header of a 405
}

func formBody(edit func(url.Values)) string {
	v := formValuesOf(form.Default())
	edit(v)
	return v.Encode()
}

func editorBody(doc string) string { return url.Values{"config": {doc}}.Encode() }

const formType = "application/x-www-form-urlencoded"

// TestBadInputs: every bad input gets the status that says why, in the
// form of its request (a problem document on /api/*, a page elsewhere),
// naming the field at fault and what is allowed.
func TestBadInputs(t *testing.T) {
	t.Parallel()
	bigTrace := strings.Repeat(`1,a\n`, form.MaxTraceBytes/4+1)
	const jt = "application/json"
	cases := []badInput{
		// Strict documents: duplicate keys at every depth.
		{name: "limiters twice hides a bogus first", body: editDoc(`"limiters":[`, `"limiters":[{"type":"bogus"}],"limiters":[`), status: 422, field: "limiters", msg: "is given twice"},
		{name: "key twice in a limiter", body: editDoc(`"burst":[1,5]`, `"burst":0,"burst":[1,5]`), status: 422, field: "limiters[0].burst", msg: "is given twice"},
		{name: "key twice in a chain stage", body: editDoc(`{"type":"token-bucket","rate_rps":10,"burst":[1,5]}`, `{"type":"chain","stages":[{"type":"token-bucket","rate_rps":10,"burst":1,"burst":2}]}`), status: 422, field: "limiters[0].stages[0].burst", msg: "is given twice"},
		{name: "key twice in a part", body: editDoc(`"rate_rps":50`, `"rate_rps":-1,"rate_rps":50`), status: 422, field: "workload.parts[0].rate_rps", msg: "is given twice"},
		{name: "key twice in another case", body: editDoc(`"seed":1`, `"seed":1,"SEED":2`), status: 422, field: "SEED", msg: `also as "seed"`},
		// Text that is not UTF-8: 400, the body is no JSON text.
		{name: "name not UTF-8", body: editDoc(`"seed":1`, "\"seed\":1,\"name\":\"a\xffb\""), status: 400, field: "name", msg: "not valid UTF-8"},
		{name: "limiter name not UTF-8", body: editDoc(`"burst":[1,5]`, "\"burst\":[1,5],\"name\":\"\xc3\x28\""), status: 400, field: "limiters[0].name", msg: "not valid UTF-8"},
		{name: "client name not UTF-8", body: editDoc(`"client":"c"`, "\"client\":\"\xe2\x82\""), status: 400, field: "workload.parts[0].client", msg: "not valid UTF-8"},
		{name: "lone surrogate", body: editDoc(`"seed":1`, `"seed":1,"name":"\udead"`), status: 400, field: "name", msg: "lone surrogate"},
		{name: "key not UTF-8", body: editDoc(`"burst":[1,5]`, "\"burst\":[1,5],\"\xff\":1"), status: 400, field: "limiters[0]", msg: "has a key that is not valid UTF-8"},
		{name: "control character", body: editDoc(`"seed":1`, "\"seed\":1,\"name\":\"a\x01\""), status: 400, field: "name", msg: "control character"},
		// Names are one line of printable text (issue 25, item 2): escaped
		// line breaks, NUL and U+2028 are valid JSON, refused by the engine.
		{name: "run name with a line break", body: editDoc(`"seed":1`, `"seed":1,"name":"a\nserver { listen 80; }"`), status: 422, field: "name", msg: "must be one line of printable text: it has U+000A at byte 1"},
		{name: "run name with a NUL", body: editDoc(`"seed":1`, `"seed":1,"name":"a\u0000b"`), status: 422, field: "name", msg: "U+0000"},
		{name: "limiter name with a line break", body: editDoc(`"burst":[1,5]`, `"burst":[1,5],"name":"tb\r\nlimit_req_zone x"`), status: 422, field: "limiters[0].name", msg: "must be one line of printable text: it has U+000D"},
		{name: "limiter name with U+2028", body: editDoc(`"burst":[1,5]`, `"burst":[1,5],"name":"tb\u2028x"`), status: 422, field: "limiters[0].name", msg: "U+2028"},
		{name: "chain name with a tab", body: editDoc(`{"type":"token-bucket","rate_rps":10,"burst":[1,5]}`, `{"type":"chain","name":"c\td","stages":[{"type":"token-bucket","rate_rps":10,"burst":1}]}`), status: 422, field: "limiters[0].name", msg: "U+0009"},
		{name: "form name with a line break", path: "/runs", ctype: formType, body: formBody(func(v url.Values) { v.Set("name", "a\nb") }), status: 422, field: "name", msg: "must be one line of printable text"},
		// Inputs once accepted without a word (issue 25, item 7).
		{name: "server workers 0", body: editDoc(`"limiters":[`, `"server":{"workers":0},"limiters":[`), status: 422, field: "server.workers", msg: "must be more than 0, not 0 (leave it out for the default, 1)"},
		{name: "server service_ms 0", body: editDoc(`"limiters":[`, `"server":{"service_ms":0},"limiters":[`), status: 422, field: "server.service_ms", msg: "must be more than 0, not 0 (leave it out for the default, 10)"},
		{name: "form row 999999999", path: "/runs", ctype: formType, body: formBody(func(v url.Values) { v.Set("limiters.999999999.type", "token-bucket") }), status: 422, msg: "<code>limiters.999999999.type</code>"},
		{name: "form row -1", path: "/runs", ctype: formType, body: formBody(func(v url.Values) { v.Set("limiters.-1.rate_rps", "5") }), status: 422, msg: "<code>limiters.-1.rate_rps</code>"},
		{name: "page point -1", method: http.MethodGet, path: "/runs/{run}?point=-1", status: 400, msg: "?point=-1 is not a point: give a whole number from 0"},
		{name: "page point abc", method: http.MethodGet, path: "/runs/{run}?point=abc", status: 400, msg: "?point=abc is not a point"},
		{name: "page point past the run", method: http.MethodGet, path: "/runs/{run}?point=99999", status: 400, msg: "?point=99999: this run has points 0 to 1"},
		{name: "page format junk", method: http.MethodGet, path: "/runs/{run}?format=junk", status: 400, msg: "?format=junk is not a deploy format: one of nginx, envoy"},
		{name: "Idempotency-Key too long", body: goodDoc, header: map[string]string{IdempotencyHeader: strings.Repeat("k", 256)}, status: 400, field: IdempotencyHeader, msg: "1 to 255 characters"},
		{name: "Idempotency-Key not ASCII", body: goodDoc, header: map[string]string{IdempotencyHeader: "clé"}, status: 400, field: IdempotencyHeader, msg: "must be printable ASCII"},
		// Content types.
		{name: "text/plain", ctype: "text/plain", body: goodDoc, status: 415, msg: "send the config document as application/json"},
		{name: "no Content-Type", ctype: "-", body: goodDoc, status: 415, msg: "has no Content-Type"},
		{name: "form to the API", ctype: formType, body: goodDoc, status: 415, msg: "application/json"},
		{name: "charset latin1", ctype: "application/json; charset=iso-8859-1", body: goodDoc, status: 415, msg: "is UTF-8"},
		{name: "gzip", header: map[string]string{"Content-Encoding": "gzip"}, body: goodDoc, status: 415, msg: "uncompressed"},
		// Sizes: 413 for every oversize body.
		{name: "body past 32 MB", body: goodDoc + strings.Repeat(" ", MaxAPIBytes), status: 413, msg: "larger than 32.0 MB"},
		{name: "trace past 10 MB", body: editDoc(`{"type":"constant","client":"c","rate_rps":50}`, `{"type":"constant","rate_rps":5},{"type":"trace","csv":"`+bigTrace+`"}`), status: 413, field: "workload.parts[1].csv", msg: "longer than 10 MB"},
		{name: "description past 10 MB", body: editDoc(`"seed":1`, `"seed":1,"description":"`+strings.Repeat("d", form.MaxTraceBytes+1)+`"`), status: 413, field: "description", msg: "longer than 10 MB"},
		// Numbers: every message says what is allowed.
		{name: "seed below 0", body: editDoc(`"seed":1`, `"seed":-1`), status: 422, field: "seed", msg: "must be a whole number from 0 to 18446744073709551615, not -1"},
		{name: "fractional seed", body: editDoc(`"seed":1`, `"seed":1.5`), status: 422, field: "seed", msg: "must be a whole number from 0 to 18446744073709551615, not 1.5"},
		{name: "rate beyond float64", body: editDoc(`"rate_rps":10`, `"rate_rps":1e309`), status: 422, field: "limiters[0].rate_rps", msg: "is 1e309, beyond the range of numbers: a number here is at most 1.7976931348623157e+308"},
		{name: "rate a string", body: editDoc(`"rate_rps":10`, `"rate_rps":"fast"`), status: 422, field: "limiters[0].rate_rps", msg: "must be a number or a list of numbers, not a string"},
		{name: "burst 0", body: editDoc(`"burst":[1,5]`, `"burst":0`), status: 422, field: "limiters[0].burst", msg: "must be at least 1"},
		{name: "1001 values", body: editDoc(`"burst":[1,5]`, `"burst":[`+strings.Repeat("1,", 1000)+`1]`), status: 422, field: "limiters[0].burst", msg: "at most 1000 values are allowed"},
		{name: "101 limiters", body: editDoc(`"limiters":[`, `"limiters":[`+strings.Repeat(`{"type":"none"},`, 101)), status: 422, field: "limiters", msg: "at most 100 limiters are allowed"},
		{name: "nested too deep", body: editDoc(`"seed":1`, `"seed":1,"x":`+strings.Repeat("[", 33)+strings.Repeat("]", 33)), status: 422, field: "x" + strings.Repeat("[0]", 31), msg: "more than 32 deep"},
		// Other bad documents.
		{name: "broken JSON", body: `{"version":1,`, status: 400, field: "", msg: "ends too early"},
		{name: "empty body", body: "", status: 400, field: "", msg: "is empty"},
		{name: "trailing data", body: goodDoc + `{}`, status: 400, field: "", msg: "after the JSON value"},
		{name: "a list, not an object", body: `[]`, status: 422, field: "", msg: "must be an object, not a list"},
		{name: "unknown field", body: editDoc(`"seed":1`, `"seed":1,"sede":2`), status: 422, field: "sede", msg: "is not a known field"},
		{name: "version 2", body: editDoc(`"version":1`, `"version":2`), status: 422, field: "version", msg: "must be 1"},
		{name: "unknown limiter", body: editDoc(`"type":"token-bucket"`, `"type":"bogus"`), status: 422, field: "limiters[0].type", msg: `unknown limiter "bogus"`},
		// Methods and paths on the API.
		{name: "PUT /api/runs", method: http.MethodPut, body: goodDoc, status: 405, msg: "PUT is not allowed on /api/runs: it takes GET, HEAD, POST", allow: "GET, HEAD, POST"},
		{name: "GET /api/runs, a bad sort", method: http.MethodGet, path: "/api/runs?sort=goodput", status: 400, field: "sort"},
		{name: "PUT a run", method: http.MethodPut, path: "/api/runs/aaaaaaaaaaaa", body: goodDoc, status: 405, allow: "GET, HEAD, PATCH, DELETE"},
		{name: "DELETE no run", method: http.MethodDelete, path: "/api/runs/aaaaaaaaaaaa", status: 404, msg: `there is no run "aaaaaaaaaaaa"`},
		{name: "POST /api/types", path: "/api/types", body: "{}", status: 405, allow: "GET, HEAD"},
		{name: "no such API path", method: http.MethodGet, path: "/api/nothing", status: 404, msg: "There is no page at /api/nothing"},
		{name: "no such run", method: http.MethodGet, path: "/api/runs/aaaaaaaaaaaa", status: 404, msg: `there is no run "aaaaaaaaaaaa"`},
		{name: "malformed run id", method: http.MethodGet, path: "/api/runs/NOT-AN-ID", status: 404, msg: "a run id is 12 characters"},
		// Origins and hosts.
		{name: "cross-site API post", body: goodDoc, header: map[string]string{"Sec-Fetch-Site": "cross-site"}, status: 403, msg: "came from a page of another origin"},
		{name: "foreign Origin", body: goodDoc, header: map[string]string{"Origin": "https://evil.example"}, status: 403, msg: "another origin"},
		{name: "DNS rebinding post", body: goodDoc, header: map[string]string{"Host": "evil.example:8080", "Origin": "http://evil.example:8080", "Sec-Fetch-Site": "same-origin"}, status: 421, msg: `does not answer for the host "evil.example:8080"`},
		{name: "DNS rebinding read", method: http.MethodGet, path: "/api/runs/aaaaaaaaaaaa", header: map[string]string{"Host": "evil.example:8080"}, status: 421, msg: "--allowed-hosts"},
		{name: "localhost on another port", method: http.MethodGet, path: "/api/types", header: map[string]string{"Host": "localhost:9999"}, status: 421, msg: "localhost:8080"},
		{name: "no Host", method: http.MethodGet, path: "/api/types", header: map[string]string{"Host": ""}, status: 421, msg: `the host ""`},
		// Load.
		{name: "queue full", lab: "full", body: goodDoc, status: 429, msg: "retry in 5 seconds"},
		{name: "shutting down", lab: "closed", body: goodDoc, status: 503, msg: "shutting down"},

		// Pages answer in HTML.
		{name: "PUT /runs", method: http.MethodPut, path: "/runs", status: 405, msg: "PUT is not allowed on /runs", allow: "GET, HEAD, POST"},
		{name: "DNS rebinding page", method: http.MethodGet, path: "/", header: map[string]string{"Host": "evil.example:8080"}, status: 421, msg: "does not answer for the host"},
		{name: "cross-site form post", path: "/runs", ctype: formType, body: formBody(func(url.Values) {}), header: map[string]string{"Sec-Fetch-Site": "cross-site"}, status: 403, msg: "another origin"},
		{name: "editor body past 32 MB", path: "/calculus/run", ctype: formType, body: editorBody(goodDoc + strings.Repeat(" ", MaxAPIBytes)), status: 413, msg: "larger than 32.0 MB"},
		{name: "editor trace past 10 MB", path: "/calculus/run", ctype: formType, body: editorBody(editDoc(`{"type":"constant","client":"c","rate_rps":50}`, `{"type":"trace","csv":"`+bigTrace+`"}`)), status: 413, msg: "workload.parts[0].csv: is longer than 10 MB"},
		{name: "editor keys twice", path: "/calculus/run", ctype: formType, body: editorBody(editDoc(`"limiters":[`, `"limiters":[{"type":"bogus"}],"limiters":[`)), status: 422, msg: "limiters: is given twice"},
		{name: "editor text not UTF-8", path: "/calculus/run", ctype: formType, body: "config=" + url.QueryEscape(editDoc(`"seed":1`, "\"seed\":1,\"name\":\"\xff\"")), status: 400, msg: "name: is not valid UTF-8"},
		{name: "editor seed below 0", path: "/calculus/run", ctype: formType, body: editorBody(editDoc(`"seed":1`, `"seed":-1`)), status: 422, msg: "seed: must be a whole number from 0 to 18446744073709551615"},
		{name: "editor JSON body", path: "/calculus/run", ctype: jt, body: goodDoc, status: 415, msg: "not a form"},
		{name: "editor broken escape", path: "/calculus/run", ctype: formType, body: "config=%7B%zz", status: 400, msg: "malformed %-escape"},
		{name: "editor without config", path: "/calculus/run", ctype: formType, body: "other=1", status: 400, msg: `has no "config" field`},
		{name: "form name not UTF-8", path: "/runs", ctype: formType, body: formBody(func(v url.Values) { v.Set("name", "a\xffb") }), status: 422, field: "name", msg: "is not valid UTF-8 text"},
		{name: "form limiter name not UTF-8", path: "/runs", ctype: formType, body: formBody(func(v url.Values) { v.Set("limiters.0.name", "\xc3") }), status: 422, field: "limiters.0.name", msg: "is not valid UTF-8 text"},
		{name: "form trace not UTF-8", path: "/runs", ctype: formType, body: formBody(func(v url.Values) {
			v.Set("parts.0.type", "trace")
			v.Set("parts.0.csv", "1,\xff\n")
		}), status: 422, field: "parts.0.csv", msg: "is not valid UTF-8 text"},
		{name: "page past the end", method: http.MethodGet, path: "/runs?page=2", status: 404, msg: "Page 2 is past the end: the 1 run fit on 1 page."},
		{name: "page not a number", method: http.MethodGet, path: "/runs?page=two", status: 400, msg: "?page=two is not a page: give a whole number from 1"},
	}
	if len(cases) < 40 {
		t.Fatalf("%d cases, want at least 40", len(cases))
	}
	labs := map[string]*lab{"": attackLab(t, false, 100), "full": attackLab(t, false, 1), "closed": attackLab(t, false, 4)}
	// One run exists (queued: the runner never starts), the full lab's
	// queue holds its one run, the closed lab's runner is shut down.
	runIDs := map[string]string{}
	for _, name := range []string{"", "full"} {
		w := post(labs[name], "/api/runs", "application/json", goodDoc, nil)
		if w.Code != http.StatusAccepted {
			t.Fatalf("good document: %d %s", w.Code, w.Body)
		}
		runIDs[name] = strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	}
	if err := labs["closed"].runner.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method, path := c.method, c.path
			if method == "" {
				method = http.MethodPost
			}
			if path == "" {
				path = "/api/runs"
			}
			path = strings.ReplaceAll(path, "{run}", runIDs[c.lab])
			ctype := c.ctype
			if ctype == "" && method == http.MethodPost && strings.HasPrefix(path, "/api/") {
				ctype = "application/json"
			}
			req := httptest.NewRequest(method, path, strings.NewReader(c.body))
			req.Host = testHost
			if ctype != "" && ctype != "-" {
				req.Header.Set("Content-Type", ctype)
			}
			for k, v := range c.header {
				if k == "Host" {
					req.Host = v
					continue
				}
				req.Header.Set(k, v)
			}
			w := labs[c.lab].do(req)
			body := w.Body.String()
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %.600s", w.Code, c.status, body)
			}
			if c.allow != "" && w.Header().Get("Allow") != c.allow {
				t.Errorf("Allow %q, want %q", w.Header().Get("Allow"), c.allow)
			}
			if (c.status == 429 || c.status == 503) && w.Header().Get("Retry-After") != "5" {
				t.Errorf("Retry-After %q", w.Header().Get("Retry-After"))
			}
			if strings.HasPrefix(path, "/api/") {
				checkProblem(t, w, c.status, c.field, c.msg)
				return
			}
			if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Fatalf("Content-Type %q, want an HTML page", ct)
			}
			if c.field != "" {
				body = inputBlock(t, body, c.field)
			}
			if want := htmlEscape(c.msg); strings.HasPrefix(c.msg, "<code>") {
				// the summary's link to a posted key the form has no input for
				if !strings.Contains(body, c.msg+"</a>") || !strings.Contains(body, "is no input of the form") {
					t.Errorf("the summary lacks %q:\n%.3000s", c.msg, body)
				}
			} else if !strings.Contains(body, want) {
				t.Errorf("the page (or the input's block) lacks %q:\n%.3000s", c.msg, body)
			}
		})
	}
	// Nothing bad was stored: the one good run of each lab is all there is.
	for name, l := range labs {
		want := map[string]int{"": 1, "full": 1, "closed": 0}[name]
		if _, total, err := l.store.List(context.Background(), 10, 0); err != nil || total != want {
			t.Errorf("lab %q stored %d runs (%v), want %d", name, total, err, want)
		}
	}
}

func post(l *lab, path, ctype, body string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Host = testHost
	req.Header.Set("Content-Type", ctype)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return l.do(req)
}

// checkProblem checks an RFC 9457 problem document: its media type,
// members, status, and an error at path whose message holds msg.
func checkProblem(t *testing.T, w *httptest.ResponseRecorder, status int, path, msg string) {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != ProblemType {
		t.Fatalf("Content-Type %q, want %s", ct, ProblemType)
	}
	var p APIProblem
	dec := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("not a problem document: %v\n%s", err, w.Body)
	}
	if p.Type != "about:blank" || p.Status != status || p.Title != http.StatusText(status) || p.Detail == "" || len(p.Errors) == 0 {
		t.Errorf("problem members: %+v", p)
	}
	for _, e := range p.Errors {
		if e.Path == path && strings.Contains(e.Msg, msg) {
			return
		}
	}
	t.Errorf("no error at %q containing %q: %+v", path, msg, p.Errors)
}

// TestBodyBudget: past the budget a post waits its turn, whatever its
// size (small bodies count too); one that cannot get it in time gets 503
// with Retry-After.
func TestBodyBudget(t *testing.T) {
	t.Parallel()
	l := attackLab(t, false, 4)
	big := goodDoc + strings.Repeat(" ", 2*smallBody)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	// Hold the budget but what a small post costs decoded, as other large
	// posts would.
	room := int64(len(goodDoc)) * decodeWeight
	if err := l.srv.bodies.acquire(ctx, BodyBudget-room); err != nil {
		t.Fatal(err)
	}
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- post(l, "/api/runs", "application/json", big, nil) }()
	select {
	case w := <-done:
		t.Fatalf("a large post did not wait for the budget: %d", w.Code)
	case <-time.After(200 * time.Millisecond):
	}
	// A small one fits in the room left.
	if w := post(l, "/api/runs", "application/json", goodDoc, nil); w.Code != http.StatusAccepted {
		t.Fatalf("small post: %d %s", w.Code, w.Body)
	}
	// Held whole, the budget makes a small post wait too.
	if err := l.srv.bodies.acquire(ctx, room); err != nil {
		t.Fatal(err)
	}
	small := make(chan *httptest.ResponseRecorder)
	go func() { small <- post(l, "/api/runs", "application/json", goodDoc, nil) }()
	select {
	case w := <-small:
		t.Fatalf("a small post did not wait for the budget: %d", w.Code)
	case <-time.After(200 * time.Millisecond):
	}
	l.srv.bodies.release(BodyBudget)
	if w := <-small; w.Code != http.StatusAccepted {
		t.Fatalf("small post after the budget came back: %d %s", w.Code, w.Body)
	}
	if w := <-done; w.Code != http.StatusAccepted {
		t.Fatalf("large post after the budget came back: %d %s", w.Code, w.Body)
	}

	// A client that gives up while it waits leaves nothing behind; one that
	// waits past bodyWait gets 503 (here the wait is the request's own
	// deadline, shorter than bodyWait).
	if err := l.srv.bodies.acquire(context.Background(), BodyBudget); err != nil {
		t.Fatal(err)
	}
	defer l.srv.bodies.release(BodyBudget)
	req := httptest.NewRequest(http.MethodPost, "/api/runs", strings.NewReader(big))
	req.Host = testHost
	req.Header.Set("Content-Type", "application/json")
	rctx, rcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer rcancel()
	w := l.do(req.WithContext(rctx))
	if w.Code != http.StatusOK || w.Body.Len() != 0 { // nothing written: the client left
		t.Errorf("a client that left got %d %s", w.Code, w.Body)
	}
}
