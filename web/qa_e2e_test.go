package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserRecentRunsFit: the recent-runs sidebar stays inside its card
// with a cancelled run, a run of three limiters and a long unbroken name.
// With the full "2006-01-02 15:04:05" time and a 12rem limiters line its
// table ran past the card's right edge and cut the status badges.
func TestBrowserRecentRunsFit(t *testing.T) {
	required := os.Getenv("RATELAB_E2E") == "1"
	exe := findChromium()
	if exe == "" {
		if required {
			t.Fatal("RATELAB_E2E=1 but no Chromium")
		}
		t.Skip("no Chromium found; set RATELAB_E2E=1 to make this test required")
	}
	if testing.Short() && !required {
		t.Skip("-short")
	}
	l := newLab(t, false, 8)
	three := formValuesOf(DefaultForm())
	three.Set("name", "token-vs-leaky-vs-sliding-window-counter")
	three.Set("limiters.1.type", "leaky-bucket")
	three.Set("limiters.1.rate_rps", "100")
	three.Set("limiters.1.queue", "4")
	three.Set("limiters.2.type", "sliding-window-counter")
	three.Set("limiters.2.limit", "100")
	three.Set("limiters.2.window_ms", "1000")
	runIDFrom(t, l.postForm("/runs", three))
	id := runIDFrom(t, l.postForm("/runs", formValuesOf(DefaultForm())))
	if w := l.postForm("/runs/"+id+"/cancel", nil); w.Code != http.StatusSeeOther {
		t.Fatalf("cancel: %d", w.Code)
	}
	ts := httptest.NewServer(l.srv)
	defer ts.Close()

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1440, 1000))
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	ctx, cancelTime := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTime()
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
