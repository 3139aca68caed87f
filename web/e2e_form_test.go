package web

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// jsSummaries lists the summary line of every folded section of the form.
const jsSummaries = `JSON.stringify(Array.from(document.querySelectorAll('[data-section] .section-summary')).map(s => s.textContent.trim()))`

// jsInput sets an input's value and tells the page, as typing does.
func jsInput(id, value string) string {
	return `(() => { const el = document.getElementById(` + strconv.Quote(id) + `); el.value = ` + strconv.Quote(value) +
		`; el.dispatchEvent(new Event('input', { bubbles: true })); return ''; })()`
}

// TestBrowserForm: the new-sweep form at 1280 × 800 shows the workload's
// rate and window, the limiter's lists and Run in its first screen, the
// other sections folded with summaries that follow the values (app.js
// writes what the server wrote); the live count names the lists that
// multiply and is the point count of the run the form starts; and errors
// stand at their inputs (the size error at each list, a late start at the
// start, a server error in the Server section, opened); a long preset
// keeps Run in sight.
func TestBrowserForm(t *testing.T) {
	t.Parallel()
	start := time.Now()
	b := newBrowserLab(t, 120*time.Second)
	t.Logf("browser ready after %s", time.Since(start).Round(time.Millisecond))
	b.step("open the form", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(b.url+"/"), chromedp.WaitVisible(chromedp.CSS("#run-button")))

	// 1. The first screen.
	for _, id := range []string{"f-duration_ms", "f-parts-0-rate_rps", "f-limiters-0-rate_rps", "f-limiters-0-burst", "sweep-count", "run-button"} {
		if bottom, _ := strconv.ParseFloat(b.eval(`String(document.getElementById('`+id+`').getBoundingClientRect().bottom + window.scrollY)`), 64); bottom > 800 || bottom <= 0 {
			t.Errorf("#%s ends at y = %v, not in the first 800 px", id, bottom)
		}
	}
	if n := b.eval(`String(document.querySelectorAll('details[data-section]').length) + ' ' + document.querySelectorAll('details[data-section][open]').length`); n != "6 0" {
		t.Errorf("folded sections (all, open): %s, want 6 closed (clients, instances, seed, server, objectives, advanced)", n)
	}
	served := b.eval(jsSummaries)
	b.eval(jsInput("f-duration_ms", "10000")) // app.js rewrites every summary
	if written := b.eval(jsSummaries); written != served {
		t.Errorf("the summaries as served %s, as app.js writes them %s", served, written)
	}
	if !strings.Contains(served, "Workers 1, Service time 10 ms, Deadline 200 ms") {
		t.Errorf("summaries %s", served)
	}
	b.eval(jsInput("f-parts-0-retries", "2"))
	b.eval(jsInput("f-server-workers", "3"))
	if s := b.eval(jsSummaries); !strings.Contains(s, `"Retries 2"`) || !strings.Contains(s, `"Workers 3, Service time 10 ms`) {
		t.Errorf("summaries after typing: %s", s)
	}
	b.eval(jsInput("f-parts-0-retries", ""))
	b.eval(jsInput("f-server-workers", "1"))
	if bad := b.eval(jsBrokenWords); bad != "" {
		t.Errorf("the form at 1280 px: words broken inside: %s", bad)
	}
	b.step("narrow", chromedp.EmulateViewport(420, 800))
	if w := b.eval(`String(document.documentElement.scrollWidth)`); w != "420" {
		t.Errorf("the form at 420 px is %s px wide", w)
	}
	if bad := b.eval(jsBrokenWords); bad != "" {
		t.Errorf("the form at 420 px: words broken inside: %s", bad)
	}
	b.step("wide", chromedp.EmulateViewport(1280, 800))
	t.Logf("first screen checked after %s", time.Since(start).Round(time.Millisecond))

	// 2. The live count, typed into the lists, then the run it starts.
	b.eval(jsInput("f-limiters-0-rate_rps", ""))
	b.step("type a list", chromedp.SendKeys(chromedp.CSS("#f-limiters-0-rate_rps"), "80,120"))
	b.eval(jsInput("f-replications", "2"))
	const want = "rate_rps 2 × burst 7 = 14 points × replications 2 = 28 runs × 900 arrivals"
	b.poll("the live count", `document.getElementById('sweep-count').textContent.startsWith(`+strconv.Quote(want)+`)`, 10*time.Second)
	points := b.eval(`document.getElementById('sweep-count').dataset.points`)
	if marked := b.eval(`Array.from(document.querySelectorAll('#sweep-form .multiplies')).map(e => e.id).join(' ')`); marked != "f-limiters-0-rate_rps f-limiters-0-burst f-replications" {
		t.Errorf("the inputs marked as multiplying: %q", marked)
	}
	b.step("run", chromedp.Click(chromedp.CSS("#run-button")))
	b.poll("the run page", `location.pathname.startsWith('/runs/') && document.readyState === 'complete'`, 10*time.Second)
	t.Logf("run submitted after %s", time.Since(start).Round(time.Millisecond))
	run := b.l.wait(strings.TrimPrefix(b.eval(`location.pathname`), "/runs/"))
	if strconv.Itoa(run.PointsTotal) != points {
		t.Errorf("the live count said %s points, the run has %d", points, run.PointsTotal)
	}
	// The run page reloads itself when the run ends: wait for that, or
	// the next navigation can be aborted by it (net::ERR_ABORTED).
	b.poll("the run page to say done", `document.readyState === 'complete' && !document.getElementById('run-progress') &&
		!!document.querySelector('#run-status .badge') && document.querySelector('#run-status .badge').textContent === 'done'`, 30*time.Second)

	// 3. A sweep past the limit: counted live as refused, then refused at
	// each list that multiplies.
	b.step("open the form again", chromedp.Navigate(b.url+"/"), chromedp.WaitVisible(chromedp.CSS("#run-button")))
	b.eval(jsInput("f-limiters-0-rate_rps", "1..200"))
	b.eval(jsInput("f-limiters-0-burst", "1..60"))
	b.poll("the live refusal", `document.getElementById('sweep-count').textContent.startsWith('Not counted: 2 problems (limiters[0].rate_rps: the sweep is too large: rate_rps 200 × burst 60 = 12000 points')`, 10*time.Second)
	b.step("run", chromedp.Click(chromedp.CSS("#run-button")))
	b.poll("the errors", `document.readyState === 'complete' && !!document.getElementById('error-summary')`, 10*time.Second)
	for _, id := range []string{"f-limiters-0-rate_rps", "f-limiters-0-burst"} {
		if msg := b.eval(`(document.getElementById('` + id + `').closest('.field').querySelector('.field-error') || {}).textContent || ''`); !strings.Contains(msg, "rate_rps 200 × burst 60 = 12000 points; the limit is 10000 points") {
			t.Errorf("#%s: error %q", id, msg)
		}
	}

	t.Logf("size errors checked after %s", time.Since(start).Round(time.Millisecond))

	// 4. A start after the window at its input; a server error opens the
	// Server section.
	b.step("open the form again", chromedp.Navigate(b.url+"/"), chromedp.WaitVisible(chromedp.CSS("#run-button")))
	b.eval(jsInput("f-parts-0-start_ms", "20000"))
	b.eval(jsInput("f-server-workers", "0"))
	b.step("run", chromedp.Click(chromedp.CSS("#run-button")))
	b.poll("the errors", `document.readyState === 'complete' && !!document.getElementById('error-summary')`, 10*time.Second)
	if msg := b.eval(`(document.getElementById('f-parts-0-start_ms').closest('.field').querySelector('.field-error') || {}).textContent || ''`); !strings.Contains(msg, "must be before the end of the arrival window") {
		t.Errorf("start: error %q", msg)
	}
	if open := b.eval(`document.getElementById('section-server').open + ' ' + document.getElementById('section-advanced').open`); open != "true false" {
		t.Errorf("server, advanced open: %s, want the server's (holding the error) only", open)
	}

	// 5. A preset of four parts keeps Run in sight (the run bar sticks).
	b.step("a long preset", chromedp.Navigate(b.url+"/?preset=delay-budget"), chromedp.WaitVisible(chromedp.CSS("#run-button")))
	if bottom, _ := strconv.ParseFloat(b.eval(`String(document.getElementById('run-button').getBoundingClientRect().bottom)`), 64); bottom > 800 {
		t.Errorf("delay-budget: Run ends at y = %v", bottom)
	}
}
