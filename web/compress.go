package web

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// Compression of responses: HTML, CSV and JSON go gzip-compressed to a
// client that takes gzip (Accept-Encoding), with Vary: Accept-Encoding,
// and an ETag per encoding (the identity ETag with "-gz" before its
// closing quote), so a cache never hands one encoding's bytes for the
// other's tag. The run page's cache keeps each page's gzip bytes beside
// its HTML, compressed once (pageEntry.gzipped); every other response is
// compressed as it is written (compressResponses). Hashed assets are
// compressed once by serveAsset; the event stream, zips and anything a
// handler encodes itself pass as they are.

// gzipSuffix marks the ETag of a response's gzip encoding.
const gzipSuffix = "-gz"

// gzipETag is the ETag of the gzip encoding of the response whose
// identity ETag is etag.
func gzipETag(etag string) string {
	if strings.HasSuffix(etag, `"`) {
		return etag[:len(etag)-1] + gzipSuffix + `"`
	}
	return etag
}

// compressible says whether a response of this Content-Type is worth
// compressing: HTML, CSV, JSON (the API's, the problem documents).
func compressible(contentType string) bool {
	ct, _, _ := strings.Cut(contentType, ";")
	switch strings.TrimSpace(strings.ToLower(ct)) {
	case "text/html", "text/csv", "application/json", ProblemType, "text/plain":
		return true
	}
	return false
}

// minCompressBytes: a response known to be smaller goes as it is.
const minCompressBytes = 512

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// gzipBytes is b gzip-compressed (at the default level: it is done once
// and kept).
func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b)/6 + 64)
	w, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	w.Write(b) // a bytes.Buffer never fails
	w.Close()
	return buf.Bytes()
}

// compressResponses gzips the compressible responses of clients that
// take gzip. An If-None-Match naming a "-gz" ETag is handed to the
// handler as the identity tag it knows.
func compressResponses(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
			next.ServeHTTP(w, r)
			return
		}
		cw := &compressWriter{ResponseWriter: w, head: r.Method == http.MethodHead}
		if inm := r.Header.Get("If-None-Match"); strings.Contains(inm, gzipSuffix+`"`) {
			r = r.Clone(r.Context())
			r.Header.Set("If-None-Match", strings.ReplaceAll(inm, gzipSuffix+`"`, `"`))
			cw.gzipTag = true
		}
		defer cw.close()
		next.ServeHTTP(cw, r)
	})
}

// compressWriter decides at its first WriteHeader (or Write) whether the
// response is compressed: status 200, a compressible type, no encoding of
// its own, not known to be small.
type compressWriter struct {
	http.ResponseWriter
	head    bool
	gzipTag bool // the request's If-None-Match named a gzip ETag
	decided bool
	zw      *gzip.Writer
}

func (c *compressWriter) WriteHeader(code int) {
	if !c.decided {
		c.decided = true
		h := c.ResponseWriter.Header()
		n, err := strconv.Atoi(h.Get("Content-Length"))
		small := err == nil && n < minCompressBytes
		if code == http.StatusOK && compressible(h.Get("Content-Type")) && h.Get("Content-Encoding") == "" && !small {
			h.Set("Content-Encoding", "gzip")
			h.Del("Content-Length")
			if etag := h.Get("ETag"); etag != "" {
				h.Set("ETag", gzipETag(etag))
			}
			if !c.head {
				c.zw = gzipWriters.Get().(*gzip.Writer)
				c.zw.Reset(c.ResponseWriter)
			}
		} else if code == http.StatusNotModified && c.gzipTag {
			// the client holds the gzip encoding: its tag
			if etag := h.Get("ETag"); etag != "" && !strings.HasSuffix(etag, gzipSuffix+`"`) {
				h.Set("ETag", gzipETag(etag))
			}
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *compressWriter) Write(b []byte) (int, error) {
	if !c.decided {
		if c.ResponseWriter.Header().Get("Content-Type") == "" {
			c.ResponseWriter.Header().Set("Content-Type", http.DetectContentType(b))
		}
		c.WriteHeader(http.StatusOK)
	}
	if c.zw != nil {
		return c.zw.Write(b)
	}
	return c.ResponseWriter.Write(b)
}

// Flush sends what is compressed so far (the event stream is not
// compressed; a long download flushes as it goes).
func (c *compressWriter) Flush() {
	if c.zw != nil {
		c.zw.Flush()
	}
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *compressWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *compressWriter) close() {
	if c.zw != nil {
		c.zw.Close()
		c.zw.Reset(nil)
		gzipWriters.Put(c.zw)
		c.zw = nil
	}
}
