package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserLab is a lab served to a headless Chromium for one test, with
// helpers: step runs actions, eval evaluates JavaScript to a string, poll
// waits for a JavaScript condition. The test's tab is opened, and the
// browser's turn taken (newBrowser), when the test first uses it (ctx),
// so what a test does before (its sweeps, its HTTP checks) runs beside
// the other browser tests' pages instead of holding the browser idle.
type browserLab struct {
	t       *testing.T
	l       *lab
	url     string
	exe     string
	timeout time.Duration
	tab     context.Context // nil until ctx opens it
	blog    *browserLog
}

func newBrowserLab(t *testing.T, timeout time.Duration) *browserLab {
	t.Helper()
	exe := chromium(t)
	return newBrowserLabOn(t, exe, newLab(t, true, 8), timeout)
}

// newBrowserLabOn is newBrowserLab on the lab l (served by a Server of
// its own).
func newBrowserLabOn(t *testing.T, exe string, l *lab, timeout time.Duration) *browserLab {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = New(l.store, l.runner, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Listen: ts.Listener.Addr().String()})
	ts.Start()
	t.Cleanup(ts.Close)
	return &browserLab{t: t, l: l, url: ts.URL, exe: exe, timeout: timeout, blog: &browserLog{}}
}

// ctx is the test's tab: on first use it waits for the browser's turn,
// opens the tab (newBrowser, the test's deadline counted from there) and
// records what the page does; the test fails on any browser error.
func (b *browserLab) ctx() context.Context {
	b.t.Helper()
	if b.tab != nil {
		return b.tab
	}
	ctx := newBrowser(b.t, b.exe, b.timeout)
	if err := chromedp.Do(ctx); err != nil {
		b.t.Fatalf("start Chromium %s: %v", b.exe, err)
	}
	if err := chromedp.Listen(ctx, b.blog.listen); err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		_, errs := b.blog.snapshot()
		for _, e := range errs {
			b.t.Errorf("browser error: %s", e)
		}
	})
	b.tab = ctx
	return ctx
}

func (b *browserLab) step(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx(), steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *browserLab) eval(js string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx(), chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func (b *browserLab) poll(what, js string, timeout time.Duration) {
	b.t.Helper()
	timeout = max(timeout, pollAtLeast)
	ctx := b.ctx()
	var last error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return
		}
		last = err
	}
	b.t.Fatalf("waiting for %s: not true after %s (last error: %v)", what, timeout, last)
}

// TestBrowserObjectivesAnswer: the answer doc typed into the form, its
// second limiter added with "+ Add limiter" (no post: the page stays),
// objectives in the form; the run page's answer names point 1 (the bucket
// at 40 req/s) and, for "none", the closest point 3. Then the results
// table sorts by a header and filters to the feasible points in place,
// the address following; and the run is deleted through its confirmation.
func TestBrowserObjectivesAnswer(t *testing.T) {
	t.Parallel()
	b := newBrowserLab(t, 180*time.Second)
	b.step("open the form", chromedp.EmulateViewport(1440, 1000), chromedp.Navigate(b.url+"/"), chromedp.WaitVisible(chromedp.CSS("#sweep-form")))
	b.eval(`window.__stay = 'yes'`)
	b.step("add a limiter", chromedp.Click(chromedp.CSS("#add-limiter")))
	b.poll("the new limiter row", `!!document.getElementById('f-limiters-1-type')`, 5*time.Second)
	if v := b.eval(`window.__stay + ' ' + document.querySelectorAll('#sweep-form fieldset.row.limiter').length + ' ' + (document.activeElement && document.activeElement.id)`); v != "yes 2 f-limiters-1-type" {
		t.Fatalf("after + Add limiter: %q (the page should stay, with two limiter rows, the new type focused)", v)
	}
	b.step("fill the sweep",
		chromedp.SetValue(chromedp.CSS("#f-name"), "answer"),
		chromedp.SetValue(chromedp.CSS("#f-duration_ms"), "10000"),
		chromedp.SetValue(chromedp.CSS("#f-parts-0-type"), "constant"),
		chromedp.SetValue(chromedp.CSS("#f-parts-0-rate_rps"), "50"),
		chromedp.SetValue(chromedp.CSS("#f-server-workers"), "1"),
		chromedp.SetValue(chromedp.CSS("#f-server-service_ms"), "10"),
		chromedp.SetValue(chromedp.CSS("#f-limiters-0-type"), "token-bucket"),
		chromedp.SetValue(chromedp.CSS("#f-limiters-0-rate_rps"), "20,40,60"),
		chromedp.SetValue(chromedp.CSS("#f-limiters-0-burst"), "2"),
		chromedp.SetValue(chromedp.CSS("#f-limiters-1-type"), "none"),
		chromedp.SetValue(chromedp.CSS("#f-objectives"), "reject_pct <= 30\nadmitted_rps <= 45"),
	)
	if hidden := b.eval(`String(document.getElementById('f-limiters-1-burst').closest('.field').hidden)`); hidden != "true" {
		t.Errorf("the added row does not follow its type (burst hidden=%s)", hidden)
	}
	b.step("run", chromedp.Click(chromedp.CSS("#run-button")))
	b.poll("the run to finish", `location.pathname.startsWith('/runs/') && document.readyState === 'complete' &&
		!!document.querySelector('#run-status .badge') && document.querySelector('#run-status .badge').textContent === 'done' &&
		!!document.getElementById('answer')`, 60*time.Second)
	runID := strings.TrimPrefix(b.eval(`location.pathname`), "/runs/")
	b.openAll()
	got := b.eval(`Array.from(document.querySelectorAll('#answer tbody tr')).map(r => r.getAttribute('data-point') + ':' + r.querySelector('td:nth-child(2)').textContent.replace(/\s+/g, ' ').trim()).join(' | ')`)
	if !strings.HasPrefix(got, "1:recommended: "+tbText(40, 2)+" point 1, shown below") || !strings.Contains(got, "3:closest (misses admitted_rps <= 45): select point 3") {
		t.Errorf("answer panel: %q", got)
	}

	// Sort by "rejected (%)" twice (descending), then only the feasible.
	rows := `Array.from(document.querySelectorAll('#results-table tbody tr')).filter(r => !r.hidden).map(r => r.getAttribute('data-point')).join(',')`
	if v := b.eval(rows); v != "0,1,2,3" {
		t.Errorf("results table at first: %s", v)
	}
	b.step("sort by reject_pct", chromedp.Click(chromedp.CSS(`#results-table th[data-key="reject_pct"] a`)))
	if v := b.eval(rows); v != "2,3,1,0" {
		t.Errorf("sorted by rejected: %s", v)
	}
	b.step("sort by reject_pct, descending", chromedp.Click(chromedp.CSS(`#results-table th[data-key="reject_pct"] a`)))
	if v := b.eval(rows + ` + ' ' + location.search`); v != "0,1,2,3 ?sort=reject_pct&dir=desc" {
		t.Errorf("sorted by rejected, descending: %s", v)
	}
	b.step("feasible only", chromedp.Click(chromedp.CSS(`#feasible-only`)))
	if v := b.eval(rows + ` + ' ' + location.search`); v != "1 ?sort=reject_pct&dir=desc&feasible=1" {
		t.Errorf("feasible only: %s", v)
	}
	// The Pareto form keeps the table's state for its own reload.
	if v := b.eval(`Array.from(document.querySelectorAll('#key-axes input[type=hidden]')).map(i => i.name + '=' + i.value).sort().join('&')`); v != "dir=desc&feasible=1&sort=reject_pct" {
		t.Errorf("the Pareto form's hidden state: %q", v)
	}
	// The address is the permalink: the server renders the same table.
	b.step("reload", chromedp.Reload())
	b.poll("the reloaded page", `document.readyState === 'complete' && !!document.getElementById('results-table')`, 10*time.Second)
	if v := b.eval(rows + ` + ' ' + document.getElementById('feasible-only').checked`); v != "1 true" {
		t.Errorf("reloaded permalink: %s", v)
	}

	// Delete, confirmed.
	b.step("the run list", chromedp.Navigate(b.url+"/runs"), chromedp.WaitVisible(chromedp.CSS(`a.delete-link[href="/runs/`+runID+`/delete"]`)))
	b.step("delete", chromedp.Click(chromedp.CSS(`a.delete-link[href="/runs/`+runID+`/delete"]`)))
	b.poll("the confirmation", `!!document.getElementById('delete-confirm')`, 10*time.Second)
	b.step("confirm", chromedp.Click(chromedp.CSS("#delete-confirm")))
	b.poll("back on the list", `location.pathname === '/runs' && document.readyState === 'complete'`, 10*time.Second)
	if w := b.l.get("/runs/" + runID); w.Code != http.StatusNotFound {
		t.Errorf("the deleted run's page: %d", w.Code)
	}
	if v := b.eval(`String(!!document.querySelector('a[href="/runs/` + runID + `"]'))`); v != "false" {
		t.Errorf("the list still links the deleted run")
	}
}

// TestBrowserFormErrorLinks: the error summary's links focus their fields.
func TestBrowserFormErrorLinks(t *testing.T) {
	t.Parallel()
	b := newBrowserLab(t, 60*time.Second)
	b.step("a bad form", chromedp.EmulateViewport(1440, 1000), chromedp.Navigate(b.url+"/"), chromedp.WaitVisible(chromedp.CSS("#sweep-form")),
		chromedp.SetValue(chromedp.CSS("#f-limiters-0-burst"), "1..x"),
		chromedp.SetValue(chromedp.CSS("#f-duration_ms"), "-5"),
		chromedp.Click(chromedp.CSS("#run-button")))
	b.poll("the error summary", `document.readyState === 'complete' && !!document.getElementById('error-summary')`, 10*time.Second)
	if n := b.eval(`String(document.querySelectorAll('.field-error').length)`); n != "2" {
		t.Errorf("%s field errors, want 2", n)
	}
	b.step("follow the burst link", chromedp.Click(chromedp.CSS(`#error-summary a[data-focus="f-limiters-0-burst"]`)))
	if id := b.eval(`document.activeElement.id`); id != "f-limiters-0-burst" {
		t.Errorf("focus on %q after the summary link", id)
	}
}

// TestBrowserNarrow: no page scrolls sideways at 420 px: the form, the
// run list, run pages (with objectives, heatmaps and tables; with three
// objectives over two loads: the answer, the settings table, the parallel
// chart), the compare page, the calculator and the config editor.
func TestBrowserNarrow(t *testing.T) {
	t.Parallel()
	b := newBrowserLab(t, 120*time.Second)
	id := heatmapRun(t, b.l, 20)
	// Three objectives over two loads: the answer, the settings table and
	// the parallel chart; compared with the heatmap run.
	three := doneRun(t, b.l, strings.Replace(twoLoadsDoc, `{"metric":"reject_pct","op":"<=","value":30}`,
		`{"metric":"reject_pct","op":"<=","value":30},{"metric":"sojourn_p99_ms","op":"<=","value":500},{"metric":"admitted_rps","op":">=","value":30}`, 1))
	for _, path := range []string{"/", "/runs", "/runs/" + id, "/runs/" + three, "/runs/" + id + "/labels", "/runs/delete?runs=" + id + "&runs=" + three, "/compare?runs=" + id + "," + three, "/calculus", "/shadow", "/calculus?mode=chain", "/calculus/edit/" + id} {
		b.step("open "+path, chromedp.EmulateViewport(420, 900), chromedp.Navigate(b.url+path), chromedp.WaitReady(chromedp.CSS("body")))
		b.poll("the page and its charts", `document.readyState === 'complete' && `+jsChartsDrawn, 10*time.Second)
		if v := b.eval(`document.documentElement.scrollWidth + ' ' + document.documentElement.clientWidth`); v != "420 420" {
			wide := b.eval(`(() => { const W = document.documentElement.clientWidth; const out = [];
				for (const el of document.querySelectorAll('body *')) { const r = el.getBoundingClientRect(); if (r.right > W + 0.5) out.push(el.tagName + '.' + el.className + ' ' + Math.round(r.right)); }
				return out.slice(0, 8).join('; '); })()`)
			t.Errorf("%s scrolls sideways at 420 px (scrollWidth, clientWidth %s): %s", path, v, wide)
		}
	}
}

// jsChartsDrawn is true once app.js has drawn every chart of the page
// that is not inside a closed section (it draws those as they open).
const jsChartsDrawn = `Array.from(document.querySelectorAll('div.chart[data-option]')).every(el => el.hasAttribute('data-drawn') || !!el.closest('details:not([open])'))`

// heatmapRun runs a sweep of two rates and bursts 1..n with objectives on
// both heatmap measures, and returns its id.
func heatmapRun(t *testing.T, l *lab, n int) string {
	t.Helper()
	var bursts []string
	for i := 1; i <= n; i++ {
		bursts = append(bursts, strconv.Itoa(i))
	}
	w := l.postJSON("/api/runs", []byte(`{"version":1,"seed":1,"name":"heatmap","workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":90}]},
		"server":{"workers":1,"service_ms":10},
		"limiters":[{"type":"token-bucket","rate_rps":[70,85],"burst":[`+strings.Join(bursts, ",")+`]}],
		"objectives":[{"metric":"sojourn_p99_ms","op":"<=","value":40},{"metric":"goodput_rps","op":">=","value":80}]}`))
	if w.Code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	if r := l.wait(id); r.Status != "done" {
		t.Fatalf("run %s: %s", id, r.Status)
	}
	return id
}

// TestBrowserHeatmap100: a heatmap of 100 columns draws readable labels:
// every label echarts shows on a cell prints at most one decimal (the
// measures' precision) and no two overlap, at 1440 px and at 420 px.
func TestBrowserHeatmap100(t *testing.T) {
	t.Parallel()
	b := newBrowserLab(t, 120*time.Second)
	id := heatmapRun(t, b.l, 100)
	for _, width := range []int64{1440, 420} {
		b.step("open the run", chromedp.EmulateViewport(width, 1000), chromedp.Navigate(b.url+"/runs/"+id+"#heatmaps"))
		b.poll("the heatmaps drawn", `document.querySelectorAll('#heatmaps div.chart[data-drawn]').length === 2`, 20*time.Second)
		got := b.eval(`(() => {
			const out = [];
			let labels = 0;
			for (const el of document.querySelectorAll('#heatmaps div.chart')) {
				const chart = echarts.getInstanceByDom(el);
				const rects = [];
				// A cell's label is a text hosted by the cell's rect; zrender
				// paints it as tspans (the display list holds those).
				chart.getZr().storage.getDisplayList(true).forEach(d => {
					const label = d.parent;
					if (d.type !== 'tspan' || !label || !label.__hostTarget || label.__hostTarget.type !== 'rect' || label.ignore || d.ignore || d.invisible) return;
					const text = String(d.style.text);
					const r = d.getBoundingRect().clone();
					r.applyTransform(d.getComputedTransform());
					labels++;
					if (!/^-?\d+(\.\d)?$/.test(text) || text.length > 6) out.push(el.id + ': label "' + text + '" longer than its precision');
					for (const o of rects) {
						if (r.x < o.x + o.width - 0.5 && o.x < r.x + r.width - 0.5 && r.y < o.y + o.height - 0.5 && o.y < r.y + r.height - 0.5) {
							out.push(el.id + ': "' + text + '" overlaps "' + o.text + '"');
						}
					}
					rects.push({x: r.x, y: r.y, width: r.width, height: r.height, text});
				});
				if (rects.length === 0) out.push(el.id + ': no labels');
			}
			return labels + ' labels' + (out.length ? ': ' + out.slice(0, 10).join('; ') : '');
		})()`)
		if !strings.HasSuffix(got, " labels") || strings.HasPrefix(got, "0 ") {
			t.Errorf("at %d px: %s", width, got)
		}
		t.Logf("at %d px: %s", width, got)
	}
}

// TestBrowserReplicatedBands: a replicated run's time series and client
// lines draw, without a browser error, as the runs' means over shaded
// bands (a transparent lower edge and a filled width stacked on it), and a
// first-run chart says so in its title.
func TestBrowserReplicatedBands(t *testing.T) {
	t.Parallel()
	b := newBrowserLab(t, 120*time.Second)
	w := b.l.postJSON("/api/runs", []byte(`{"version":1,"seed":5,"replications":3,
 "workload":{"duration_ms":3000,"parts":[{"type":"clients","group":"g","clients":4,"rate_rps":60,"arrival":"poisson","timeout_ms":80,"retries":2,"backoff_ms":30}]},
 "server":{"workers":1,"service_ms":5},
 "limiters":[{"type":"token-bucket","rate_rps":150,"burst":10}]}`))
	if w.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	b.l.wait(id)
	b.step("open the run", chromedp.EmulateViewport(1440, 1000), chromedp.Navigate(b.url+"/runs/"+id+"#timeline"))
	b.poll("the page", `document.readyState === 'complete'`, 20*time.Second)
	b.openAll()
	for _, chart := range []string{"chart-series", "chart-clients-goodput"} {
		b.step("scroll to "+chart, chromedp.ScrollIntoView(chromedp.CSS("#"+chart)))
		b.poll(chart+" drawn", `!!document.querySelector('#`+chart+`[data-drawn]')`, 20*time.Second)
		got := b.eval(`(() => {
			const o = echarts.getInstanceByDom(document.getElementById('` + chart + `')).getOption();
			const band = o.series.filter(s => s.stack);
			const filled = band.filter(s => s.areaStyle);
			return band.length + ' band series, ' + filled.length + ' filled, subtitle: ' + o.title[0].subtext;
		})()`)
		if !strings.HasPrefix(got, "2 band series, 1 filled") || !strings.Contains(got, "mean of 3 runs") {
			t.Errorf("%s: %s", chart, got)
		}
	}
	if v := b.eval(`(document.getElementById('chart-jain-time') || {getAttribute: () => 'no chart'}).getAttribute('aria-label')`); v != "Jain's index over time — replication 1 of 3 (seed 5)" {
		t.Errorf("Jain over time does not say it shows replication 1: %s", v)
	}
}
