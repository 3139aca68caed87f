package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/web/form"
)

// count posts the form's values to the live count.
func (l *lab) count(t *testing.T, v url.Values) form.Count {
	t.Helper()
	w := l.postForm("/api/form/count", v)
	var c form.Count
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") || json.Unmarshal(w.Body.Bytes(), &c) != nil {
		t.Fatalf("POST /api/form/count: %d %s %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	return c
}

// TestFormCountIsTheRuns: the live count of a form is the point count of
// the run the same form starts, and names the lists that multiply (the
// limiter's, a swept part field, replications).
func TestFormCountIsTheRuns(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 8)
	for _, c := range []struct {
		name string
		edit map[string]string
		text string
	}{
		{"the default", nil, "burst 7 = 7 points × 900 arrivals < 0.1 s of CPU"},
		{"a swept rate, replicated", map[string]string{"parts.0.rate_rps": "50, 100", "limiters.0.rate_rps": "80, 120", "replications": "3"},
			"rate_rps 2 × burst 7 × parts[0].rate_rps 2 = 28 points × replications 3 = 84 runs × 750 arrivals"},
		{"two limiters", map[string]string{"limiters.1.type": "none"}, "token-bucket: burst 7 + none 1 = 8 points"},
	} {
		v := formValuesOf(form.Default())
		for k, val := range c.edit {
			v.Set(k, val)
		}
		got := l.count(t, v)
		if !strings.Contains(got.Text, c.text) || len(got.Problems) != 0 {
			t.Errorf("%s: %q (%v), want %q", c.name, got.Text, got.Problems, c.text)
		}
		run, err := l.store.Get(t.Context(), runIDFrom(t, l.postForm("/runs", v)))
		if err != nil {
			t.Fatal(err)
		}
		if got.Points != run.PointsTotal {
			t.Errorf("%s: the count says %d points, the run has %d", c.name, got.Points, run.PointsTotal)
		}
	}
}

// TestFormCountShowsProblems: a form with an error is not counted; the
// answer names the problem and the input it stands at.
func TestFormCountShowsProblems(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	v := formValuesOf(form.Default())
	v.Set("limiters.0.burst", "1..x")
	c := l.count(t, v)
	if c.Runs != 0 || len(c.Problems) != 1 || c.Problems[0].Input != "f-limiters-0-burst" || !strings.HasPrefix(c.Text, "Not counted: 1 problem (limiters[0].burst: ") {
		t.Fatalf("%+v", c)
	}
	if w := l.postForm("/api/form/count", url.Values{"parts.x.rate_rps": {"1"}}); w.Code != http.StatusOK {
		t.Fatalf("a form with a bad key: %d %s", w.Code, w.Body)
	}
}

// TestTooManyPointsAtTheLists: the form's sweep past the point limit
// shows its error at each list input that multiplies, naming them, not
// at the limiters; the live count names the same inputs.
func TestTooManyPointsAtTheLists(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	v := formValuesOf(form.Default())
	v.Set("limiters.0.rate_rps", "1..200")
	v.Set("limiters.0.burst", "1..60")
	w := l.postForm("/runs", v)
	if w.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", w.Code)
	}
	body := w.Body.String()
	const msg = "the sweep is too large: rate_rps 200 × burst 60 = 12000 points; the limit is 10000 points"
	for _, key := range []string{"limiters.0.rate_rps", "limiters.0.burst"} {
		if b := inputBlock(t, body, key); !strings.Contains(b, `class="field-error"`) || !strings.Contains(b, htmlEscape(msg)) {
			t.Errorf("%s: no size error beside it:\n%s", key, b)
		}
	}
	if strings.Count(body, htmlEscape(msg)) != 4 { // two inputs, two summary lines
		t.Errorf("the message appears %d times, want 4", strings.Count(body, htmlEscape(msg)))
	}
	if strings.Contains(body, `data-focus="f-limiters"`) {
		t.Error("the size error stands at the limiters")
	}
	c := l.count(t, v)
	if len(c.Problems) != 2 || c.Problems[0].Input != "f-limiters-0-rate_rps" || c.Problems[1].Input != "f-limiters-0-burst" {
		t.Errorf("count problems %+v", c.Problems)
	}
}

// TestStartAfterTheWindowAtItsInput: a part starting after the arrival
// window is refused at its start input on the form.
func TestStartAfterTheWindowAtItsInput(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	v := formValuesOf(form.Default())
	v.Set("parts.0.start_ms", "20000")
	w := l.postForm("/runs", v)
	if w.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", w.Code)
	}
	b := inputBlock(t, w.Body.String(), "parts.0.start_ms")
	if !strings.Contains(b, `aria-invalid="true"`) || !strings.Contains(b, "must be before the end of the arrival window (duration_ms 10000)") {
		t.Errorf("no error beside the start:\n%s", b)
	}
}
