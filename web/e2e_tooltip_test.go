package web

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// tooltipRun runs a replicated 2×2 sweep of the token bucket with an
// objective and two clients, one named with HTML: its page draws sweep
// lines, time series over bands, per-client bars, a Pareto chart and
// heatmaps. It returns the run's id.
func tooltipRun(t *testing.T, l *lab) string {
	t.Helper()
	w := l.postJSON("/api/runs", []byte(`{"version":1,"seed":3,"name":"tips","replications":3,
 "workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":60,"client":"<b>api</b> & co"},{"type":"poisson","rate_rps":30,"client":"batch"}]},
 "server":{"workers":1,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[70,85],"burst":[5,10]}],
 "objectives":[{"metric":"goodput_rps","op":">=","value":80}]}`))
	if w.Code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	if r := l.wait(id); r.Status != "done" {
		t.Fatalf("run %s: %s", id, r.Status)
	}
	return id
}

// tooltipJS shows the tooltip of one chart through echarts' own showTip
// action and reports what the reader sees: the tooltip element's text, its
// size, the first series marker's size and colour (an inline style the
// Content-Security-Policy must allow), whether any element came out of
// the text (user text must stay text), and the policy violations it caused.
const tooltipJS = `
window.__tip = (id, pick) => new Promise(resolve => {
	const el = document.getElementById(id);
	const chart = echarts.getInstanceByDom(el);
	const o = chart.getOption();
	const [seriesIndex, dataIndex, name, value] = pick(o);
	el.scrollIntoView({block: 'center'});
	window.__csp.length = 0;
	chart.dispatchAction({type: 'showTip', seriesIndex, dataIndex});
	const start = performance.now();
	const look = () => {
		const tip = Array.from(el.children).find(c => c.tagName === 'DIV' && !c.querySelector('canvas'));
		const text = tip ? tip.innerText : '';
		if ((!tip || !text.includes(name) || !text.includes(value)) && performance.now() - start < 3000) {
			requestAnimationFrame(look);
			return;
		}
		// A policy violation is reported in a later task: let it arrive.
		setTimeout(() => report(tip, text), 100);
	};
	const report = (tip, text) => {
		const cs = tip && getComputedStyle(tip);
		const r = tip ? tip.getBoundingClientRect() : {width: 0, height: 0};
		const marker = tip && tip.querySelector('span');
		const m = marker ? marker.getBoundingClientRect() : {width: 0};
		resolve(JSON.stringify({
			name, value, text,
			visible: !!tip && cs.display !== 'none' && cs.visibility === 'visible' && Number(cs.opacity) > 0 && r.width > 0 && r.height > 0,
			markerWidth: m.width,
			markerColor: marker ? getComputedStyle(marker).backgroundColor : '',
			elements: tip ? Array.from(tip.querySelectorAll('*')).map(e => e.tagName).filter(t => t !== 'DIV' && t !== 'SPAN') : [],
			violations: Array.from(new Set(window.__csp)),
			violationCount: window.__csp.length,
		}));
	};
	look();
});
'ok'`

// tipCase is one chart's hover: pick (a JavaScript function of the chart's
// option) returns [seriesIndex, dataIndex, the name the tooltip must show,
// the value it must show]; places is the most decimals a number in the
// tooltip may have (its measure's, web/charts/round.go); ciRows, when
// above 0, the most rows naming a 95% CI (one per sweep line), and at
// least one must show.
type tipCase struct {
	chart, pick string
	places      int
	ciRows      int
}

// tipDecimals finds a number's decimals in a tooltip's text.
var tipDecimals = regexp.MustCompile(`\d\.(\d+)`)

// ciRange is a 95% CI row's interval, "95% CI 71.3 – 75.1".
var ciRange = regexp.MustCompile(`95% CI [\d.]+ – [\d.]+`)

// TestBrowserTooltips: hovering the run page's charts (echarts' showTip on
// each instance) shows a styled tooltip with the series' name and value,
// and the page's Content-Security-Policy lets it: echarts writes the
// tooltip as HTML with inline style attributes. A client named with HTML
// shows as text. Each kind of chart: sweep lines, time series over a band
// (replications), per-client bars, the Pareto scatter, a heatmap. The
// values read as the results table prints them: at most the measure's
// decimals (73.2, not 73.16666666666667), no row a bare "-", and a
// replicated sweep line's 95% interval one row ("… 95% CI 71.3 – 75.1").
func TestBrowserTooltips(t *testing.T) {
	t.Parallel()
	b := newBrowserLab(t, 120*time.Second)
	id := tooltipRun(t, b.l)
	ctx := b.ctx()
	if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.effectiveDirective + ': ' + e.sample));`,
	}); err != nil {
		t.Fatal(err)
	}
	b.step("open the run", chromedp.EmulateViewport(1440, 1000), chromedp.Navigate(b.url+"/runs/"+id))
	b.poll("the page", `document.readyState === 'complete'`, 20*time.Second)
	b.openAll()
	b.poll("every chart drawn", `document.readyState === 'complete' && document.querySelectorAll('div.chart').length > 0 &&
		document.querySelectorAll('div.chart[data-drawn]').length === document.querySelectorAll('div.chart').length`, 20*time.Second)
	b.eval(tooltipJS)
	const num = `v => echarts.format.addCommas(v)`
	for _, c := range []tipCase{
		// Sweep lines, axis tooltip: every limiter at a burst, each
		// line's 95% interval one row (2 lines).
		{"chart-goodput", `o => [0, 1, o.series[0].name, (` + num + `)(o.series[0].data[1].value[1])]`, 1, 2},
		// Jain's index prints 4 places.
		{"chart-jain", `o => [0, 1, o.series[0].name, (` + num + `)(o.series[0].data[1].value[1])]`, 4, 0},
		// The mean line over its 95% band (the band's series stay out of the tooltip).
		{"chart-series", `o => { const i = o.series.findIndex(s => !s.stack && s.name.endsWith(' released'));
			return [i, 1, o.series[i].name, (` + num + `)(o.series[i].data[1].value[1])]; }`, 1, 0},
		// Per-client bars: the category is the client's name, user text.
		{"chart-clients", `o => { const i = o.xAxis[0].data.indexOf('<b>api</b> & co');
			return [0, i, '<b>api</b> & co', (` + num + `)(o.series[0].data[i].value)]; }`, 1, 0},
		// The Pareto scatter, item tooltip: p99 time in system across
		// (its 34–66 ms span keeps 2 places to stay within a pixel of a
		// plot up to 1400 px wide) and goodput up.
		{"chart-pareto", `o => [0, 1, o.series[0].name, (` + num + `)(o.series[0].data[1].value[1])]`, 2, 0},
		// A heatmap cell: named by both parameters, with the measure's
		// value (not its pass/fail class).
		{"chart-heat-0-goodput", `o => [0, 1, o.series[0].data[1].name, (` + num + `)(o.series[0].data[1].value[2])]`, 1, 0},
	} {
		var got struct {
			Name, Value, Text string
			Visible           bool
			MarkerWidth       float64
			MarkerColor       string
			Elements          []string
			Violations        []string
			ViolationCount    int
		}
		raw := b.eval(`window.__tip('` + c.chart + `', ` + c.pick + `)`)
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("%s: %v: %s", c.chart, err, raw)
		}
		text := strings.Join(strings.Fields(got.Text), " ")
		if !got.Visible {
			t.Errorf("%s: the tooltip is not visible: %q", c.chart, text)
		}
		if got.Name == "" || !strings.Contains(got.Text, got.Name) || got.Value == "" || !strings.Contains(got.Text, got.Value) {
			t.Errorf("%s: the tooltip %q lacks the name %q or the value %q", c.chart, text, got.Name, got.Value)
		}
		if got.MarkerWidth < 9 || got.MarkerColor == "" || got.MarkerColor == "rgba(0, 0, 0, 0)" {
			t.Errorf("%s: the series marker is unstyled (width %.1f px, colour %q)", c.chart, got.MarkerWidth, got.MarkerColor)
		}
		if len(got.Elements) > 0 {
			t.Errorf("%s: the tooltip's text made elements %v", c.chart, got.Elements)
		}
		if len(got.Violations) > 0 {
			t.Errorf("%s: %d Content-Security-Policy violations: %v", c.chart, got.ViolationCount, got.Violations)
		}
		for _, m := range tipDecimals.FindAllStringSubmatch(text, -1) {
			if len(m[1]) > c.places {
				t.Errorf("%s: the tooltip prints %s, more than %d decimals", c.chart, m[0], c.places)
			}
		}
		if slices.Contains(strings.Fields(got.Text), "-") {
			t.Errorf("%s: a tooltip row's value is a bare \"-\": %q", c.chart, text)
		}
		ci, ranges := strings.Count(text, "95% CI"), len(ciRange.FindAllString(text, -1))
		if c.ciRows > 0 && (ci > c.ciRows || ranges == 0) {
			t.Errorf("%s: %d rows name a 95%% CI (%d as a range), want one per line, at most %d", c.chart, ci, ranges, c.ciRows)
		}
		t.Logf("%s: %s", c.chart, text)
	}
}

// TestBrowserTooltipHeadersKeepTheValues: a sweep line's tooltip is headed
// by the swept value as the config gives it, each with its own decimals
// (70.25, 85, 90.5), hovered at a point or between points (the pointer
// snaps to the nearest): echarts' own header padded them all to the most
// decimals any had (85.00, 90.50).
func TestBrowserTooltipHeadersKeepTheValues(t *testing.T) {
	t.Parallel()
	b := newBrowserLab(t, 120*time.Second)
	w := b.l.postJSON("/api/runs", []byte(`{"version":1,"seed":3,"name":"headers",
 "workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":60}]},
 "server":{"workers":1,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[70.25,85,90.5],"burst":5}]}`))
	if w.Code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	if r := b.l.wait(id); r.Status != "done" {
		t.Fatalf("run %s: %s", id, r.Status)
	}
	b.step("open the run", chromedp.EmulateViewport(1440, 1000), chromedp.Navigate(b.url+"/runs/"+id))
	b.poll("the goodput chart drawn", `document.readyState === 'complete' && !!document.querySelector('#chart-goodput[data-drawn]')`, 20*time.Second)
	for _, c := range []struct{ at, want string }{
		{"70.25", "70.25"}, {"85", "85"}, {"90.5", "90.5"},
		{"76", "70.25"}, {"83", "85"}, // between points: the nearest
	} {
		got := b.eval(`new Promise(resolve => {
			const el = document.getElementById('chart-goodput');
			el.scrollIntoView({block: 'center'});
			const chart = echarts.getInstanceByDom(el);
			const [x, y] = chart.convertToPixel({xAxisIndex: 0, yAxisIndex: 0}, [` + c.at + `, 60]);
			chart.dispatchAction({type: 'showTip', x, y});
			const start = performance.now();
			const look = () => {
				const tip = Array.from(el.children).find(d => d.tagName === 'DIV' && !d.querySelector('canvas'));
				const text = tip ? tip.innerText : '';
				if (!text && performance.now() - start < 3000) {
					requestAnimationFrame(look);
					return;
				}
				resolve(text.split('\n')[0].trim());
			};
			look();
		})`)
		if got != c.want {
			t.Errorf("hovering %s: the tooltip is headed %q, want %q", c.at, got, c.want)
		}
	}
}
