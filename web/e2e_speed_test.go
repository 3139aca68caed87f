package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// TestBrowserFlashCrowdPage: the flash-crowd preset's run page (presetRuns)
// comes gzip-compressed with Vary: Accept-Encoding (asserted: the headers, and
// the browser's own count of encoded against decoded bytes); how long the
// browser took to its first chart is logged from the Performance API, not
// asserted (a shared machine's timings are no test).
func TestBrowserFlashCrowdPage(t *testing.T) {
	t.Parallel()
	exe := chromium(t)
	b := newBrowserLabOn(t, exe, presetLab(t), 120*time.Second)
	id := presetRunID(t, "flash-crowd")

	// The headers, as a client that takes gzip and does not inflate sees them.
	req, _ := http.NewRequest(http.MethodGet, b.url+"/runs/"+id, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" ||
		!strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") || !strings.HasSuffix(resp.Header.Get("ETag"), `-gz"`) {
		t.Errorf("the run page: %d, Content-Encoding %q, Vary %q, ETag %q; want gzip, Accept-Encoding and the gzip ETag",
			resp.StatusCode, resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"), resp.Header.Get("ETag"))
	}

	ctx := b.ctx()
	if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
		Source: `new MutationObserver((_, o) => {
			if (document.querySelector('div.chart[data-drawn]')) { window.__firstChart = performance.now(); o.disconnect(); }
		}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-drawn']});`,
	}); err != nil {
		t.Fatal(err)
	}
	b.step("open the run", chromedp.EmulateViewport(1440, 1000), chromedp.Navigate(b.url+"/runs/"+id))
	b.poll("a chart drawn", `window.__firstChart !== undefined`, 30*time.Second)
	got := b.eval(`(() => {
		const n = performance.getEntriesByType('navigation')[0];
		return JSON.stringify({encoded: n.encodedBodySize, decoded: n.decodedBodySize, response_end_ms: Math.round(n.responseEnd),
			dom_content_loaded_ms: Math.round(n.domContentLoadedEventEnd), first_chart_ms: Math.round(window.__firstChart),
			charts: document.querySelectorAll('div.chart').length, drawn: document.querySelectorAll('div.chart[data-drawn]').length});
	})()`)
	var nav struct {
		Encoded, Decoded int
	}
	if err := json.Unmarshal([]byte(got), &nav); err != nil {
		t.Fatal(err)
	}
	if nav.Encoded <= 0 || nav.Encoded*3 > nav.Decoded {
		t.Errorf("the browser read %d bytes for %d of HTML: not compressed", nav.Encoded, nav.Decoded)
	}
	t.Logf("flash-crowd run page (Performance API, loopback; not asserted): %s", got)
}
