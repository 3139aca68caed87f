package web

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
)

// seedSweepSHA256 is the published sha256 of the seed lab's
// bp-post3-burst-sweep.csv.
const seedSweepSHA256 = "d29c75e9eaa020ba6192686883d30a6366ab7640534847a20d55e339072987c6"

type lab struct {
	t      *testing.T
	store  *storage.Store
	runner *runner.Runner
	srv    *Server
}

// newLab opens a real SQLite file in a temporary folder. With start false
// the runner takes submissions but never runs them (a queue that stays
// full, runs that stay queued).
func newLab(t *testing.T, start bool, queue int) *lab {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, filepath.Join(t.TempDir(), "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rn := runner.New(st, runner.Options{Workers: 1, Queue: queue, Logger: log, EngineWorkers: 2})
	if start {
		rn.Start()
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := rn.Shutdown(sctx); err != nil {
			t.Errorf("runner shutdown: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return &lab{t: t, store: st, runner: rn, srv: New(st, rn, Options{Logger: log, Done: done})}
}

func (l *lab) do(req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	l.srv.ServeHTTP(w, req)
	return w
}

func (l *lab) get(path string) *httptest.ResponseRecorder {
	return l.do(httptest.NewRequest(http.MethodGet, path, nil))
}

func (l *lab) postForm(path string, v url.Values) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return l.do(req)
}

func (l *lab) postJSON(path string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return l.do(req)
}

// wait polls the store until the run reaches a final status.
func (l *lab) wait(id string) *storage.Run {
	l.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		run, err := l.store.Get(context.Background(), id)
		if err != nil {
			l.t.Fatal(err)
		}
		if storage.Final(run.Status) {
			return run
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("run %s still %s after 60 s", id, run.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// formValuesOf encodes a SweepForm the way the browser posts it.
func formValuesOf(f *SweepForm) url.Values {
	v := url.Values{}
	set := func(k, val string) { v.Set(k, val) }
	set("action", "run")
	set("name", f.Name)
	set("description", f.Description)
	set("seed", f.Seed)
	set("duration_ms", f.DurationMS)
	set("server.workers", f.Workers)
	set("server.service_ms", f.ServiceMS)
	set("server.deadline_ms", f.DeadlineMS)
	set("metrics.rolling_window_ms", f.RollingWindowMS)
	set("metrics.fairness_window_ms", f.FairnessWindowMS)
	set("reports", f.Reports)
	for i, p := range f.Parts {
		k := func(n string) string { return rowKey("parts", i, n) }
		for n, val := range map[string]string{"type": p.Type, "client": p.Client, "group": p.Group, "clients": p.Clients,
			"weight": p.Weight, "segments": p.Segments, "rate_rps": p.RateRPS, "start_ms": p.StartMS, "end_ms": p.EndMS,
			"arrival": p.Arrival, "bursts": p.Bursts, "base_rps": p.BaseRPS, "multiplier": p.Multiplier,
			"duration_ms": p.DurationMS, "ramp_ms": p.RampMS, "csv": p.CSV} {
			set(k(n), val)
		}
	}
	for i, l := range f.Limiters {
		k := func(n string) string { return rowKey("limiters", i, n) }
		for n, val := range map[string]string{"type": l.Type, "name": l.Name, "rate_rps": l.RateRPS, "burst": l.Burst,
			"queue": l.Queue, "limit": l.Limit, "window_ms": l.WindowMS, "shares": l.Shares} {
			set(k(n), val)
		}
	}
	return v
}

func presetValues(t *testing.T, name string) (url.Values, *experiments.Config) {
	t.Helper()
	cfg, err := presets.Config(name)
	if err != nil {
		t.Fatal(err)
	}
	return formValuesOf(FormFromConfig(cfg)), cfg
}

func runIDFrom(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	if w.Code != http.StatusSeeOther {
		t.Fatalf("status %d, want 303; body:\n%s", w.Code, clipText(w.Body.String(), 3000))
	}
	loc := w.Header().Get("Location")
	id, ok := strings.CutPrefix(loc, "/runs/")
	if !ok || !storage.ValidID(id) {
		t.Fatalf("Location %q is not a run permalink", loc)
	}
	return id
}

// TestFormRoundTrip: every preset, put in the form and posted back, gives
// the preset's own normalized config, so the form can express it exactly.
func TestFormRoundTrip(t *testing.T) {
	for _, p := range presets.All() {
		cfg, err := presets.Config(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		v := formValuesOf(FormFromConfig(cfg))
		fv := formValues{}
		for k := range v {
			fv[k] = v.Get(k)
		}
		f := formFromValues(fv)
		_, got := f.Document()
		if got == nil {
			t.Errorf("preset %s: the form gives errors: %v", p.Name, f.Problems)
			continue
		}
		if !bytes.Equal(got.JSON(), cfg.JSON()) {
			t.Errorf("preset %s: form round trip changed the config:\n%s\nwant\n%s", p.Name, got.JSON(), cfg.JSON())
		}
	}
}

func TestFormKey(t *testing.T) {
	for path, want := range map[string]string{
		"workload.parts[2].segments[1].rate_rps": "parts.2.segments",
		"workload.parts[0].rate_rps":             "parts.0.rate_rps",
		"workload.duration_ms":                   "duration_ms",
		"workload.parts":                         "parts",
		"workload":                               "parts",
		"limiters[0].burst[3]":                   "limiters.0.burst",
		"limiters[1].name":                       "limiters.1.name",
		"limiters":                               "limiters",
		"server.workers":                         "server.workers",
		"metrics.rolling_window_ms":              "metrics.rolling_window_ms",
		"reports[0].columns[2].value":            "reports",
		"seed":                                   "seed",
	} {
		if got := FormKey(path); got != want {
			t.Errorf("FormKey(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestHomePage(t *testing.T) {
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
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q", csp)
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

// inputBlock returns the HTML of the field wrapper around an input key.
func inputBlock(t *testing.T, body, key string) string {
	t.Helper()
	id := inputID(key)
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no input %s in the page", id)
	}
	start := strings.LastIndex(body[:i], `<div class="field`)
	end := strings.Index(body[i:], "</div>")
	return body[start : i+end]
}

// TestFormValidation: each bad field gets its own message next to it, every
// value comes back as typed, the status is 4xx, and nothing is stored.
func TestFormValidation(t *testing.T) {
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
			v := formValuesOf(DefaultForm())
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

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;").Replace(s)
}

func TestFormDuplicateNames(t *testing.T) {
	l := newLab(t, false, 4)
	v := formValuesOf(DefaultForm())
	for k, val := range map[string]string{"limiters.1.type": "token-bucket", "limiters.1.rate_rps": "50", "limiters.1.burst": "4"} {
		v.Set(k, val)
	}
	w := l.postForm("/runs", v)
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(inputBlock(t, w.Body.String(), "limiters.1.name"), "give each limiter its own name") {
		t.Errorf("duplicate limiter names: status %d", w.Code)
	}
}

func TestFormRows(t *testing.T) {
	l := newLab(t, false, 4)
	v := formValuesOf(DefaultForm())
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

// TestSubmitRunDownloadRerun follows a sweep defined in the form: it runs,
// its page shows charts and files, every download equals what the CLI
// writes for the same config, and a re-run matches file by file.
func TestSubmitRunDownloadRerun(t *testing.T) {
	l := newLab(t, true, 4)
	v, cfg := presetValues(t, "token-vs-leaky")
	id := runIDFrom(t, l.postForm("/runs", v))
	run := l.wait(id)
	if run.Status != storage.StatusDone {
		t.Fatalf("run %s: %s (%s)", id, run.Status, run.Error)
	}
	w := l.get("/runs/" + id)
	body := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("run page %d", w.Code)
	}
	for _, want := range []string{`id="chart-goodput"`, `id="chart-waits"`, `id="chart-peak"`, `id="chart-rolling"`, `id="chart-series"`,
		"bp-post3-burst-sweep.csv", "token-bucket", "leaky-bucket", `data-option="{`, "goodput (req/s)"} {
		if !strings.Contains(body, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	if strings.Contains(body, `id="chart-jain"`) {
		t.Error("one client, yet a fairness chart")
	}

	// The CLI's files for the same config.
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		w := l.get("/runs/" + id + "/files/" + f.Name)
		if w.Code != http.StatusOK {
			t.Errorf("download %s: %d", f.Name, w.Code)
			continue
		}
		if !bytes.Equal(w.Body.Bytes(), f.Data) {
			t.Errorf("download %s differs from the CLI's output", f.Name)
		}
		if cd := w.Header().Get("Content-Disposition"); cd != `attachment; filename=`+f.Name && cd != `attachment; filename="`+f.Name+`"` {
			t.Errorf("%s: Content-Disposition %q", f.Name, cd)
		}
	}
	sum := sha256.Sum256(l.get("/runs/" + id + "/files/bp-post3-burst-sweep.csv").Body.Bytes())
	if hex.EncodeToString(sum[:]) != seedSweepSHA256 {
		t.Errorf("bp-post3-burst-sweep.csv sha256 %x, want the seed's %s", sum, seedSweepSHA256)
	}
	if w := l.get("/runs/" + id + "/files/nope.csv"); w.Code != http.StatusNotFound {
		t.Errorf("missing file: %d", w.Code)
	}

	// A chosen point, and a point out of range falls back to the default.
	if w := l.get("/runs/" + id + "?point=3"); !strings.Contains(w.Body.String(), "Over time, at token-bucket burst=8") {
		t.Error("?point=3 does not show token-bucket burst=8")
	}
	if w := l.get("/runs/" + id + "?point=999"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "Over time, at token-bucket burst=20") {
		t.Error("default point is not the shaping report's burst 20")
	}

	// Re-run: every file matches.
	w = l.postForm("/runs/"+id+"/rerun", url.Values{})
	rid := runIDFrom(t, w)
	if rr := l.wait(rid); rr.Status != storage.StatusDone || rr.RerunOf != id {
		t.Fatalf("re-run %s: %s, rerun_of %q", rid, rr.Status, rr.RerunOf)
	}
	body = l.get("/runs/" + rid).Body.String()
	if !strings.Contains(body, fmt.Sprintf("All %d files are byte-identical", len(files))) {
		t.Errorf("re-run page does not report %d identical files", len(files))
	}

	// The run list and the API.
	if w := l.get("/runs"); !strings.Contains(w.Body.String(), "/runs/"+rid) {
		t.Error("/runs lacks the re-run")
	}
	var got APIRun
	w = l.get("/api/runs/" + id)
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || got.Status != storage.StatusDone || len(got.Manifest) == 0 || len(got.Files) != len(files) {
		t.Errorf("GET /api/runs/%s: %d %v %+v", id, w.Code, err, got)
	}
}

func TestAPI(t *testing.T) {
	l := newLab(t, true, 4)
	w := l.postJSON("/api/runs", []byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},"limiters":[{"type":"token-bucket","rate_rps":10,"burst":[0]}]}`))
	var e APIErrors
	if w.Code != http.StatusBadRequest || json.Unmarshal(w.Body.Bytes(), &e) != nil || len(e.Errors) == 0 || e.Errors[0].Path != "limiters[0].burst" {
		t.Errorf("bad config: %d %s", w.Code, w.Body)
	}
	if w := l.postJSON("/api/runs", []byte(`{`)); w.Code != http.StatusBadRequest {
		t.Errorf("broken JSON: %d", w.Code)
	}
	big := bytes.Repeat([]byte(" "), MaxAPIBytes+1)
	if w := l.postJSON("/api/runs", big); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("too large: %d", w.Code)
	}
	w = l.postJSON("/api/runs", []byte(`{"version":1,"name":"api","workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},"limiters":[{"type":"token-bucket","rate_rps":10,"burst":[1,5]}]}`))
	if w.Code != http.StatusAccepted {
		t.Fatalf("good config: %d %s", w.Code, w.Body)
	}
	loc := w.Header().Get("Location")
	id, _ := strings.CutPrefix(loc, "/api/runs/")
	if !storage.ValidID(id) {
		t.Fatalf("Location %q", loc)
	}
	l.wait(id)
	var got APIRun
	if err := json.Unmarshal(l.get(loc).Body.Bytes(), &got); err != nil || got.Status != "done" || got.PointsDone != 2 || got.PointsTotal != 2 {
		t.Errorf("GET %s: %+v %v", loc, got, err)
	}
	var manifest map[string]any
	if err := json.Unmarshal(got.Manifest, &manifest); err != nil {
		t.Errorf("manifest: %v", err)
	}
	if w := l.get("/api/runs/aaaaaaaaaaaa"); w.Code != http.StatusNotFound {
		t.Errorf("unknown run: %d", w.Code)
	}
}

// TestQueueFull: a full queue answers 429 with Retry-After, the form keeps
// what was typed, and nothing is stored.
func TestQueueFull(t *testing.T) {
	l := newLab(t, false, 1) // never started: the first run stays queued
	v := formValuesOf(DefaultForm())
	runIDFrom(t, l.postForm("/runs", v))
	v.Set("name", "second sweep")
	w := l.postForm("/runs", v)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if !strings.Contains(w.Body.String(), `value="second sweep"`) || !strings.Contains(w.Body.String(), "queue of waiting sweeps is full") {
		t.Error("429 page lost the form or the reason")
	}
	if w := l.postJSON("/api/runs", must(DefaultForm())); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("API: %d", w.Code)
	}
	if _, total, _ := l.store.List(context.Background(), 10, 0); total != 1 {
		t.Errorf("%d runs stored, want 1", total)
	}
}

func must(f *SweepForm) []byte {
	doc, cfg := f.Document()
	if cfg == nil {
		panic(fmt.Sprint(f.Problems))
	}
	return doc
}

func TestCancelQueued(t *testing.T) {
	l := newLab(t, false, 4)
	id := runIDFrom(t, l.postForm("/runs", formValuesOf(DefaultForm())))
	w := l.get("/runs/" + id)
	if !strings.Contains(w.Body.String(), `id="cancel-button"`) || !strings.Contains(w.Body.String(), `data-events="/runs/`+id+`/events"`) {
		t.Error("a queued run has no cancel button or progress stream")
	}
	if w := l.postForm("/runs/"+id+"/cancel", url.Values{}); w.Code != http.StatusSeeOther {
		t.Fatalf("cancel: %d", w.Code)
	}
	if run := l.wait(id); run.Status != storage.StatusCancelled {
		t.Errorf("status %s", run.Status)
	}
	w = l.get("/runs/" + id)
	if !strings.Contains(w.Body.String(), `id="rerun-button"`) {
		t.Error("a cancelled run has no re-run button")
	}
	if !strings.Contains(w.Body.String(), `points had finished when the run ended cancelled`) {
		t.Error("a cancelled run does not say how far it got")
	}
}

// TestEvents reads the event stream of a run over a real connection.
func TestEvents(t *testing.T) {
	l := newLab(t, true, 4)
	ts := httptest.NewServer(l.srv)
	defer ts.Close()
	id := runIDFrom(t, l.postForm("/runs", formValuesOf(DefaultForm())))
	resp, err := http.Get(ts.URL + "/runs/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	var last struct {
		Status      string
		Done, Total int
	}
	sc := bufio.NewScanner(resp.Body)
	events := 0
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if err := json.Unmarshal([]byte(data), &last); err != nil {
				t.Fatal(err)
			}
			events++
		}
	}
	if events == 0 || last.Status != storage.StatusDone || last.Done != last.Total || last.Total != 7 {
		t.Errorf("%d events, last %+v", events, last)
	}
	if w := l.get("/runs/aaaaaaaaaaaa/events"); w.Code != http.StatusNotFound {
		t.Errorf("events of an unknown run: %d", w.Code)
	}
}

// TestNoScriptInjection: user text (run and limiter names) never reaches a
// script; the page's only scripts are the two static files.
func TestNoScriptInjection(t *testing.T) {
	l := newLab(t, true, 4)
	evil := `</script><script>alert(1)</script>`
	doc := fmt.Sprintf(`{"version":1,"name":%q,"description":%q,"workload":{"duration_ms":2000,"parts":[
		{"type":"clients","group":%q,"clients":2,"rate_rps":20},{"type":"constant","client":"x\"'<b>","rate_rps":30}]},
		"limiters":[{"type":"token-bucket","name":%q,"rate_rps":20,"burst":[1,4]},{"type":"per-client-token-bucket","name":"<img src=x onerror=alert(2)>","rate_rps":20,"burst":[4,8]}]}`,
		evil, evil, evil, evil)
	w := l.postJSON("/api/runs", []byte(doc))
	if w.Code != http.StatusAccepted {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	if run := l.wait(id); run.Status != storage.StatusDone {
		t.Fatalf("%s: %s", run.Status, run.Error)
	}
	for _, path := range []string{"/runs/" + id, "/", "/runs", "/?from=" + id} {
		body := l.get(path).Body.String()
		if strings.Contains(body, evil) || strings.Contains(body, "<img src=x") || strings.Contains(body, "<b>") {
			t.Errorf("%s: user text appears unescaped", path)
		}
		checkScripts(t, path, body)
	}
	// The chart data still carries the names, as data.
	if body := l.get("/runs/" + id).Body.String(); !strings.Contains(body, `id="chart-jain"`) || !strings.Contains(body, `id="chart-clients"`) {
		t.Error("multi-client run lacks its fairness charts")
	}
}

// checkScripts parses a page and fails on any script other than the two
// static files, any inline script text, and any on* event attribute.
func checkScripts(t *testing.T, path, body string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(body))
	scripts := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Fatalf("%s: %v", path, z.Err())
			}
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		for _, a := range tok.Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				t.Errorf("%s: <%s> has an event handler attribute %s", path, tok.Data, a.Key)
			}
		}
		if tok.Data != "script" {
			continue
		}
		scripts++
		src := ""
		for _, a := range tok.Attr {
			if a.Key == "src" {
				src = a.Val
			}
		}
		if src != "/static/echarts.min.js" && src != "/static/app.js" {
			t.Errorf("%s: unexpected script (src %q)", path, src)
		}
		if z.Next() == html.TextToken && strings.TrimSpace(string(z.Text())) != "" {
			t.Errorf("%s: a script with inline text", path)
		}
	}
	if scripts != 2 {
		t.Errorf("%s: %d scripts, want 2", path, scripts)
	}
}

func TestCrossOriginPost(t *testing.T) {
	l := newLab(t, false, 4)
	req := httptest.NewRequest(http.MethodPost, "/runs", strings.NewReader(formValuesOf(DefaultForm()).Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if w := l.do(req); w.Code != http.StatusForbidden {
		t.Errorf("cross-site form post: %d, want 403", w.Code)
	}
	req = httptest.NewRequest(http.MethodPost, "/api/runs", strings.NewReader("{}"))
	req.Header.Set("Origin", "https://evil.example")
	if w := l.do(req); w.Code != http.StatusForbidden {
		t.Errorf("cross-origin API post: %d, want 403", w.Code)
	}
}

// multipartForm builds a multipart post of v plus one file.
func multipartForm(t *testing.T, v url.Values, fileKey string, data []byte) *http.Request {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k := range v {
		if err := mw.WriteField(k, v.Get(k)); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := mw.CreateFormFile(fileKey, "trace.csv")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/runs", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return req
}

func TestTraceUpload(t *testing.T) {
	l := newLab(t, true, 4)
	v := formValuesOf(DefaultForm())
	v.Set("parts.0.type", "trace")
	v.Set("name", "trace sweep")

	// Too large: 413, the error at the trace, the other values kept.
	big := bytes.Repeat([]byte("1,a\n"), MaxTraceBytes/4+1)
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

func TestNotFound(t *testing.T) {
	l := newLab(t, false, 4)
	for _, p := range []string{"/runs/aaaaaaaaaaaa", "/runs/../../etc/passwd", "/runs/x", "/nope", "/runs/aaaaaaaaaaaa/files/results.csv"} {
		if w := l.get(p); w.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d", p, w.Code)
		}
	}
	if w := l.get("/static/echarts.min.js"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "5.4.3") {
		t.Errorf("echarts: %d", w.Code)
	}
}

// TestFormAllErrorsAtOnce: an input that does not parse does not hide the
// engine's errors about the others.
func TestFormAllErrorsAtOnce(t *testing.T) {
	l := newLab(t, false, 4)
	v := formValuesOf(DefaultForm())
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

// TestChainRunEditsAsDocument: the form cannot show a chain, so editing a
// chain run goes to the config document editor.
func TestChainRunEditsAsDocument(t *testing.T) {
	l := newLab(t, true, 4)
	w := l.postJSON("/api/runs", []byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},
		"limiters":[{"type":"chain","name":"tandem","stages":[{"type":"token-bucket","rate_rps":60,"burst":[2,4]},{"type":"server","workers":1,"service_ms":5}]}]}`))
	if w.Code != http.StatusAccepted {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	l.wait(id)
	if w := l.get("/?from=" + id); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/calculus/edit/"+id {
		t.Errorf("/?from= a chain run: %d %q", w.Code, w.Header().Get("Location"))
	}
	if body := l.get("/runs/" + id).Body.String(); !strings.Contains(body, `href="/calculus/edit/`+id+`"`) {
		t.Error("the chain run's edit link does not go to the document editor")
	}
	if strings.Contains(l.get("/").Body.String(), `<option value="chain"`) {
		t.Error("the form offers a chain limiter it cannot build")
	}
}

func TestRunsPaged(t *testing.T) {
	l := newLab(t, false, PageSize+5) // never started: the runs stay queued
	doc := must(DefaultForm())
	for range PageSize + 2 {
		if w := l.postJSON("/api/runs", doc); w.Code != http.StatusAccepted {
			t.Fatalf("submit: %d", w.Code)
		}
	}
	count := func(body string) int { return strings.Count(body, `<a href="/runs/`) }
	w := l.get("/runs")
	if w.Code != http.StatusOK || count(w.Body.String()) != PageSize || !strings.Contains(w.Body.String(), "page 1 of 2") {
		t.Errorf("page 1: %d, %d runs", w.Code, count(w.Body.String()))
	}
	w = l.get("/runs?page=2")
	if w.Code != http.StatusOK || count(w.Body.String()) != 2 {
		t.Errorf("page 2: %d, %d runs", w.Code, count(w.Body.String()))
	}
	if w := l.get("/runs?page=3"); w.Code != http.StatusNotFound {
		t.Errorf("page 3: %d", w.Code)
	}
	// A queued run's page: progress box, no results yet, a reload shows the status.
	body := l.get("/").Body.String()
	if !strings.Contains(body, "status-queued") {
		t.Error("recent runs do not show the queued status")
	}
}
