package web

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ratelab/ratelab/experiments/presets"
)

// jsOpenAll opens every closed section of a run page (app.js draws their
// charts as they open).
const jsOpenAll = `(() => { document.querySelectorAll('details.fold:not([open])').forEach(d => { d.open = true; }); return ''; })()`

// openAll opens every section of the run page and waits for its charts.
func (b *browserLab) openAll() {
	b.t.Helper()
	b.eval(jsOpenAll)
	b.poll("every chart drawn", `document.querySelectorAll('div.chart[data-drawn]').length === document.querySelectorAll('div.chart').length`, 20*time.Second)
}

// readmePreset is the preset whose first screen is the README's
// screenshot (RATELAB_SCREENSHOT=$PWD/docs/run-page.png): a run with
// objectives, so it shows the answer, the key chart and Deploy.
const readmePreset = "delay-budget"

// maxRunPagePx is the tallest a finished run's page may be at 1280 px with
// its sections closed (issue 26).
const maxRunPagePx = 3000

// jsBrokenWords lists the words the browser broke inside a run of letters
// or digits: for every text node laid out on more than one line, each
// place where a letter or digit starts a new line right after another one
// ("Lo/ad", "tok/en"). Breaks at spaces, "-", "_", "=" and <wbr> pass.
// Such a break lies inside a run of letters and digits laid out on more
// than one line box, so only those runs are read character by character
// (reading every character of the page took a quarter of
// TestBrowserPresetPages).
const jsBrokenWords = `(() => {
	const out = [];
	const r = document.createRange();
	const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = walker.nextNode(); n; n = walker.nextNode()) {
		const t = n.data;
		if (t.trim().length < 2) continue;
		r.selectNodeContents(n);
		if (r.getClientRects().length < 2) continue;
		for (const m of t.matchAll(/[A-Za-z0-9]{2,}/g)) {
			const end = m.index + m[0].length;
			r.setStart(n, m.index); r.setEnd(n, end);
			if (r.getClientRects().length < 2) continue;
			let prevTop = null;
			for (let i = m.index; i < end; i++) {
				r.setStart(n, i); r.setEnd(n, i + 1);
				const rs = r.getClientRects();
				if (rs.length === 0) continue;
				const top = rs[0].top;
				if (prevTop !== null && top > prevTop + 2) {
					out.push(JSON.stringify(t.slice(Math.max(0, i - 12), i) + '/' + t.slice(i, i + 12)) + ' in ' + n.parentElement.tagName.toLowerCase() + '.' + n.parentElement.className);
				}
				prevTop = top;
			}
		}
	}
	return out.slice(0, 10).join('; ');
})()`

// jsLegends checks every chart's option on the page (drawn or not): no
// legend pages (type "scroll"), and a chart of several named series has a
// legend or a colour bar (visualMap).
const jsLegends = `(() => {
	const out = [];
	for (const el of document.querySelectorAll('div.chart[data-option]')) {
		const o = JSON.parse(el.getAttribute('data-option'));
		const legends = [].concat(o.legend || []);
		if (legends.some(l => l && l.type === 'scroll')) out.push(el.id + ': a scrolling legend');
		const names = new Set((o.series || []).filter(s => s.name && s.type !== 'custom').map(s => s.name));
		const shown = legends.some(l => l && l.show !== false) || [].concat(o.visualMap || []).length > 0;
		if (names.size > 1 && !shown) out.push(el.id + ': ' + names.size + ' series without a legend or colour bar');
	}
	return out.join('; ');
})()`

// TestBrowserPresetPages visits each preset's run page (presetRuns: each
// preset run once for the package) in one browser: at 1280 × 800 the page
// with its sections closed is at most maxRunPagePx tall, its key chart is
// drawn in the first screen, no chart has a paging legend or several
// series without a key, and no word breaks inside its letters at 1280 or
// 420 px; with every section open, the charts echarts drew pass
// checkDrawnCharts (drawnChartPresets). With $RATELAB_ARTIFACTS set, a
// screenshot of each first screen is saved under it, and with
// $RATELAB_SCREENSHOT readmePreset's at that path (screenshots took a
// fifth of the test's time, so none is taken for a temporary folder).
func TestBrowserPresetPages(t *testing.T) {
	t.Parallel()
	exe := chromium(t)
	b := newBrowserLabOn(t, exe, presetLab(t), 10*time.Minute)
	shots := os.Getenv("RATELAB_ARTIFACTS")
	if shots != "" {
		shots = filepath.Join(shots, "first-screens")
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	readme := os.Getenv("RATELAB_SCREENSHOT")
	var heights []string
	var opened time.Duration // in checkDrawnCharts
	// Every preset runs before the test's first page, so its sweeps run
	// beside the other browser tests' pages, not while this test holds the
	// browser (b.ctx).
	paths := map[string]string{}
	for _, p := range presets.All() {
		paths[p.Name] = "/runs/" + presetRunID(t, p.Name)
	}
	for _, p := range presets.All() {
		path := paths[p.Name]
		b.step(p.Name, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(b.url+path), chromedp.WaitReady(chromedp.CSS("body")))
		b.poll(p.Name+": the key chart drawn", `document.readyState === 'complete' && !!document.querySelector('#key div.chart[data-drawn]')`, 20*time.Second)
		h, _ := strconv.Atoi(b.eval(`String(document.documentElement.scrollHeight)`))
		if h > maxRunPagePx {
			t.Errorf("%s: the run page is %d px tall at 1280 with its sections closed; at most %d", p.Name, h, maxRunPagePx)
		}
		if top, _ := strconv.ParseFloat(b.eval(`String(document.querySelector('#key div.chart').getBoundingClientRect().top)`), 64); top > 800 {
			t.Errorf("%s: the key chart starts at y = %v, below the first screen", p.Name, top)
		}
		if bad := b.eval(jsLegends); bad != "" {
			t.Errorf("%s: %s", p.Name, bad)
		}
		if bad := b.eval(jsBrokenWords); bad != "" {
			t.Errorf("%s at 1280 px: words broken inside: %s", p.Name, bad)
		}
		if shots != "" || (readme != "" && p.Name == readmePreset) {
			shot, err := chromedp.Run(b.ctx(), chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatalf("%s: screenshot: %v", p.Name, err)
			}
			if shots != "" {
				if err := os.WriteFile(filepath.Join(shots, p.Name+".png"), shot, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if readme != "" && p.Name == readmePreset {
				if err := os.WriteFile(readme, shot, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Reading the layout lays the page out at the new width at once
		// (the charts' own resize, 100 ms later, paints inside their boxes).
		b.step(p.Name+" at 420", chromedp.EmulateViewport(420, 900))
		h420 := b.eval(`String(document.documentElement.scrollHeight)`)
		if bad := b.eval(jsBrokenWords); bad != "" {
			t.Errorf("%s at 420 px: words broken inside: %s", p.Name, bad)
		}
		heights = append(heights, p.Name+" "+strconv.Itoa(h)+" / "+h420)
		if slices.Contains(drawnChartPresets, p.Name) {
			b.step(p.Name+" open at 1280", chromedp.EmulateViewport(1280, 800))
			opened += b.checkDrawnCharts(p.Name)
		}
	}
	where := "none saved (set RATELAB_ARTIFACTS)"
	if shots != "" {
		where = "in " + shots
	}
	t.Logf("run page heights at 1280 / 420 px, sections closed:\n%s\nfirst screens: %s\nevery section opened and its charts read in %v", strings.Join(heights, "\n"), where, opened.Round(time.Millisecond))
}
