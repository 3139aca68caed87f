package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A finished run's page goes gzip-compressed to a client that takes gzip,
// from the page cache (compressed once), with Vary and an ETag per
// encoding; each encoding's tag revalidates to a 304 naming it; a client
// without gzip gets the HTML itself. JSON goes compressed too.
func TestResponsesCompressed(t *testing.T) {
	l := newLab(t, true, 2)
	w := l.postJSON("/api/runs", []byte(`{"version":1,"workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":90}]},
		"limiters":[{"type":"token-bucket","rate_rps":80,"burst":[4,8]}]}`))
	if w.Code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	l.wait(id)
	get := func(path, encoding, inm string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		return l.do(req)
	}
	plain := get("/runs/"+id, "", "")
	zipped := get("/runs/"+id, "gzip, deflate, br", "")
	again := get("/runs/"+id, "gzip", "")
	if plain.Code != 200 || plain.Header().Get("Content-Encoding") != "" || !strings.Contains(plain.Body.String(), "<html") {
		t.Fatalf("plain: %d %v", plain.Code, plain.Header())
	}
	for _, r := range []*httptest.ResponseRecorder{plain, zipped} {
		if r.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("Vary %q", r.Header().Values("Vary"))
		}
	}
	if zipped.Code != 200 || zipped.Header().Get("Content-Encoding") != "gzip" || zipped.Header().Get("ETag") != gzipETag(plain.Header().Get("ETag")) ||
		zipped.Header().Get("ETag") == plain.Header().Get("ETag") || !bytes.Equal(again.Body.Bytes(), zipped.Body.Bytes()) {
		t.Fatalf("gzip: %d %v", zipped.Code, zipped.Header())
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(zr)
	if !bytes.Equal(html, plain.Body.Bytes()) || zipped.Body.Len()*3 > len(html) {
		t.Errorf("gzip body: %d bytes inflating to %d, want the %d of the page", zipped.Body.Len(), len(html), plain.Body.Len())
	}
	for _, c := range []struct{ encoding, etag string }{{"gzip", zipped.Header().Get("ETag")}, {"", plain.Header().Get("ETag")}} {
		r := get("/runs/"+id, c.encoding, c.etag)
		if r.Code != http.StatusNotModified || r.Header().Get("ETag") != c.etag {
			t.Errorf("revalidate %q with %s: %d, ETag %s", c.encoding, c.etag, r.Code, r.Header().Get("ETag"))
		}
	}
	api := get("/api/runs/"+id, "gzip", "")
	if api.Header().Get("Content-Encoding") != "gzip" || !strings.HasPrefix(api.Header().Get("Content-Type"), "application/json") {
		t.Errorf("API: %v", api.Header())
	}
}
