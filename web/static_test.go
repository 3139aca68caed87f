package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/static"
)

// TestEchartsHashedGzip: echarts is served at a content-hashed URL,
// immutable, gzip-compressed to well under its 1 MB for a client that takes
// gzip, whole for one that does not; a revalidation with its ETag is a 304.
func TestEchartsHashedGzip(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	u := static.URL("echarts.min.js")
	if !strings.HasPrefix(u, "/static/echarts.min.") || u == "/static/echarts.min.js" {
		t.Fatalf("echarts URL %q is not hashed", u)
	}
	plain := l.get(u)
	if plain.Code != http.StatusOK || plain.Header().Get("Content-Encoding") != "" {
		t.Fatalf("plain: %d %q", plain.Code, plain.Header().Get("Content-Encoding"))
	}
	if cc := plain.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("Cache-Control %q", cc)
	}
	req := httptest.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept-Encoding", "br, gzip, deflate")
	gz := l.do(req)
	if gz.Code != http.StatusOK || gz.Header().Get("Content-Encoding") != "gzip" || gz.Header().Get("Vary") != "Accept-Encoding" {
		t.Fatalf("gzip: %d %v", gz.Code, gz.Header())
	}
	if !strings.HasPrefix(gz.Header().Get("Content-Type"), "text/javascript") {
		t.Errorf("Content-Type %q", gz.Header().Get("Content-Type"))
	}
	if n, whole := gz.Body.Len(), plain.Body.Len(); n*2 > whole || whole < 1000000 {
		t.Errorf("gzip %d bytes of %d", n, whole)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(back, plain.Body.Bytes()) {
		t.Errorf("gzip body does not decompress to the file (%v)", err)
	}
	req = httptest.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("If-None-Match", gz.Header().Get("ETag"))
	if w := l.do(req); w.Code != http.StatusNotModified {
		t.Errorf("revalidation: %d", w.Code)
	}
	req = httptest.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept-Encoding", "gzip;q=0, identity")
	if w := l.do(req); w.Header().Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 got %q", w.Header().Get("Content-Encoding"))
	}
	// A page without charts does not name echarts in a script; the run
	// page's charts load it through app.js.
	if body := l.get("/").Body.String(); strings.Contains(body, `<script src="`+u) || !strings.Contains(body, `<script src="`+static.URL("app.js")+`"`) {
		t.Errorf("home page scripts wrong")
	}
}

func TestAcceptsGzip(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]bool{"": false, "gzip": true, "GZIP": true, "deflate, gzip;q=0.5": true, "gzip;q=0": false, "br": false, "x-gzip": false} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v", h, got)
		}
	}
}
