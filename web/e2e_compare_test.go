package web

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ratelab/ratelab/web/form"
)

// TestBrowserCompare: on /runs the user ticks two runs and presses
// Compare; the permalink /compare?runs=a,b shows the config diff and the
// overlaid charts, drawn. A run page's "Download all" link gets a zip.
func TestBrowserCompare(t *testing.T) {
	t.Parallel()
	exe := chromium(t)
	l := newLab(t, true, 8)
	a := l.doneRun()
	v := formValuesOf(form.Default())
	v.Set("name", "seed seven")
	v.Set("seed", "7")
	b := runIDFrom(t, l.postForm("/runs", v))
	l.wait(b)
	ts := httptest.NewServer(l.srv)
	t.Cleanup(ts.Close)

	ctx := newBrowser(t, exe, 90*time.Second)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return s
	}
	poll := func(what, js string) {
		t.Helper()
		for deadline := time.Now().Add(pollAtLeast); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
				return
			}
		}
		t.Fatalf("waiting for %s", what)
	}
	run("open the run list", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(ts.URL+"/runs"), chromedp.WaitVisible(chromedp.CSS("#compare-button")),
		chromedp.Click(chromedp.CSS(`input.compare-box[value="`+a+`"]`)),
		chromedp.Click(chromedp.CSS(`input.compare-box[value="`+b+`"]`)),
		chromedp.Click(chromedp.CSS("#compare-button")))
	poll("the compare page with charts drawn", `location.pathname === '/compare' && document.readyState === 'complete' &&
		document.querySelectorAll('div.chart[data-drawn]').length > 0`)
	if got := eval(`decodeURIComponent(location.search)`); got != "?runs="+b+","+a && got != "?runs="+a+","+b {
		t.Errorf("compare permalink %q", got)
	}
	if diff := eval(`Array.from(document.querySelectorAll('#config-diff tbody td:first-child')).map(td => td.textContent).join(' ')`); !strings.Contains(diff, "seed") || !strings.Contains(diff, "name") {
		t.Errorf("config diff rows: %q", diff)
	}
	if n := eval(`String(document.querySelectorAll('div.chart').length)`); n == "0" {
		t.Error("no charts")
	}

	// The zip of all the run's files, from its link on the run page.
	run("open a run", chromedp.Navigate(ts.URL+"/runs/"+a), chromedp.WaitVisible(chromedp.CSS("#zip-download")))
	got := eval(`fetch(document.getElementById('zip-download').href).then(async r => {
		const b = new Uint8Array(await r.arrayBuffer());
		return r.status + ' ' + r.headers.get('content-type') + ' ' + String.fromCharCode(b[0], b[1]) + ' ' + document.getElementById('zip-download').getAttribute('download');
	})`)
	if want := "200 application/zip PK " + a + "-files.zip"; got != want {
		t.Errorf("zip download: %q, want %q", got, want)
	}
}
