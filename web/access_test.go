package web

import (
	"bufio"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testToken = "0123456789abcdef-test-token"

// TestAccessToken: with a token, nothing but the sign-in page and the
// assets is served without it; the API takes it as Bearer, a browser signs
// in once and its cookie (HttpOnly, SameSite) carries the forms.
func TestAccessToken(t *testing.T) {
	t.Parallel()
	l := newLabWith(t, false, 16, Options{Token: testToken})
	req := func(method, path, body string, header map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		for k, v := range header {
			r.Header.Set(k, v)
		}
		return l.do(r)
	}
	bearer := map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json"}
	for _, c := range []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		msg                      string
	}{
		{"API read without the token", "GET", "/api/types", "", nil, 401, "Authorization: Bearer TOKEN"},
		{"API submit without the token", "POST", "/api/runs", goodDoc, map[string]string{"Content-Type": "application/json"}, 401, "access token"},
		{"API with a wrong token", "GET", "/api/types", "", map[string]string{"Authorization": "Bearer " + testToken + "x"}, 401, "access token"},
		{"API with Basic", "GET", "/api/types", "", map[string]string{"Authorization": "Basic " + testToken}, 401, "access token"},
		{"a cancel without the token", "POST", "/runs/aaaaaaaaaaaa/cancel", "", nil, 401, "sign in at /signin"},
		{"a delete without the token", "POST", "/runs/aaaaaaaaaaaa/delete", "confirm=yes", map[string]string{"Content-Type": formType}, 401, "sign in"},
		{"a forged cookie", "GET", "/api/types", "", map[string]string{"Cookie": SessionCookie + "=" + testToken}, 401, "access token"},
		{"a page without the token", "GET", "/runs?page=1", "", nil, 303, ""},
		{"API read with the token", "GET", "/api/types", "", bearer, 200, ""},
		{"API submit with the token", "POST", "/api/runs", goodDoc, bearer, 202, ""},
		{"the sign-in page", "GET", "/signin", "", nil, 200, "Access token"},
		{"a wrong sign-in", "POST", "/signin", "token=nope&next=%2Fruns", map[string]string{"Content-Type": formType}, 401, "not this lab&#39;s access token"},
	} {
		w := req(c.method, c.path, c.body, c.header)
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.msg) {
			t.Errorf("%s: %d, want %d with %q: %.300s", c.name, w.Code, c.status, c.msg, w.Body)
		}
		if c.status == 401 && strings.HasPrefix(c.path, "/api/") && w.Header().Get("WWW-Authenticate") != `Bearer realm="ratelab"` {
			t.Errorf("%s: WWW-Authenticate %q", c.name, w.Header().Get("WWW-Authenticate"))
		}
		if c.status == 303 && w.Header().Get("Location") != "/signin?next="+url.QueryEscape(c.path) {
			t.Errorf("%s: Location %q", c.name, w.Header().Get("Location"))
		}
	}
	// The assets are open (the sign-in page needs its style sheet).
	if w := req("GET", "/static/style.css", "", nil); w.Code != 200 {
		t.Errorf("static: %d", w.Code)
	}
	// Signing in: the cookie, then the form and the pages work with it.
	w := req("POST", "/signin", "token="+testToken+"&next=%2F%2Fevil.example", map[string]string{"Content-Type": formType})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/" {
		t.Fatalf("sign-in: %d to %q (a foreign next must not be followed)", w.Code, w.Header().Get("Location"))
	}
	set := w.Header().Get("Set-Cookie")
	for _, want := range []string{SessionCookie + "=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(set, want) {
			t.Errorf("Set-Cookie %q lacks %s", set, want)
		}
	}
	if strings.Contains(set, testToken) {
		t.Errorf("the cookie carries the token: %q", set)
	}
	cookie := map[string]string{"Cookie": strings.SplitN(set, ";", 2)[0]}
	if w := req("GET", "/", "", cookie); w.Code != 200 {
		t.Errorf("home with the cookie: %d", w.Code)
	}
	formPost := map[string]string{"Cookie": cookie["Cookie"], "Content-Type": formType}
	if w := req("POST", "/runs", formBody(func(url.Values) {}), formPost); w.Code != http.StatusSeeOther {
		t.Errorf("the form with the cookie: %d %.300s", w.Code, w.Body)
	}
}

// TestSubmissionsPerClient: past its bucket a client gets 429 with the
// bucket's Retry-After, before its body is read; another client is not
// held back.
func TestSubmissionsPerClient(t *testing.T) {
	t.Parallel()
	l := newLabWith(t, false, 100, Options{SubmitsPerMinute: 6, SubmitBurst: 4})
	postFrom := func(addr string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/api/runs", strings.NewReader(goodDoc))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = addr
		return l.do(r)
	}
	for i := range 4 {
		if w := postFrom("198.51.100.7:4000"); w.Code != http.StatusAccepted {
			t.Fatalf("submission %d of the burst: %d %s", i+1, w.Code, w.Body)
		}
	}
	w := postFrom("198.51.100.7:4001")
	checkProblem(t, w, http.StatusTooManyRequests, "", "more sweeps than the lab takes from one client (6 a minute, 4 at once)")
	if ra, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || ra < 9 || ra > 10 {
		t.Errorf("Retry-After %q, want 10 (one token at 6 a minute)", w.Header().Get("Retry-After"))
	}
	if w := postFrom("198.51.100.8:4000"); w.Code != http.StatusAccepted {
		t.Errorf("another client: %d", w.Code)
	}
	// The bucket is the library's: a token every 10 s, on the clock.
	c := newClientLimits(6, 4)
	at := c.epoch
	for i := range 4 {
		if _, ok := c.allow("x", at); !ok {
			t.Fatalf("token %d refused", i)
		}
	}
	if wait, ok := c.allow("x", at.Add(9*time.Second)); ok || wait != 1 {
		t.Errorf("9 s later: %d %v, want refused, 1 s to wait", wait, ok)
	}
	if _, ok := c.allow("x", at.Add(10*time.Second)); !ok {
		t.Error("10 s later: refused")
	}
}

// TestStreamCaps: event streams past the cap per client or in all get
// 429; a stream that ends gives its place back.
func TestStreamCaps(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 16)
	srv := New(l.store, l.runner, Options{Logger: slog.New(slog.DiscardHandler), StreamsPerClient: 2, StreamsTotal: 3})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	w := post(l, "/api/runs", "application/json", goodDoc, nil)
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	var open []io.Closer
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	stream := func() int {
		resp, err := http.Get(ts.URL + "/runs/" + id + "/events")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			bufio.NewReader(resp.Body).ReadString('\n') // the stream is open
			open = append(open, resp.Body)
		} else {
			resp.Body.Close()
		}
		return resp.StatusCode
	}
	if a, b := stream(), stream(); a != 200 || b != 200 {
		t.Fatalf("two streams: %d %d", a, b)
	}
	if c := stream(); c != http.StatusTooManyRequests {
		t.Errorf("a third stream of one client: %d, want 429", c)
	}
	open[0].Close()
	open = open[1:]
	deadline := time.Now().Add(30 * time.Second) // the server sees the close when it is scheduled
	for stream() != 200 {
		if time.Now().After(deadline) {
			t.Fatal("a closed stream never gave its place back")
		}
		time.Sleep(20 * time.Millisecond)
	}
	caps := newStreamCaps(10, 3)
	for i := range 3 {
		if !caps.enter(strconv.Itoa(i)) {
			t.Fatalf("stream %d refused", i)
		}
	}
	if caps.enter("other") {
		t.Error("a stream past the cap in all was let in")
	}
}
