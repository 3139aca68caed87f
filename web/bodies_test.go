package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/web/form"
)

// TestBodyBudgetCountsDecodedCost: a body holds 5 times its bytes in the
// budget as it arrives (what a config document costs decoded, docs/web.md),
// a form 15 times (three times more), and gives them all back. The end-to-
// end TestMemoryCeiling (cmd/lab) sees a body counted once only as a live
// heap near the budget, at times just under it: this pins the factor.
func TestBodyBudgetCountsDecodedCost(t *testing.T) {
	for _, c := range []struct {
		name           string
		weight, factor int64
	}{{"document", 1, 5}, {"form", formWeight, 15}} {
		s := &Server{bodies: newBodyGate(1 << 30), bodyGrace: bodyGrace}
		const n = 300_000
		r := httptest.NewRequest(http.MethodPost, "/api/runs", strings.NewReader(strings.Repeat("x", n)))
		release := s.admitBody(httptest.NewRecorder(), r, MaxAPIBytes, c.weight)
		if got, err := io.Copy(io.Discard, r.Body); err != nil || got != n {
			t.Fatalf("%s: read %d of %d bytes: %v", c.name, got, n, err)
		}
		if s.bodies.used != c.factor*n {
			t.Errorf("%s of %d bytes holds %d in the budget, want %d (%d times)", c.name, n, s.bodies.used, c.factor*n, c.factor)
		}
		release()
		if s.bodies.used != 0 {
			t.Errorf("%s: %d bytes held after release", c.name, s.bodies.used)
		}
	}
}

// endlessTrace is a config document whose one inline trace never ends
// ("0\n" lines), counting the bytes read.
type endlessTrace struct {
	head string
	read int64
}

func (e *endlessTrace) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if e.read < int64(len(e.head)) {
			c := copy(p[n:], e.head[e.read:])
			n += c
			e.read += int64(c)
			continue
		}
		p[n] = `0\n`[(e.read-int64(len(e.head)))%3]
		n++
		e.read++
	}
	return n, nil
}

// TestDocumentReadAsStream: the API decodes a document as it arrives, so
// a trace past form.MaxTraceBytes is refused (413) once that much of it
// has come (15.8 MB read, measured: the decoder's buffer grows past the
// limit), not after the whole body (MaxAPIBytes) was read; a handler
// that read the body whole before decoding (holding it, beside its
// decoding, under a budget that counts only the decoded cost) reads 32 MB.
func TestDocumentReadAsStream(t *testing.T) {
	t.Parallel()
	l := attackLab(t, false, 4)
	body := &endlessTrace{head: `{"version":1,"seed":1,"workload":{"duration_ms":1000,"parts":[{"type":"trace","csv":"`}
	req := httptest.NewRequest(http.MethodPost, "/api/runs", body)
	req.Host = testHost
	req.Header.Set("Content-Type", "application/json")
	w := l.do(req)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("an endless trace: %d %s", w.Code, w.Body)
	}
	if limit := int64(2 * form.MaxTraceBytes); body.read > limit {
		t.Errorf("read %d bytes of an endless trace, want at most %d (twice the string limit: the decoder's buffer grows)", body.read, limit)
	}
}
