package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

// doneRun runs the default form's sweep to done and returns its id.
func (l *lab) doneRun() string {
	l.t.Helper()
	id := runIDFrom(l.t, l.postForm("/runs", formValuesOf(form.Default())))
	if run := l.wait(id); run.Status != storage.StatusDone {
		l.t.Fatalf("run %s: %s (%s)", id, run.Status, run.Error)
	}
	return id
}

// storeRun stores a done run of the default form's config with the given
// output files, as the runner would.
func (l *lab) storeRun(files []output.File) string {
	l.t.Helper()
	ctx := context.Background()
	doc, cfg := form.Default().Document()
	res, err := sweep.Run(ctx, cfg, sweep.Options{Workers: 2})
	if err != nil {
		l.t.Fatal(err)
	}
	run := &storage.Run{Name: "stored", Config: doc, Seed: cfg.Seed, EngineVersion: experiments.EngineVersion, PointsTotal: len(cfg.Points())}
	if err := l.store.Create(ctx, run); err != nil {
		l.t.Fatal(err)
	}
	if err := l.store.Complete(ctx, run.ID, res, files); err != nil {
		l.t.Fatal(err)
	}
	return run.ID
}

// TestStreamedDownloads: files of several chunks, exactly one chunk and
// none come over a real connection byte for byte, with the stored
// Content-Length and X-Checksum-Sha256; HEAD gives the headers alone.
func TestStreamedDownloads(t *testing.T) {
	l := newLab(t, false, 4)
	var files []output.File
	for i, n := range []int{5*storage.ChunkBytes + 123, storage.ChunkBytes, 0, 10} {
		data := make([]byte, n)
		for j := range data {
			data[j] = byte('a' + (j*31+j/storage.ChunkBytes+i)%26)
		}
		files = append(files, output.File{Name: "file" + strconv.Itoa(i) + ".csv", Data: data})
	}
	id := l.storeRun(files)
	srv := httptest.NewServer(l.srv)
	defer srv.Close()
	for _, f := range files {
		url := srv.URL + "/runs/" + id + "/files/" + f.Name
		// A client that takes gzip gets the file compressed (the Go client
		// asks for it and inflates it), the checksum of its bytes.
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		zipped, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(zipped, f.Data) || len(f.Data) >= minCompressBytes && !resp.Uncompressed {
			t.Errorf("%s gzip: %d bytes (inflated %v), %v", f.Name, len(zipped), resp.Uncompressed, err)
		}
		// One that does not gets it as stored, with its length.
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept-Encoding", "identity")
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		sum := sha256.Sum256(f.Data)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, f.Data) {
			t.Errorf("%s: %d, %d bytes, want %d bytes as stored", f.Name, resp.StatusCode, len(body), len(f.Data))
		}
		if resp.ContentLength != int64(len(f.Data)) || resp.Header.Get("X-Checksum-Sha256") != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: Content-Length %d, X-Checksum-Sha256 %s", f.Name, resp.ContentLength, resp.Header.Get("X-Checksum-Sha256"))
		}
		req, _ = http.NewRequest(http.MethodHead, url, nil)
		req.Header.Set("Accept-Encoding", "identity")
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(f.Data)) || resp.Header.Get("X-Checksum-Sha256") == "" {
			t.Errorf("HEAD %s: %d, Content-Length %d", f.Name, resp.StatusCode, resp.ContentLength)
		}
	}
}

// fill takes every place of a gate; the returned func gives them back.
func fill(g *gate) (release func()) {
	n := 0
	for len(g.slots) < cap(g.slots) {
		g.slots <- struct{}{}
		n++
	}
	return func() {
		for range n {
			g.leave()
		}
	}
}

// TestHeavyLimitFull: with the places of renders and of downloads taken,
// downloads and renders of a done run's page get 503 with Retry-After (the
// error page), light pages and cached pages are still served, a request
// that finds a place free within HeavyWait is served, and submissions,
// whose bodies the body budget bounds, take no place: a client that sends
// its body slowly locks out nothing.
func TestHeavyLimitFull(t *testing.T) {
	l := newLabWith(t, true, 8, Options{HeavyLimit: 1, HeavyWait: 20 * time.Millisecond})
	// The trickling body below is held until the test's end: the body
	// rate's grace (5 s, which a loaded machine can spend on the test's
	// requests) must not cut it (408); here it is not under test.
	l.srv.bodyGrace = time.Hour
	id := l.doneRun()
	cached := l.doneRun()
	if w := l.get("/runs/" + cached); w.Code != http.StatusOK {
		t.Fatalf("run page: %d", w.Code)
	}

	// A submission whose body trickles in holds no place.
	doc := must(form.Default())
	pr, pw := io.Pipe()
	slow := httptest.NewRequest(http.MethodPost, "/api/runs", pr)
	slow.ContentLength = int64(len(doc))
	slow.Header.Set("Content-Type", "application/json")
	slowDone := make(chan int)
	go func() { slowDone <- l.do(slow).Code }()
	time.Sleep(20 * time.Millisecond)
	if w := l.get("/runs/" + id + "/files/results.csv"); w.Code != http.StatusOK {
		t.Errorf("download while a submission's body trickles: %d", w.Code)
	}

	releaseRenders, releaseDownloads := fill(l.srv.heavy), fill(l.srv.downloads)
	busy := func(w *httptest.ResponseRecorder, what string) {
		t.Helper()
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != strconv.Itoa(RetryAfterSeconds) {
			t.Errorf("%s with the limit full: %d, Retry-After %q; want 503 and %d", what, w.Code, w.Header().Get("Retry-After"), RetryAfterSeconds)
		}
	}
	w := l.get("/runs/" + id + "/files/results.csv")
	busy(w, "download")
	if !strings.Contains(w.Header().Get("Content-Type"), "text/html") || !strings.Contains(w.Body.String(), "The lab is busy") {
		t.Errorf("busy download: not the error page: %s %.200s", w.Header().Get("Content-Type"), w.Body)
	}
	busy(l.get("/runs/"+id), "render of a done run's page")
	for _, path := range []string{"/runs/" + cached, "/runs", "/", "/api/runs/" + id} {
		if w := l.get(path); w.Code != http.StatusOK {
			t.Errorf("%s with the heavy limits full: %d, want 200", path, w.Code)
		}
	}
	if w := l.postJSON("/api/runs", must(form.Default())); w.Code != http.StatusAccepted {
		t.Errorf("API submission with the heavy limits full: %d, want 202", w.Code)
	}
	releaseRenders()

	// A download waits for a place that comes free in time.
	l.srv.downloads.wait = time.Minute // the place comes free 50 ms later; a stalled machine may take seconds
	got := make(chan *httptest.ResponseRecorder)
	go func() { got <- l.get("/runs/" + id + "/files/results.csv") }()
	time.Sleep(50 * time.Millisecond)
	select {
	case w := <-got:
		t.Fatalf("download answered %d while the place was taken", w.Code)
	default:
	}
	releaseDownloads()
	if w := <-got; w.Code != http.StatusOK {
		t.Errorf("download after the place came free: %d", w.Code)
	}
	if n := len(l.srv.downloads.slots) + len(l.srv.heavy.slots); n != 0 {
		t.Errorf("%d places still taken", n)
	}
	go func() {
		pw.Write(doc)
		pw.Close()
	}()
	if code := <-slowDone; code != http.StatusAccepted {
		t.Errorf("the slow submission: %d", code)
	}
}

// TestFinishedPageCache: a finished run's page is rendered once per point
// and served with an ETag (304 on revalidation); concurrent first views
// render once; ?point=N keys the cache, out-of-range N shares the
// default's page; deleting the run drops its pages; a re-run whose
// original is deleted is rendered again; live pages are not cached.
func TestFinishedPageCache(t *testing.T) {
	l := newLab(t, true, 8)
	id := l.doneRun()
	renders := func() int64 { return l.srv.pages.renders.Load() }

	// Concurrent first views: one render.
	var wg sync.WaitGroup
	bodies := make([]string, 20)
	for i := range bodies {
		wg.Go(func() { bodies[i] = l.get("/runs/" + id).Body.String() })
	}
	wg.Wait()
	if n := renders(); n != 1 {
		t.Errorf("20 concurrent views of a new page: %d renders, want 1", n)
	}
	w := l.get("/runs/" + id)
	etag := w.Header().Get("ETag")
	if w.Code != http.StatusOK || etag == "" || w.Header().Get("Cache-Control") != "no-cache" || !strings.Contains(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("cached page: %d, ETag %q, Cache-Control %q", w.Code, etag, w.Header().Get("Cache-Control"))
	}
	for i, b := range bodies {
		if b != w.Body.String() {
			t.Fatalf("view %d differs from the cached page", i)
		}
	}
	if sum := sha256.Sum256(w.Body.Bytes()); etag != `"`+hex.EncodeToString(sum[:16])+`"` {
		t.Errorf("ETag %s is not the page's sha256", etag)
	}
	checkScripts(t, "/runs/"+id, w.Body.String())

	cond := func(path, inm string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("If-None-Match", inm)
		return l.do(req)
	}
	if w := cond("/runs/"+id, etag); w.Code != http.StatusNotModified || w.Body.Len() != 0 || w.Header().Get("ETag") != etag {
		t.Errorf("revalidation: %d, %d bytes, ETag %q; want 304, none, %s", w.Code, w.Body.Len(), w.Header().Get("ETag"), etag)
	}
	if w := cond("/runs/"+id, `"other", `+etag); w.Code != http.StatusNotModified {
		t.Errorf("revalidation with two tags: %d", w.Code)
	}
	if w := cond("/runs/"+id, `"other"`); w.Code != http.StatusOK || w.Body.Len() == 0 {
		t.Errorf("a stale tag: %d", w.Code)
	}
	if w := l.do(httptest.NewRequest(http.MethodHead, "/runs/"+id, nil)); w.Code != http.StatusOK || w.Header().Get("ETag") != etag {
		t.Errorf("HEAD: %d, ETag %q", w.Code, w.Header().Get("ETag"))
	}

	// ?point=N: its own page; an empty one is the default's; out-of-range
	// and junk are 400 (TestBadInputs).
	if w := l.get("/runs/" + id + "?point="); w.Header().Get("ETag") != etag {
		t.Errorf("?point=: ETag %q, want the default page's", w.Header().Get("ETag"))
	}
	for _, q := range []string{"?point=999", "?point=-2", "?point=x"} {
		if w := l.get("/runs/" + id + q); w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", q, w.Code)
		}
	}
	before := renders()
	p1 := l.get("/runs/" + id + "?point=1")
	if p1.Header().Get("ETag") == etag || p1.Body.String() == w.Body.String() {
		t.Error("?point=1 is the default page")
	}
	l.get("/runs/" + id + "?point=1")
	if n := renders() - before; n != 1 {
		t.Errorf("two views of ?point=1: %d renders, want 1", n)
	}
	if renders() != 2 {
		t.Errorf("%d renders in all, want 2 (the default page, point 1)", renders())
	}
	if e := l.srv.pages.get(pageKey{id: id, point: -1, engine: experiments.EngineVersion}); e == nil || e.etag != etag {
		t.Error("the page is not kept under this engine version")
	}

	// A re-run, then its original deleted: the re-run's page loses the
	// link; the original's pages are gone.
	rid := runIDFrom(t, l.postForm("/runs/"+id+"/rerun", nil))
	if run := l.wait(rid); run.Status != storage.StatusDone {
		t.Fatalf("re-run: %s", run.Status)
	}
	rw := l.get("/runs/" + rid)
	if !strings.Contains(rw.Body.String(), "· re-run of <a") {
		t.Fatal("the re-run page does not name its original")
	}
	if err := l.store.Delete(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if w := cond("/runs/"+id, etag); w.Code != http.StatusNotFound {
		t.Errorf("deleted run revalidated: %d, want 404", w.Code)
	}
	l.srv.pages.mu.Lock()
	for k := range l.srv.pages.entries {
		if k.id == id {
			t.Errorf("a page of the deleted run is still cached: %+v", k)
		}
	}
	l.srv.pages.mu.Unlock()
	if w := cond("/runs/"+rid, rw.Header().Get("ETag")); w.Code != http.StatusOK || strings.Contains(w.Body.String(), "· re-run of <a") {
		t.Errorf("re-run page after its original was deleted: %d, still links it: %v", w.Code, strings.Contains(w.Body.String(), "· re-run of <a"))
	}

	// A run deleted by another process (another Store on the file): its
	// page is served from the cache for at most pageRecheck.
	other, err := storage.Open(context.Background(), l.path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	oid := l.doneRun()
	if w := l.get("/runs/" + oid); w.Code != http.StatusOK {
		t.Fatalf("run page: %d", w.Code)
	}
	if err := other.Delete(context.Background(), oid); err != nil {
		t.Fatal(err)
	}
	if w := l.get("/runs/" + oid); w.Code != http.StatusOK {
		t.Errorf("a page checked a moment ago: %d, want it from the cache", w.Code)
	}
	e := l.srv.pages.get(pageKey{id: oid, point: -1, engine: experiments.EngineVersion})
	if e == nil {
		t.Fatal("page not cached")
	}
	l.srv.pages.confirm(e, e.gen, time.Now().Add(-pageRecheck))
	if w := l.get("/runs/" + oid); w.Code != http.StatusNotFound {
		t.Errorf("a page deleted elsewhere, after pageRecheck: %d, want 404", w.Code)
	}

	// Live pages are rendered every time, without an ETag.
	q := newLab(t, false, 4)
	qid := runIDFrom(t, q.postForm("/runs", formValuesOf(form.Default())))
	for range 2 {
		if w := q.get("/runs/" + qid); w.Code != http.StatusOK || w.Header().Get("ETag") != "" {
			t.Errorf("queued run's page: %d, ETag %q", w.Code, w.Header().Get("ETag"))
		}
	}
	if n, _ := q.srv.pages.usage(); n != 0 || q.srv.pages.renders.Load() != 0 {
		t.Errorf("a queued run's page went to the cache")
	}
}

// TestPageCacheBound: the cache holds at most its byte bound, dropping
// the least recently used pages first.
func TestPageCacheBound(t *testing.T) {
	l := newLab(t, true, 8)
	id := l.doneRun()
	run, err := l.store.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.PointsTotal < 6 {
		t.Fatalf("the default sweep has %d points; the test wants 6", run.PointsTotal)
	}
	// Room for four of the six pages, not five.
	largest := 0
	for p := range 6 {
		l.get("/runs/" + id + "?point=" + strconv.Itoa(p))
		e := l.srv.pages.get(pageKey{id: id, point: p, engine: experiments.EngineVersion})
		if e == nil {
			t.Fatalf("point %d not cached", p)
		}
		largest = max(largest, e.cost())
	}
	l.srv.pages.drop(id)
	bound := 4*largest + 16
	l.srv.pages.max = bound
	for p := range 6 {
		l.get("/runs/" + id + "?point=" + strconv.Itoa(p))
		l.get("/runs/" + id + "?point=0") // point 0 stays recently used
		if n, b := l.srv.pages.usage(); b > bound || n > 4 {
			t.Fatalf("after point %d: %d pages, %d bytes; bound %d bytes", p, n, b, bound)
		}
	}
	if n, _ := l.srv.pages.usage(); n != 4 {
		t.Errorf("%d pages kept, want 4", n)
	}
	for p, want := range []bool{true, false, false, true, true, true} {
		if got := l.srv.pages.get(pageKey{id: id, point: p, engine: experiments.EngineVersion}) != nil; got != want {
			t.Errorf("point %d cached: %v, want %v", p, got, want)
		}
	}
	// A page past a quarter of the bound is served, not kept.
	l.srv.pages.max = largest
	l.srv.pages.drop(id)
	if w := l.get("/runs/" + id); w.Code != http.StatusOK || w.Header().Get("ETag") == "" {
		t.Errorf("uncached page: %d", w.Code)
	}
	if n, _ := l.srv.pages.usage(); n != 0 {
		t.Errorf("%d pages kept past the per-page bound", n)
	}
}

func TestETagMatch(t *testing.T) {
	const tag = `"abc"`
	for _, c := range []struct {
		header string
		want   bool
	}{{`"abc"`, true}, {`W/"abc"`, true}, {`"x", "abc"`, true}, {`"x","abc" `, true}, {`*`, true}, {``, false}, {`"abcd"`, false}, {`abc`, false}} {
		if got := etagMatch(c.header, tag); got != c.want {
			t.Errorf("If-None-Match %q: %v, want %v", c.header, got, c.want)
		}
	}
}
