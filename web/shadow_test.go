package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
)

// testLogs are a lab's logs in a temporary directory: traces/ by name,
// uploads/ as upload/NAME (cmd/lab's dirLogs does the same on disk).
type testLogs struct{ dir string }

func (d testLogs) path(name string) string {
	if rest, ok := strings.CutPrefix(name, "upload/"); ok {
		return filepath.Join(d.dir, "uploads", filepath.Base(rest))
	}
	return filepath.Join(d.dir, "traces", filepath.Base(name))
}

func (d testLogs) Exists(name string) bool {
	st, err := os.Stat(d.path(name))
	return name != "" && err == nil && st.Mode().IsRegular()
}

func (d testLogs) Open(name string) (*runner.LogFile, error) {
	b, err := os.ReadFile(d.path(name))
	if err != nil {
		return nil, err
	}
	return &runner.LogFile{ReadCloser: io.NopCloser(bytes.NewReader(b)), Size: int64(len(b)), Position: func() int64 { return int64(len(b)) },
		Input: func() experiments.Input { return experiments.Input{Name: name, SHA256: "-", Bytes: int64(len(b))} }}, nil
}

func (d testLogs) Create(base string) (string, io.WriteCloser, func(), error) {
	var rnd [4]byte
	rand.Read(rnd[:])
	file := hex.EncodeToString(rnd[:]) + "-" + filepath.Base(base)
	path := filepath.Join(d.dir, "uploads", file)
	f, err := os.Create(path)
	if err != nil {
		return "", nil, nil, err
	}
	return "upload/" + file, f, func() { f.Close(); os.Remove(path) }, nil
}

func (d testLogs) Remove(name string) error {
	if !strings.HasPrefix(name, "upload/") {
		return nil
	}
	if err := os.Remove(d.path(name)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

func (d testLogs) uploads(t *testing.T) []string {
	entries, err := os.ReadDir(filepath.Join(d.dir, "uploads"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// newShadowLab is a lab with logs: traces/day.log holds log.
func newShadowLab(t *testing.T, opt Options, log string) (*lab, testLogs) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	logs := testLogs{dir}
	for _, sub := range []string{"traces", "uploads"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "traces", "day.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(ctx, filepath.Join(dir, "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	lg := slog.New(slog.NewTextHandler(io.Discard, nil))
	rn := runner.New(st, runner.Options{Workers: 1, Queue: 4, Logger: lg, EngineWorkers: 1, Logs: logs,
		TraceNames: func() ([]string, error) { return []string{"day.log"}, nil }})
	rn.Start()
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		rn.Shutdown(sctx)
		st.Close()
	})
	opt.Logger, opt.Done = lg, done
	return &lab{t: t, store: st, runner: rn, srv: New(st, rn, opt)}, logs
}

// shadowLogText is a log of the unit format: two clients, one too fast
// for 20r/s burst=2.
func shadowLogText(bad int) string {
	var b strings.Builder
	for i := range bad {
		fmt.Fprintf(&b, "garbage %d\n", i)
	}
	for i := range 200 {
		fmt.Fprintf(&b, "10.0.0.1 %.3f 0.000 200 0.004\n", 1796148840+float64(i)*0.04)
		if i%10 == 0 {
			fmt.Fprintf(&b, "10.0.0.2 %.3f 0.000 200 0.020\n", 1796148840+float64(i)*0.04+0.005)
		}
	}
	return b.String()
}

const shadowTestFormat = "$remote_addr $msec $request_time $status $upstream_response_time"
const shadowTestConf = "limit_req_zone $binary_remote_addr zone=perip:1m rate=20r/s;\nlimit_req zone=perip burst=2 nodelay;\n"

// shadowPost is a multipart post of fields, in order, and a log upload
// when log is not nil.
func shadowPost(t *testing.T, fields [][2]string, log []byte) *http.Request {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if log != nil {
		fw, err := mw.CreateFormFile("log_file", "access.log")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(log)
	}
	mw.Close()
	req := httptest.NewRequest(http.MethodPost, "/shadow", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return req
}

func goodFields() [][2]string {
	return [][2]string{{"config", shadowTestConf}, {"format", "nginx"}, {"log_format", shadowTestFormat},
		{"reorder_window_ms", "60000"}, {"max_bad_pct", "1"}, {"objectives", "reject_pct <= 1"}}
}

func TestShadowFormRefusesBadFields(t *testing.T) {
	t.Parallel()
	l, logs := newShadowLab(t, Options{}, shadowLogText(0))
	if w := l.get("/shadow"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `id="shadow-form"`) || !strings.Contains(w.Body.String(), `<option value="day.log"`) {
		t.Fatalf("GET /shadow: %d", w.Code)
	}
	fields := [][2]string{{"config", "limit_req_zone $binary_remote_addr zone=z:1m rate=1r/s;\nlimit_req zone=z;\nlimit_req_dry_run on;\n"},
		{"format", "syslog"}, {"status", "6xx"}, {"from", "yesterday"}, {"route", "/api/"}, {"max_bad_pct", "abc"},
		{"objectives", "sojourn_p99_ms <= 10"}, {"reorder_window_ms", "-5"}, {"log_tz", "Mars/Olympus"}, {"name", "two\nlines"}}
	w := l.do(shadowPost(t, fields, []byte(shadowLogText(0))))
	body := w.Body.String()
	if w.Code != http.StatusUnprocessableEntity {
		t.Fatalf("%d %s", w.Code, body)
	}
	for key, want := range map[string]string{"config": "limit_req_dry_run", "format": `&#34;syslog&#34;: one of nginx`, "status": "6xx",
		"from": "not a time", "max_bad_pct": "not a number", "objectives": "objectives[0].metric", "reorder_window_ms": "positive", "log_tz": "not a time zone", "name": "one line"} {
		block := shadowBlock(t, body, "shadow-"+key)
		if !strings.Contains(block, "field-error") || !strings.Contains(block, want) {
			t.Errorf("%s: no error %q at its input:\n%s", key, want, block)
		}
	}
	// the values given come back, and the upload is kept, not sent again
	if !strings.Contains(body, `value="/api/"`) || !strings.Contains(body, `name="log_upload" value="upload/`) {
		t.Errorf("the form lost the values or the upload:\n%s", body)
	}
	if runs, _, _ := l.store.List(t.Context(), 10, 0); len(runs) != 0 {
		t.Errorf("a refused form stored %d runs", len(runs))
	}
	if len(logs.uploads(t)) != 1 {
		t.Errorf("uploads: %v", logs.uploads(t))
	}
	// Neither a log nor a config: both named.
	w = l.do(shadowPost(t, [][2]string{{"format", "nginx"}}, nil))
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(shadowBlock(t, w.Body.String(), "shadow-config"), "paste or upload") ||
		!strings.Contains(w.Body.String(), "choose a log") {
		t.Errorf("empty: %d %s", w.Code, w.Body.String())
	}
}

func TestShadowUploadOverTheCap(t *testing.T) {
	t.Parallel()
	l, logs := newShadowLab(t, Options{MaxUploadBytes: 1000}, "")
	w := l.do(shadowPost(t, goodFields(), []byte(shadowLogText(0))))
	if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(shadowBlock(t, w.Body.String(), "shadow-log_file"), "larger than 1000 bytes") {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
	// the values read before the log came back; nothing stays on disk
	if !strings.Contains(w.Body.String(), "zone=perip") || len(logs.uploads(t)) != 0 {
		t.Errorf("uploads left: %v", logs.uploads(t))
	}
}

func TestShadowRefusesBadLinesFirst(t *testing.T) {
	t.Parallel()
	l, logs := newShadowLab(t, Options{}, "")
	w := l.do(shadowPost(t, goodFields(), []byte(shadowLogText(30))))
	body := w.Body.String()
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(body, "30 of the first 250 lines (12.00%) are bad") ||
		!strings.Contains(body, "line 1: does not match the log format: garbage 0") {
		t.Fatalf("%d %s", w.Code, body)
	}
	if runs, _, _ := l.store.List(t.Context(), 10, 0); len(runs) != 0 {
		t.Errorf("a refused log stored %d runs", len(runs))
	}
	// Raising the allowance replays the same upload, kept, without sending it again.
	if len(logs.uploads(t)) != 1 {
		t.Fatalf("uploads: %v", logs.uploads(t))
	}
	fields := append(goodFields(), [2]string{"log_upload", "upload/" + logs.uploads(t)[0]})
	fields[4] = [2]string{"max_bad_pct", "20"}
	w = l.do(shadowPost(t, fields, nil))
	if w.Code != http.StatusSeeOther {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
}

func TestShadowRunPage(t *testing.T) {
	t.Parallel()
	l, _ := newShadowLab(t, Options{}, shadowLogText(0))
	w := l.do(shadowPost(t, append(goodFields(), [2]string{"log", "day.log"}, [2]string{"name", "yesterday"}), nil))
	if w.Code != http.StatusSeeOther {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/runs/")
	if run := l.wait(id); run.Status != storage.StatusDone || run.Kind != storage.KindShadow || run.Name != "yesterday" {
		t.Fatalf("%+v", run)
	}
	w = l.get("/runs/" + id)
	body := w.Body.String()
	for _, want := range []string{`id="shadow-keys"`, "<code>10.0.0.1</code>", `id="shadow-timeline"`, `data-option=`,
		`id="shadow-recommendation"`, "Recommended: rate ×", `id="shadow-recommended-config"`, "limit_req_zone $binary_remote_addr zone=perip:",
		"shadow-whatif.csv", "manifest.json", "What the service would have seen"} {
		if !strings.Contains(body, htmlEscape(want)) && !strings.Contains(body, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
	if w := l.get("/runs/" + id + "/files/shadow.csv"); w.Code != http.StatusOK || !strings.HasPrefix(w.Body.String(), "key,requests,limited") {
		t.Errorf("shadow.csv: %d %.200s", w.Code, w.Body.String())
	}
	// "Edit as new replay" fills the form from the run (also / ?from=ID).
	if w := l.get("/?from=" + id); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/shadow?from="+id {
		t.Errorf("/?from=: %d %s", w.Code, w.Header().Get("Location"))
	}
	if body := l.get("/shadow?from=" + id).Body.String(); !strings.Contains(body, `value="yesterday"`) || !strings.Contains(body, `<option value="day.log" selected>`) ||
		!strings.Contains(body, "zone=perip burst=2 nodelay") {
		t.Errorf("the form from the run:\n%s", body)
	}
	// A re-run replays the stored document: the same bytes, manifest.json
	// included, which the re-run's page checks file by file.
	w = l.postForm("/runs/"+id+"/rerun", nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("re-run: %d %s", w.Code, w.Body.String())
	}
	again := strings.TrimPrefix(w.Header().Get("Location"), "/runs/")
	if run := l.wait(again); run.Status != storage.StatusDone || run.RerunOf != id {
		t.Fatalf("%+v", run)
	}
	if body := l.get("/runs/" + again).Body.String(); !strings.Contains(body, "rerun-check ok") || strings.Contains(body, "mismatch") {
		t.Errorf("the re-run's check:\n%s", body)
	}
	// The sweep's pages answer a replay without a 5xx.
	for _, p := range []string{"/runs", "/api/runs/" + id, "/api/runs", "/compare?runs=" + id + "," + again, "/runs/" + id + "/export",
		"/calculus/edit/" + id, "/api/runs/" + id + "/export", "/runs/" + id + "/files.zip", "/runs/" + id + "/events"} {
		if w := l.get(p); w.Code >= 500 {
			t.Errorf("%s: %d %.300s", p, w.Code, w.Body.String())
		}
	}
	a, _ := l.store.File(t.Context(), id, "manifest.json")
	b, _ := l.store.File(t.Context(), again, "manifest.json")
	if a == nil || b == nil || !bytes.Equal(a.Data, b.Data) || !strings.Contains(string(a.Data), `"sha256": "-"`) {
		t.Errorf("manifests differ:\n%s\n%s", a.Data, b.Data)
	}
}

// shadowBlock is the form's field holding the input of that id.
func shadowBlock(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no input %s in the page", id)
	}
	start := strings.LastIndex(body[:i], `<div class="field`)
	end := strings.Index(body[i:], "</div>")
	return body[start : i+end]
}

// An uploaded log goes with the last run that replays it (a re-run reads
// its run's log); a --traces file stays whatever is deleted.
func TestDeletingReplaysRemovesTheirUpload(t *testing.T) {
	t.Parallel()
	l, logs := newShadowLab(t, Options{}, shadowLogText(0))
	replay := func(fields [][2]string, log []byte) string {
		t.Helper()
		w := l.do(shadowPost(t, fields, log))
		if w.Code != http.StatusSeeOther {
			t.Fatalf("%d %s", w.Code, w.Body.String())
		}
		id := strings.TrimPrefix(w.Header().Get("Location"), "/runs/")
		if run := l.wait(id); run.Status != storage.StatusDone {
			t.Fatalf("%+v", run)
		}
		return id
	}
	uploaded := replay(goodFields(), []byte(shadowLogText(0)))
	fromTraces := replay(append(goodFields(), [2]string{"log", "day.log"}), nil)
	w := l.postForm("/runs/"+uploaded+"/rerun", nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("re-run: %d %s", w.Code, w.Body.String())
	}
	again := strings.TrimPrefix(w.Header().Get("Location"), "/runs/")
	if run := l.wait(again); run.Status != storage.StatusDone {
		t.Fatalf("%+v", run)
	}
	del := func(id string) {
		t.Helper()
		if w := l.postForm("/runs/"+id+"/delete", url.Values{"confirm": {"yes"}}); w.Code != http.StatusSeeOther {
			t.Fatalf("delete %s: %d %s", id, w.Code, w.Body.String())
		}
	}
	if len(logs.uploads(t)) != 1 {
		t.Fatalf("uploads: %v", logs.uploads(t))
	}
	del(uploaded)
	if len(logs.uploads(t)) != 1 {
		t.Errorf("the upload went while its re-run still reads it: %v", logs.uploads(t))
	}
	del(again)
	if up := logs.uploads(t); len(up) != 0 {
		t.Errorf("the upload stayed after the last run reading it went: %v", up)
	}
	del(fromTraces)
	if !logs.Exists("day.log") {
		t.Error("deleting a replay removed the --traces file it read")
	}
}
