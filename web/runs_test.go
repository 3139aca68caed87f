package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/seedlab"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

// TestSubmitRunDownloadRerun follows a sweep defined in the form: it runs,
// its page shows charts and files, every download equals what the CLI
// writes for the same config, and a re-run matches file by file.
func TestSubmitRunDownloadRerun(t *testing.T) {
	t.Parallel()
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
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
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
		if cd := w.Header().Get("Content-Disposition"); cd != `attachment; filename=`+id+"-"+f.Name && cd != `attachment; filename="`+id+"-"+f.Name+`"` {
			t.Errorf("%s: Content-Disposition %q", f.Name, cd)
		}
	}
	sum := sha256.Sum256(l.get("/runs/" + id + "/files/bp-post3-burst-sweep.csv").Body.Bytes())
	if hex.EncodeToString(sum[:]) != seedlab.Post3BurstSweepSHA256 {
		t.Errorf("bp-post3-burst-sweep.csv sha256 %x, want the seed lab's %s", sum, seedlab.Post3BurstSweepSHA256)
	}
	if w := l.get("/runs/" + id + "/files/nope.csv"); w.Code != http.StatusNotFound {
		t.Errorf("missing file: %d", w.Code)
	}

	// A chosen point; the default point; a point out of range is refused.
	if w := l.get("/runs/" + id + "?point=3"); !strings.Contains(w.Body.String(), "Over time, at token-bucket burst=8") {
		t.Error("?point=3 does not show token-bucket burst=8")
	}
	if w := l.get("/runs/" + id); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "Over time, at token-bucket burst=20") {
		t.Error("default point is not the shaping report's burst 20")
	}
	if w := l.get("/runs/" + id + "?point=999"); w.Code != http.StatusBadRequest {
		t.Errorf("?point=999: %d, want 400", w.Code)
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

// TestRerunAcrossEngineVersions: a re-run of a run stored by another engine
// version says so beside the comparison: manifest.json records the engine
// version and cannot match ("1 of 5 files differ" read as a failed
// reproducibility check).
func TestRerunAcrossEngineVersions(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	ctx := context.Background()
	doc, cfg := form.Default().Document()
	if cfg == nil {
		t.Fatal("default form does not decode")
	}
	res, err := sweep.Run(ctx, cfg, sweep.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	orig := &storage.Run{Name: "old engine", Config: doc, Seed: cfg.Seed, EngineVersion: "0.9.0",
		Limiters: []string{"token-bucket"}, PointsTotal: len(cfg.Points())}
	if err := l.store.Create(ctx, orig); err != nil {
		t.Fatal(err)
	}
	if err := l.store.Complete(ctx, orig.ID, res, files); err != nil {
		t.Fatal(err)
	}
	w := l.postForm("/runs/"+orig.ID+"/rerun", nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("rerun: %d", w.Code)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/runs/")
	if run := l.wait(id); run.Status != storage.StatusDone {
		t.Fatalf("rerun %s: %s", run.Status, run.Error)
	}
	body := l.get("/runs/" + id).Body.String()
	if !strings.Contains(body, "engine-note") || !strings.Contains(body, "0.9.0") || !strings.Contains(body, experiments.EngineVersion) {
		t.Error("the re-run check does not say the engine changed")
	}
	// Same engine: no note.
	w = l.postForm("/runs/"+id+"/rerun", nil)
	id2 := strings.TrimPrefix(w.Header().Get("Location"), "/runs/")
	l.wait(id2)
	if body := l.get("/runs/" + id2).Body.String(); strings.Contains(body, "engine-note") {
		t.Error("an engine note between runs of the same engine")
	}
}

func TestCancelQueued(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	id := runIDFrom(t, l.postForm("/runs", formValuesOf(form.Default())))
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

// TestRunWithoutArrivalsSaysSo: a run whose workload produced no arrivals
// (Poisson 90 req/s in a 1 ms window) says so above its all-zero charts.
func TestRunWithoutArrivalsSaysSo(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	v := formValuesOf(form.Default())
	v.Set("duration_ms", "1")
	id := runIDFrom(t, l.postForm("/runs", v))
	if run := l.wait(id); run.Status != "done" {
		t.Fatalf("run %s: %s", run.Status, run.Error)
	}
	body := l.get("/runs/" + id).Body.String()
	if !strings.Contains(body, "0 arrivals") {
		t.Skip("the workload produced arrivals after all")
	}
	if !strings.Contains(body, "produced no arrivals") {
		t.Error("a run without arrivals shows zero charts without a word why")
	}
}

// TestNoScriptInjection: user text (run and limiter names) never reaches a
// script; the page's only scripts are the two static files.
func TestNoScriptInjection(t *testing.T) {
	t.Parallel()
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

func TestCrossOriginPost(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	req := httptest.NewRequest(http.MethodPost, "/runs", strings.NewReader(formValuesOf(form.Default()).Encode()))
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

// TestHeadRequests: HEAD answers like GET without a body (it was 405), so
// `curl -I` on a download shows its size and sha256.
func TestHeadRequests(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	id := runIDFrom(t, l.postForm("/runs", formValuesOf(form.Default())))
	l.wait(id)
	for _, path := range []string{"/", "/runs", "/runs/" + id, "/runs/" + id + "/files/results.csv", "/api/runs/" + id, "/calculus"} {
		w := l.do(httptest.NewRequest(http.MethodHead, path, nil))
		if w.Code != http.StatusOK {
			t.Errorf("HEAD %s: %d", path, w.Code)
		}
	}
	w := l.do(httptest.NewRequest(http.MethodHead, "/runs/"+id+"/files/results.csv", nil))
	if w.Header().Get("X-Checksum-Sha256") == "" || w.Header().Get("Content-Disposition") == "" {
		t.Errorf("HEAD of a download lacks its headers: %v", w.Header())
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
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

// TestChainRunEditsAsDocument: the form cannot show a chain, so editing a
// chain run goes to the config document editor.
func TestChainRunEditsAsDocument(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	l := newLab(t, false, PageSize+5) // never started: the runs stay queued
	doc := must(form.Default())
	for range PageSize + 2 {
		if w := l.postJSON("/api/runs", doc); w.Code != http.StatusAccepted {
			t.Fatalf("submit: %d", w.Code)
		}
	}
	count := func(body string) int { return strings.Count(body, `<tr data-run=`) }
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
