package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
