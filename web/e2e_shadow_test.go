package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserShadowReplay: "Replay a log" in Chromium. A real nginx's
// access log (web/testdata/shadow: Debian's nginx 1.22.1, limit_req
// rate=10r/s burst=2 nodelay, 39 of its 58 requests answered 503) and
// its nginx.conf are uploaded through the form; the run page then shows
// the Shadow section: the top limited key (127.0.0.1, its 39 limited:
// nginx's 503s), the timeline chart drawn, and the what-if sweep's
// recommended setting with its config to paste back.
func TestBrowserShadowReplay(t *testing.T) {
	t.Parallel()
	exe := chromium(t)
	l, _ := newShadowLab(t, Options{}, "")
	b := newBrowserLabOn(t, exe, l, 60*time.Second)
	logPath, err := filepath.Abs("testdata/shadow/access.log")
	if err != nil {
		t.Fatal(err)
	}
	confPath, _ := filepath.Abs("testdata/shadow/nginx.conf")
	if _, err := os.Stat(confPath); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	b.step("open the form", chromedp.EmulateViewport(1280, 1000), chromedp.Navigate(b.url+"/shadow"), chromedp.WaitVisible(chromedp.CSS("#shadow-form")))
	if v := b.eval(`document.querySelector('header.topbar a[href="/shadow"]').textContent`); v != "Replay a log" {
		t.Errorf("the top bar's link: %q", v)
	}
	t.Logf("form open after %v", time.Since(start))
	b.step("fill the form",
		chromedp.SetUploadFiles(chromedp.CSS("#shadow-config_file"), []string{confPath}),
		chromedp.SetValue(chromedp.CSS("#shadow-objectives"), "reject_pct <= 70"),
		chromedp.SetUploadFiles(chromedp.CSS("#shadow-log_file"), []string{logPath}),
		chromedp.SetValue(chromedp.CSS("#shadow-log_format"), "timed"),
		chromedp.SetValue(chromedp.CSS("#shadow-name"), "real nginx"),
		chromedp.Click(chromedp.CSS("#shadow-submit")))
	b.poll("the Shadow section with its chart drawn", `location.pathname.startsWith('/runs/') && document.readyState === 'complete' &&
		!!document.querySelector('#shadow') && !!document.querySelector('#shadow-timeline[data-drawn]')`, 30*time.Second)

	t.Logf("shadow section after %v", time.Since(start))
	if v := b.eval(`document.querySelector('#run-status .badge').textContent + ' | ' + document.getElementById('shadow-totals').textContent`); !strings.HasPrefix(v, "done | 39 of 58 requests would have been limited") {
		t.Errorf("totals: %q", v)
	}
	if v := b.eval(`Array.from(document.querySelectorAll('#shadow-keys tbody tr')[0].cells).map(c => c.textContent).join(' ')`); !strings.HasPrefix(v, "127.0.0.1 50 39 78.00%") {
		t.Errorf("top key: %q", v)
	}
	painted := b.eval(`(() => { const c = document.querySelector('#shadow-timeline canvas'); if (!c || !c.width) return 'no canvas';
		const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
		for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) n++; return n > 1000 ? 'painted' : 'blank'; })()`)
	if painted != "painted" {
		t.Errorf("the timeline chart is %s", painted)
	}
	rec := b.eval(`document.getElementById('shadow-recommendation').innerText + ' | ' + document.querySelector('#shadow-whatif tr.recommended td:nth-child(3)').textContent`)
	if !strings.Contains(rec, "Recommended: rate ×") || !strings.Contains(rec, "limit_req_zone $binary_remote_addr zone=perip:") || !strings.Contains(rec, "limit_req zone=perip burst=") {
		t.Errorf("recommendation: %q", rec)
	}
	t.Logf("recommended: %s; checked after %v", rec[strings.LastIndex(rec, "|")+2:], time.Since(start))
}
