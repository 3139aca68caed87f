package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

func TestHomePage(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	w := l.get("/")
	if w.Code != http.StatusOK {
		t.Fatalf("GET / = %d", w.Code)
	}
	body := w.Body.String()
	for _, want := range []string{`id="sweep-form"`, `name="parts.0.type"`, `name="limiters.0.burst"`, `value="token-vs-leaky"`, "No runs yet"} {
		if !strings.Contains(body, want) {
			t.Errorf("home page lacks %q", want)
		}
	}
	// Scripts and style sheets from this origin only; inline style
	// attributes (echarts' tooltips) are the one inline thing allowed.
	csp := map[string]string{}
	for _, d := range strings.Split(w.Header().Get("Content-Security-Policy"), ";") {
		if name, value, _ := strings.Cut(strings.TrimSpace(d), " "); name != "" {
			csp[name] = value
		}
	}
	for name, want := range map[string]string{"default-src": "'self'", "script-src": "'self'", "style-src": "'self'",
		"style-src-attr": "'unsafe-inline'", "object-src": "'none'", "base-uri": "'none'"} {
		if csp[name] != want {
			t.Errorf("CSP %s = %q, want %q", name, csp[name], want)
		}
	}
	for _, name := range []string{"script-src-elem", "script-src-attr", "style-src-elem"} {
		if v, ok := csp[name]; ok {
			t.Errorf("CSP %s = %q widens the policy", name, v)
		}
	}

	w = l.get("/?preset=token-vs-leaky")
	body = w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, "20,1000\n600,200") || !strings.Contains(body, "bp-post3-burst-sweep.csv") ||
		!strings.Contains(body, `value="1, 2, 4, 8, 12, 16, 20, 28, 40, 80"`) {
		t.Errorf("preset form: status %d, missing segments, report or burst list", w.Code)
	}
	if w := l.get("/?preset=nope"); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "no preset") {
		t.Errorf("unknown preset: %d", w.Code)
	}
	if w := l.get("/?from=aaaaaaaaaaaa"); w.Code != http.StatusNotFound {
		t.Errorf("unknown run to start from: %d", w.Code)
	}
}

// TestFormValidation: each bad field gets its own message next to it, every
// value comes back as typed, the status is 4xx, and nothing is stored.
func TestFormValidation(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	for _, tc := range []struct {
		key, value, msg string
	}{
		{"seed", "abc", "not a whole number"},
		{"duration_ms", "-5", "must be more than 0"},
		{"duration_ms", "ten", `"ten" is not a number`},
		{"server.workers", "-1", "must be between 1"},
		{"server.service_ms", "-1", "must be more than 0"},
		{"limiters.0.burst", "1..x", "range"},
		{"limiters.0.burst", "0, 2", "must be at least 1"},
		{"limiters.0.burst", "", "is required"},
		{"limiters.0.rate_rps", "5..1", "below the start"},
		{"limiters.0.type", "bogus", "choose a limiter"},
		{"parts.0.rate_rps", "0", "must be more than 0 requests/s"},
		{"parts.0.type", "bogus", "choose a part type"},
		{"metrics.rolling_window_ms", "-1", "must be more than 0"},
		{"reports", "[{", "must be a JSON list"},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			v := formValuesOf(form.Default())
			v.Set("name", "keep <me> & everything")
			v.Set(tc.key, tc.value)
			w := l.postForm("/runs", v)
			if w.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", w.Code)
			}
			body := w.Body.String()
			block := inputBlock(t, body, tc.key)
			if !strings.Contains(block, "field-error") || !strings.Contains(block, htmlEscape(tc.msg)) {
				t.Errorf("no message %q next to %s:\n%s", tc.msg, tc.key, block)
			}
			if !strings.Contains(body, `value="keep &lt;me&gt; &amp; everything"`) {
				t.Error("the name was not kept")
			}
			if tc.value != "" && !strings.Contains(block, htmlEscape(tc.value)) && !strings.HasSuffix(tc.key, "type") {
				t.Errorf("the bad value %q was not kept", tc.value)
			}
		})
	}
	if _, total, err := l.store.List(context.Background(), 10, 0); err != nil || total != 0 {
		t.Errorf("bad forms stored %d runs (%v)", total, err)
	}
}

func TestFormDuplicateNames(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	v := formValuesOf(form.Default())
	for k, val := range map[string]string{"limiters.1.type": "token-bucket", "limiters.1.rate_rps": "50", "limiters.1.burst": "4"} {
		v.Set(k, val)
	}
	w := l.postForm("/runs", v)
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(inputBlock(t, w.Body.String(), "limiters.1.name"), "give each limiter its own name") {
		t.Errorf("duplicate limiter names: status %d", w.Code)
	}
}

func TestFormRows(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	v := formValuesOf(form.Default())
	v.Set("action", "add-part")
	w := l.postForm("/runs", v)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `name="parts.1.type"`) {
		t.Fatalf("add part: %d", w.Code)
	}
	v.Set("action", "add-limiter")
	if w := l.postForm("/runs", v); !strings.Contains(w.Body.String(), `name="limiters.1.type"`) {
		t.Error("add limiter: no second limiter")
	}
	// Remove the first of two parts: the second becomes parts.0.
	v.Set("action", "remove-part:0")
	v.Set("parts.1.type", "constant")
	v.Set("parts.1.rate_rps", "77")
	w = l.postForm("/runs", v)
	body := w.Body.String()
	if strings.Contains(body, `name="parts.1.type"`) || !strings.Contains(inputBlock(t, body, "parts.0.rate_rps"), `value="77"`) {
		t.Error("remove part: rows not renumbered")
	}
}

// TestFormAllErrorsAtOnce: an input that does not parse does not hide the
// engine's errors about the others.
func TestFormAllErrorsAtOnce(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	v := formValuesOf(form.Default())
	v.Set("limiters.0.burst", "1..x")
	v.Set("duration_ms", "-3")
	v.Set("server.deadline_ms", "-1")
	w := l.postForm("/runs", v)
	body := w.Body.String()
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(body, "3 problems") {
		t.Fatalf("status %d; want 3 problems", w.Code)
	}
	for key, msg := range map[string]string{"limiters.0.burst": "is not a number", "duration_ms": "must be more than 0", "server.deadline_ms": "must be more than 0"} {
		if block := inputBlock(t, body, key); !strings.Contains(block, htmlEscape(msg)) {
			t.Errorf("%s lacks %q:\n%s", key, msg, block)
		}
	}
	if strings.Contains(inputBlock(t, body, "limiters.0.burst"), "is required") {
		t.Error("an input that did not parse also says it is required")
	}
}

// TestFormTypedZeroIsNotTheDefault: a typed 0 where the config document
// reads 0 as "the default" is refused beside its input; it used to run the
// default silently (workers 0 ran 1 worker, deadline 0 ran 200 ms).
func TestFormTypedZeroIsNotTheDefault(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	for _, key := range []string{"server.workers", "server.service_ms", "server.deadline_ms",
		"metrics.rolling_window_ms", "metrics.fairness_window_ms", "parts.0.weight"} {
		t.Run(key, func(t *testing.T) {
			v := formValuesOf(form.Default())
			v.Set(key, "0")
			w := l.postForm("/runs", v)
			if w.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", w.Code)
			}
			block := inputBlock(t, w.Body.String(), key)
			if !strings.Contains(block, "field-error") || !strings.Contains(block, "leave it empty for the default") {
				t.Errorf("no error beside %s:\n%s", key, block)
			}
			if !strings.Contains(block, `value="0"`) {
				t.Errorf("the typed 0 was not kept:\n%s", block)
			}
		})
	}
	if _, total, err := l.store.List(context.Background(), 10, 0); err != nil || total != 0 {
		t.Errorf("typed zeros stored %d runs (%v)", total, err)
	}
	// Empty still means the default.
	v := formValuesOf(form.Default())
	v.Set("server.deadline_ms", "")
	if w := l.postForm("/runs", v); w.Code != http.StatusSeeOther {
		t.Errorf("empty deadline: %d, want 303", w.Code)
	}
}

// TestFormListItemNamed: an engine error about one item of a list input
// says which item, since the input holds the whole list.
func TestFormListItemNamed(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	for _, tc := range []struct {
		set       map[string]string
		key, want string
	}{
		{map[string]string{"limiters.0.burst": "1, 2, -4"}, "limiters.0.burst", "value 3 (-4): must be at least 1"},
		{map[string]string{"parts.0.type": "demand-curve", "parts.0.segments": "20,1000\n-600,200"}, "parts.0.segments", "segment 2 (-600,200): must be"},
		{map[string]string{"parts.0.type": "bursts", "parts.0.bursts": "100,5\n-5,3"}, "parts.0.bursts", "burst 2 (-5,3): must be"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			v := formValuesOf(form.Default())
			for k, val := range tc.set {
				v.Set(k, val)
			}
			w := l.postForm("/runs", v)
			if w.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", w.Code)
			}
			if block := inputBlock(t, w.Body.String(), tc.key); !strings.Contains(block, htmlEscape(tc.want)) {
				t.Errorf("want %q beside %s:\n%s", tc.want, tc.key, block)
			}
		})
	}
}

// TestQueueFull: a full queue answers 429 with Retry-After, the form keeps
// what was typed, and nothing is stored.
func TestQueueFull(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 1) // never started: the first run stays queued
	v := formValuesOf(form.Default())
	runIDFrom(t, l.postForm("/runs", v))
	v.Set("name", "second sweep")
	w := l.postForm("/runs", v)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if !strings.Contains(w.Body.String(), `value="second sweep"`) || !strings.Contains(w.Body.String(), "queue of waiting sweeps is full") {
		t.Error("429 page lost the form or the reason")
	}
	if w := l.postJSON("/api/runs", must(form.Default())); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("API: %d", w.Code)
	}
	if _, total, _ := l.store.List(context.Background(), 10, 0); total != 1 {
		t.Errorf("%d runs stored, want 1", total)
	}
}

func TestTraceUpload(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	v := formValuesOf(form.Default())
	v.Set("parts.0.type", "trace")
	v.Set("name", "trace sweep")

	// Too large: 413, the error at the trace, the other values kept.
	big := bytes.Repeat([]byte("1,a\n"), form.MaxTraceBytes/4+1)
	w := l.do(multipartForm(t, v, "parts.0.csv_file", big))
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("large trace: %d", w.Code)
	}
	if block := inputBlock(t, w.Body.String(), "parts.0.csv_file"); !strings.Contains(block, "larger than 10.0 MB") {
		t.Errorf("no size error at the trace:\n%s", block)
	}
	if !strings.Contains(w.Body.String(), `value="trace sweep"`) {
		t.Error("name not kept")
	}

	// A bad line is reported at the trace.
	w = l.do(multipartForm(t, v, "parts.0.csv_file", []byte("t_ms,client\n5,a\nx,b\n")))
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(inputBlock(t, w.Body.String(), "parts.0.csv_file"), "line 3") {
		t.Errorf("bad trace: %d", w.Code)
	}

	// A good upload runs.
	var trace strings.Builder
	trace.WriteString("t_ms,client\n")
	for i := range 300 {
		fmt.Fprintf(&trace, "%d,c%d\n", i*30, i%3)
	}
	id := runIDFrom(t, l.do(multipartForm(t, v, "parts.0.csv_file", []byte(trace.String()))))
	if run := l.wait(id); run.Status != storage.StatusDone {
		t.Fatalf("trace run: %s %s", run.Status, run.Error)
	}
}

// TestOversizeTraceOnlySizeError: a trace past the limit gets the size
// error alone (not also "is empty", which the engine said of the unread
// trace), under its config path in the summary.
func TestOversizeTraceOnlySizeError(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	v := formValuesOf(form.Default())
	v.Set("parts.0.type", "trace")
	big := bytes.Repeat([]byte("1,a\n"), form.MaxTraceBytes/4+1)
	w := l.do(multipartForm(t, v, "parts.0.csv_file", big))
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", w.Code)
	}
	body := w.Body.String()
	if strings.Contains(inputBlock(t, body, "parts.0.csv"), "is empty") || strings.Contains(body, "csv</code> is empty") {
		t.Error(`an oversize trace is also reported as "is empty"`)
	}
	if !strings.Contains(body, "workload.parts[0].csv") {
		t.Error("the summary does not name the trace's config path")
	}
	if block := inputBlock(t, body, "parts.0.csv_file"); !strings.Contains(block, "larger than 10.0 MB") {
		t.Errorf("no size error at the trace:\n%s", block)
	}
}
