package web

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/ratelab/ratelab/internal/seedlab"
	"github.com/ratelab/ratelab/web/form"
)

// findChromium returns the Chromium binary: $RATELAB_CHROMIUM, Debian's
// /usr/lib/chromium/chromium, or chromium / google-chrome on PATH.
func findChromium() string {
	if p := os.Getenv("RATELAB_CHROMIUM"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err == nil {
		return "/usr/lib/chromium/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// chromium is the Chromium binary of a browser test. The test skips when
// Chromium is missing (or with -short), unless RATELAB_E2E=1 (CI), where
// it fails.
func chromium(t *testing.T) string {
	t.Helper()
	required := os.Getenv("RATELAB_E2E") == "1"
	exe := findChromium()
	if exe == "" {
		if required {
			t.Fatal("RATELAB_E2E=1 but no Chromium: install it (apt-get install -y chromium) or set RATELAB_CHROMIUM")
		}
		t.Skip("no Chromium found; set RATELAB_E2E=1 to make this test required")
	}
	if testing.Short() && !required {
		t.Skip("-short")
	}
	return exe
}

// sharedChromium is the one headless Chromium (1440×1000 windows) of the
// package's browser tests: starting one costs about 1.7 s of CPU, so the
// tests share it, each in its own tab in its own browser context (cookies,
// storage and downloads kept apart). TestMain closes it.
var sharedChromium struct {
	once    sync.Once
	ctx     context.Context // the browser's first tab: tests open theirs beside it
	cancel  func()
	dataDir string
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedChromium.cancel != nil {
		sharedChromium.cancel()
		os.RemoveAll(sharedChromium.dataDir)
	}
	if err := closePresetRuns(); err != nil {
		fmt.Fprintln(os.Stderr, "the shared preset lab:", err)
		code = cmp.Or(code, 1)
	}
	os.Exit(code)
}

func startChromium(exe string) {
	c := &sharedChromium
	if c.dataDir, c.err = os.MkdirTemp("", "ratelab-chromium-"); c.err != nil {
		return
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true), chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(c.dataDir), chromedp.WindowSize(1440, 1000))
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	c.ctx, c.cancel = ctx, func() { cancelTab(); cancelAlloc() }
	if err := chromedp.Do(ctx); err != nil {
		c.err = fmt.Errorf("start Chromium %s: %w", exe, err)
	}
}

// browserTurn lets one browser test at a time hold a tab: the browser
// tests run in parallel with the package's other tests (t.Parallel), so
// their Go work (runs, other tests' requests) overlaps Chromium's, but
// not with each other (two tabs rendering at once on 2 cores made each
// slower and the package no faster).
var browserTurn = make(chan struct{}, 1)

// newBrowser opens a tab of the shared headless Chromium (started on first
// use) in a browser context of its own, for one test of at most timeout
// (and at least browserAtLeast), counted from when the test's turn
// comes (browserTurn); it closes with the test.
func newBrowser(t *testing.T, exe string, timeout time.Duration) context.Context {
	t.Helper()
	timeout = max(timeout, browserAtLeast)
	browserTurn <- struct{}{}
	t.Cleanup(func() { <-browserTurn })
	sharedChromium.once.Do(func() { startChromium(exe) })
	if sharedChromium.err != nil {
		t.Fatal(sharedChromium.err)
	}
	ctx, cancelTab := chromedp.NewContext(sharedChromium.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancelTab)
	ctx, cancelTime := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelTime)
	return ctx
}

// pollAtLeast is the shortest wait of a browser test's poll for a
// condition. A poll's timeout only bounds a failure (what a page takes is
// logged, never asserted), and a loaded machine (CI, or five test runs on
// two cores) can take many times the usual to navigate, fetch and draw:
// a few seconds' bound would fail a test that is only slow. The test's
// own deadline (newBrowser) still bounds the whole.
const pollAtLeast = time.Minute

// browserAtLeast is the shortest deadline of a browser test: only a hang
// guard. At load average 24 TestBrowserParetoSelects took 46 s of its
// 120 s (Chromium's start and a sweep included), too close for a machine
// more loaded still.
const browserAtLeast = 5 * time.Minute

// browserLog collects what the page did: every request URL and every
// JavaScript error (exceptions, console.error, CSP and other non-network
// errors the browser logs).
type browserLog struct {
	mu       sync.Mutex
	requests []string
	errors   []string
}

func (b *browserLog) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, e.Request.URL)
	case *runtime.EventExceptionThrown:
		msg := e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			msg += " " + e.ExceptionDetails.Exception.Description
		}
		b.errors = append(b.errors, "exception: "+msg)
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			b.errors = append(b.errors, "console.error: "+strings.Join(parts, " "))
		}
	case *log.EventEntryAdded:
		// A 4xx answer the test asks for is logged by the network source;
		// anything else at error level (a CSP violation, say) is a failure.
		if e.Entry.Level == log.EntryLevelError && e.Entry.Source != log.EntrySourceNetwork {
			b.errors = append(b.errors, fmt.Sprintf("log %s: %s", e.Entry.Source, e.Entry.Text))
		}
	}
}

func (b *browserLog) snapshot() (requests, errors []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requests...), append([]string(nil), b.errors...)
}

// TestBrowserEndToEnd drives the lab in headless Chromium as a new user
// would: preset, run, live page, charts, download, bad form. It skips when
// Chromium is missing, unless RATELAB_E2E=1 (CI), where it fails.
func TestBrowserEndToEnd(t *testing.T) {
	t.Parallel()
	exe := chromium(t)
	l := newLab(t, true, 4)
	// The Host is checked as lab serve checks it: the browser's
	// 127.0.0.1:port is served.
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = New(l.store, l.runner, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Listen: ts.Listener.Addr().String()})
	ts.Start()
	t.Cleanup(ts.Close)
	downloads := t.TempDir()
	ctx := newBrowser(t, exe, 240*time.Second)

	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium %s: %v", exe, err)
	}
	var blog browserLog
	if err := chromedp.Listen(ctx, blog.listen); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads,
		BrowserContextID: chromedp.FromContext(ctx).BrowserContextID}); err != nil {
		t.Fatal(err)
	}
	step := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return v
	}
	// poll evaluates js until it is true; errors while the page navigates
	// (a submit, a redirect, the reload at the end of a run) are retried.
	poll := func(what, js string, timeout time.Duration) {
		t.Helper()
		timeout = max(timeout, pollAtLeast)
		var last error
		for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
			if err == nil && ok {
				return
			}
			last = err
		}
		t.Fatalf("waiting for %s: not true after %s (last error: %v)", what, timeout, last)
	}

	// 1. The form, filled from the token-vs-leaky preset through the menu.
	step("open the lab", chromedp.EmulateViewport(1440, 1000), chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#sweep-form")))
	// SetValue fires the select's change event; app.js submits the menu.
	step("choose the preset", chromedp.SetValue(chromedp.CSS("#preset"), "token-vs-leaky"))
	poll("the preset to load", `location.search === '?preset=token-vs-leaky' && document.readyState === 'complete' && !!document.getElementById('f-parts-0-segments')`, 10*time.Second)
	if seg := eval(`document.getElementById('f-parts-0-segments').value`); seg != "20,1000\n600,200" {
		t.Fatalf("preset segments %q", seg)
	}
	if hidden := eval(`String(document.getElementById('f-parts-0-rate_rps').closest('.field').hidden)`); hidden != "true" {
		t.Errorf("a demand curve shows the rate input (hidden=%s)", hidden)
	}

	// 2. Run it and wait for the permalink to say done, with charts drawn.
	step("submit", chromedp.Click(chromedp.CSS("#run-button")))
	poll("the run to finish", `location.pathname.startsWith('/runs/') && document.readyState === 'complete' &&
		!!document.querySelector('#run-status .badge') && document.querySelector('#run-status .badge').textContent === 'done' &&
		document.querySelectorAll('div.chart[data-drawn]').length > 0`, 60*time.Second)
	permalink := eval(`location.pathname`)
	if v := eval(`echarts.version`); v != "5.4.3" {
		t.Errorf("echarts.version = %q, want 5.4.3", v)
	}
	// Every chart has a canvas with something painted on it, the closed
	// sections' once opened.
	eval(jsOpenAll)
	poll("every chart drawn", `document.querySelectorAll('div.chart[data-drawn]').length === document.querySelectorAll('div.chart').length`, 20*time.Second)
	drawn := eval(`(() => {
		const out = [];
		for (const el of document.querySelectorAll('div.chart')) {
			const c = el.querySelector('canvas');
			if (!c || c.width === 0) { out.push(el.id + ':no canvas'); continue; }
			const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
			let painted = 0;
			for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) painted++;
			if (painted < 1000) out.push(el.id + ':blank');
		}
		return document.querySelectorAll('div.chart').length + ' charts ' + out.join(' ');
	})()`)
	if !strings.HasSuffix(drawn, " charts ") || strings.HasPrefix(drawn, "0 ") {
		t.Errorf("charts not drawn: %s", drawn)
	}
	t.Logf("run page %s: %s", permalink, strings.TrimSpace(drawn))

	// 3. Download the seed lab's file through its link; the browser saves it under
	// its Content-Disposition name, <run-id>-<file>.
	runID := strings.TrimPrefix(permalink, "/runs/")
	step("download", chromedp.Click(chromedp.CSS(`.downloads a[download="`+runID+`-bp-post3-burst-sweep.csv"]`)))
	saved := filepath.Join(downloads, runID+"-bp-post3-burst-sweep.csv")
	var data []byte
	for deadline := time.Now().Add(15 * time.Second); ; {
		var err error
		if data, err = os.ReadFile(saved); err == nil && len(data) > 0 {
			if _, err := os.Stat(saved + ".crdownload"); os.IsNotExist(err) {
				break
			}
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(downloads)
			t.Fatalf("no download at %s (folder holds %v)", saved, entries)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != seedlab.Post3BurstSweepSHA256 {
		t.Errorf("downloaded bp-post3-burst-sweep.csv has sha256 %x, want %s", sum, seedlab.Post3BurstSweepSHA256)
	}

	// 4. With $RATELAB_ARTIFACTS set, the screenshot of the run page (the
	// README's comes from TestBrowserPresetPages).
	if dir := os.Getenv("RATELAB_ARTIFACTS"); dir != "" {
		// The top of the page: header, config, results and the first charts.
		step("resize for the screenshot", chromedp.EmulateViewport(1440, 2300), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		poll("charts resized", `document.querySelector('div.chart canvas') !== null`, 5*time.Second)
		time.Sleep(300 * time.Millisecond) // the resize handler waits 100 ms
		shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "run-page.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// 5. A bad form comes back with the error next to the field, value kept.
	step("open the form", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#sweep-form")),
		chromedp.SetValue(chromedp.CSS("#f-limiters-0-burst"), "1..x"), chromedp.Click(chromedp.CSS("#run-button")))
	poll("the field error", `document.readyState === 'complete' && !!document.querySelector('#f-limiters-0-burst') &&
		!!document.querySelector('#f-limiters-0-burst').closest('.field').querySelector('.field-error')`, 10*time.Second)
	if msg := eval(`document.querySelector('#f-limiters-0-burst').closest('.field').querySelector('.field-error').textContent`); !strings.Contains(msg, "range") {
		t.Errorf("field error %q", msg)
	}
	if v := eval(`document.querySelector('#f-limiters-0-burst').value`); v != "1..x" {
		t.Errorf("bad value not kept: %q", v)
	}

	// 6. A bigger sweep typed into the form shows live progress over SSE:
	// the bar moves while the run is running, then the page reloads as done.
	step("define a bigger sweep", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#sweep-form")),
		chromedp.SetValue(chromedp.CSS("#f-name"), "live progress"),
		chromedp.SetValue(chromedp.CSS("#f-duration_ms"), "60000"),
		chromedp.SetValue(chromedp.CSS("#f-parts-0-rate_rps"), "5000"),
		chromedp.SetValue(chromedp.CSS("#f-server-workers"), "50"),
		chromedp.SetValue(chromedp.CSS("#f-limiters-0-rate_rps"), "4500"),
		chromedp.SetValue(chromedp.CSS("#f-limiters-0-burst"), "1..60"),
		chromedp.Click(chromedp.CSS("#run-button")))
	poll("a progress event while running", `!!document.querySelector('[data-events][data-seen]') &&
		!!document.getElementById('run-progress') &&
		document.getElementById('run-progress').value > 0 &&
		/^\d+ \/ 60 points · running$/.test(document.getElementById('run-progress-text').textContent)`, 30*time.Second)
	poll("the bigger sweep to finish", `document.readyState === 'complete' && !document.getElementById('run-progress') &&
		!!document.querySelector('#run-status .badge') && document.querySelector('#run-status .badge').textContent === 'done'`, 90*time.Second)

	// 7. A load too large to hold (8 million arrivals) streams to its two
	// points at once: no point ends before the load does, and the bar and
	// the text say how much of it is done meanwhile.
	step("define a streamed sweep", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#sweep-form")),
		chromedp.SetValue(chromedp.CSS("#f-name"), "streamed progress"),
		chromedp.SetValue(chromedp.CSS("#f-duration_ms"), "4000000"),
		chromedp.SetValue(chromedp.CSS("#f-parts-0-rate_rps"), "2000"),
		chromedp.SetValue(chromedp.CSS("#f-server-workers"), "4"),
		chromedp.SetValue(chromedp.CSS("#f-limiters-0-rate_rps"), "1500"),
		chromedp.SetValue(chromedp.CSS("#f-limiters-0-burst"), "10, 20"),
		chromedp.Click(chromedp.CSS("#run-button")))
	poll("a streamed pass's progress", `!!document.getElementById('run-progress') &&
		document.getElementById('run-progress').value > 0 && document.getElementById('run-progress').value < 2 &&
		/^0 \/ 2 points · \d+% done · running$/.test(document.getElementById('run-progress-text').textContent)`, 60*time.Second)
	poll("the streamed sweep to finish", `document.readyState === 'complete' && !document.getElementById('run-progress') &&
		!!document.querySelector('#run-status .badge') && document.querySelector('#run-status .badge').textContent === 'done'`, 120*time.Second)

	requests, jsErrors := blog.snapshot()
	for _, e := range jsErrors {
		t.Errorf("browser error: %s", e)
	}
	if len(requests) == 0 {
		t.Error("no requests recorded")
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, ts.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("request left the lab: %s", u)
		}
	}
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Errorf("test server at %s", ts.URL)
	}
}

// TestBrowserRecentRunsFit: the recent-runs sidebar stays inside its card
// with a cancelled run, a run of three limiters and a long unbroken name.
// With the full "2006-01-02 15:04:05" time and a 12rem limiters line its
// table ran past the card's right edge and cut the status badges.
func TestBrowserRecentRunsFit(t *testing.T) {
	t.Parallel()
	exe := chromium(t)
	l := newLab(t, false, 8)
	three := formValuesOf(form.Default())
	three.Set("name", "token-vs-leaky-vs-sliding-window-counter")
	three.Set("limiters.1.type", "leaky-bucket")
	three.Set("limiters.1.rate_rps", "100")
	three.Set("limiters.1.queue", "4")
	three.Set("limiters.2.type", "sliding-window-counter")
	three.Set("limiters.2.limit", "100")
	three.Set("limiters.2.window_ms", "1000")
	runIDFrom(t, l.postForm("/runs", three))
	id := runIDFrom(t, l.postForm("/runs", formValuesOf(form.Default())))
	if w := l.postForm("/runs/"+id+"/cancel", nil); w.Code != http.StatusSeeOther {
		t.Fatalf("cancel: %d", w.Code)
	}
	ts := httptest.NewServer(l.srv)
	t.Cleanup(ts.Close)

	ctx := newBrowser(t, exe, 60*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("aside.recent table"))); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const card = document.querySelector('aside.recent').getBoundingClientRect();
		const out = [];
		for (const el of document.querySelectorAll('aside.recent table, aside.recent .badge, aside.recent td')) {
			const r = el.getBoundingClientRect();
			if (r.right > card.right + 0.5) out.push(el.tagName + '.' + el.className + ' ' + el.textContent.trim().slice(0, 30) + ' right ' + r.right + ' > card ' + card.right);
		}
		return out.join('\n');
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(got) != "" {
		t.Errorf("recent runs overflow their card:\n%s", got)
	}
}
