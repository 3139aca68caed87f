package web

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserParetoSelects: the run page opens Deploy on the recommended
// setting (point 5: the bucket at 80 req/s under the heavy load that
// binds it); a Pareto dot's tooltip names its point, setting, scenario
// and both values; clicking the dot of point 0 selects it: the address
// gets ?point=0 and Deploy follows; the settings table sorts in place.
func TestBrowserParetoSelects(t *testing.T) {
	t.Parallel()
	b := newBrowserLab(t, 120*time.Second)
	id := doneRun(t, b.l, twoLoadsDoc)
	b.step("open the run", chromedp.EmulateViewport(1440, 1000), chromedp.Navigate(b.url+"/runs/"+id))
	b.poll("the Pareto chart drawn", `document.readyState === 'complete' && !!document.querySelector('#chart-pareto[data-drawn]')`, 20*time.Second)
	if v := b.eval(`document.getElementById('deploy-point').value`); v != "5" {
		t.Errorf("Deploy opens on point %s, want the recommended 5", v)
	}
	// The dot of point 0 in the "every point" series: its tooltip, then a click.
	find := `(() => { const el = document.getElementById('chart-pareto'); const c = echarts.getInstanceByDom(el);
		const o = c.getOption(); const s = o.series.findIndex(s => s.name === 'every point');
		const i = o.series[s].data.findIndex(d => d.point === 0); return [el, c, o, s, i]; })()`
	b.eval(`window.__dot = ` + find + `; 'ok'`)
	b.eval(`(() => { const [el, c, o, s, i] = window.__dot; el.scrollIntoView({block: 'center'}); c.dispatchAction({type: 'showTip', seriesIndex: s, dataIndex: i}); return 'ok'; })()`)
	b.poll("the tooltip", `(() => { const el = window.__dot[0]; const tip = Array.from(el.children).find(c => c.tagName === 'DIV' && !c.querySelector('canvas'));
		return !!tip && tip.innerText.includes('point 0'); })()`, 5*time.Second)
	tip := b.eval(`Array.from(window.__dot[0].children).find(c => c.tagName === 'DIV' && !c.querySelector('canvas')).innerText`)
	for _, want := range []string{"every point", "point 0", "setting: token-bucket rate_rps=40 burst=2", "scenario: load light", "goodput (req/s): ", "rejected (%): "} {
		if !strings.Contains(tip, want) {
			t.Errorf("the dot's tooltip %q lacks %q", tip, want)
		}
	}
	xy := b.eval(`(() => { const [el, c, o, s, i] = window.__dot; const p = c.convertToPixel({seriesIndex: s}, o.series[s].data[i].value);
		const r = el.getBoundingClientRect(); return (r.left + p[0]) + ',' + (r.top + p[1]); })()`)
	parts := strings.Split(xy, ",")
	x, _ := strconv.ParseFloat(parts[0], 64)
	y, _ := strconv.ParseFloat(parts[1], 64)
	b.step("click the dot", chromedp.MouseClickXY(x, y))
	b.poll("the page of point 0", `location.search.includes('point=0') && document.readyState === 'complete' && !!document.getElementById('deploy-point')`, 10*time.Second)
	if v := b.eval(`document.getElementById('deploy-point').value + ' ' + location.hash`); v != "0 #deploy" {
		t.Errorf("after the click Deploy shows %q, want point 0 at #deploy", v)
	}
	if v := b.eval(`document.querySelector('#results-table tr.chosen').getAttribute('data-point')`); v != "0" {
		t.Errorf("the results table shows point %s over time, want 0", v)
	}

	// The settings table sorts in place by worst reject_pct, the address
	// following (its section opened).
	b.openAll()
	rows := `Array.from(document.querySelectorAll('#settings-table tbody tr')).filter(r => !r.hidden).map(r => r.getAttribute('data-order')).join(',')`
	b.step("sort the settings", chromedp.Click(chromedp.CSS(`#settings-table th[data-key="worst_reject_pct"] a`)))
	if v := b.eval(rows + ` + ' ' + new URL(location.href).searchParams.get('ssort')`); v != "2,1,0 worst_reject_pct" {
		t.Errorf("settings sorted in place: %s", v)
	}
	b.step("feasible settings", chromedp.Click(chromedp.CSS(`#settings-feasible-only`)))
	if v := b.eval(rows + ` + ' ' + document.getElementById('settings-count').textContent`); v != "2 1 of 3 settings" {
		t.Errorf("feasible settings in place: %s", v)
	}

	// The results table's setting filter keeps the points whose setting
	// meets every objective in every scenario (the bucket at 80: points 4
	// and 5), in place, beside the per-point one.
	points := `Array.from(document.querySelectorAll('#results-table tbody tr')).filter(r => !r.hidden).map(r => r.getAttribute('data-point')).join(',')`
	b.step("points of feasible settings", chromedp.Click(chromedp.CSS(`#setting-feasible-only`)))
	if v := b.eval(points + ` + ' ' + document.getElementById('results-count').textContent + ' ' + new URL(location.href).searchParams.get('allscenarios')`); v != "4,5 2 of 6 points 1" {
		t.Errorf("points whose setting meets every objective: %s", v)
	}
}

// TestBrowserParallelSettings: with three objectives the settings'
// parallel-coordinates chart draws (echarts' parallel series, no console
// error) and a line's tooltip names its setting and its worst values.
func TestBrowserParallelSettings(t *testing.T) {
	t.Parallel()
	b := newBrowserLab(t, 120*time.Second)
	doc := strings.Replace(twoLoadsDoc, `{"metric":"reject_pct","op":"<=","value":30}`,
		`{"metric":"reject_pct","op":"<=","value":30},{"metric":"sojourn_p99_ms","op":"<=","value":500},{"metric":"admitted_rps","op":">=","value":30}`, 1)
	id := doneRun(t, b.l, doc)
	b.step("open the run", chromedp.EmulateViewport(1440, 1000), chromedp.Navigate(b.url+"/runs/"+id+"#chart-parallel"))
	b.poll("the parallel chart drawn", `document.readyState === 'complete' && !!document.querySelector('#chart-parallel[data-drawn]')`, 20*time.Second)
	// Hover the recommended line midway between its first two axes.
	xy := b.eval(`(() => { const el = document.getElementById('chart-parallel'); const c = echarts.getInstanceByDom(el);
		el.scrollIntoView({block: 'center'}); const o = c.getOption(); const s = o.series.findIndex(s => s.name === 'recommended');
		const cs = c.getModel().getComponent('parallel').coordinateSystem; const v = o.series[s].data[0].value;
		const a = cs.dataToPoint(v[0], 'dim0'), b = cs.dataToPoint(v[1], 'dim1'); const r = el.getBoundingClientRect();
		return (r.left + (a[0] + b[0]) / 2) + ',' + (r.top + (a[1] + b[1]) / 2); })()`)
	parts := strings.Split(xy, ",")
	x, _ := strconv.ParseFloat(parts[0], 64)
	y, _ := strconv.ParseFloat(parts[1], 64)
	b.step("hover the line", chromedp.MouseEvent(chromedp.MouseMoved, x-1, y), chromedp.MouseEvent(chromedp.MouseMoved, x, y))
	b.poll("the tooltip", `(() => { const el = document.getElementById('chart-parallel'); const tip = Array.from(el.children).find(c => c.tagName === 'DIV' && !c.querySelector('canvas'));
		return !!tip && tip.innerText.includes('setting:'); })()`, 5*time.Second)
	tip := b.eval(`Array.from(document.getElementById('chart-parallel').children).find(c => c.tagName === 'DIV' && !c.querySelector('canvas')).innerText`)
	for _, want := range []string{"recommended", "setting: token-bucket rate_rps=80 burst=2", "best overall (recommended)", "reject_pct <= 30: 19.8", "worst goodput_rps: "} {
		if !strings.Contains(tip, want) {
			t.Errorf("the line's tooltip %q lacks %q", tip, want)
		}
	}
}

// TestBrowserObjectivePicker: "+ Add objective" appends the picked line to
// the objectives in place (no post), then clears the pick.
func TestBrowserObjectivePicker(t *testing.T) {
	t.Parallel()
	b := newBrowserLab(t, 60*time.Second)
	b.step("open the form", chromedp.EmulateViewport(1440, 1000), chromedp.Navigate(b.url+"/"), chromedp.WaitVisible(chromedp.CSS("#sweep-form")))
	b.eval(`window.__stay = 'yes'; document.getElementById('section-objectives').open = true; ''`)
	b.step("pick", chromedp.SetValue(chromedp.CSS("#f-objectives"), "reject_pct <= 30"),
		chromedp.SetValue(chromedp.CSS("#f-objective_metric"), "goodput_rps"),
		chromedp.SetValue(chromedp.CSS("#f-objective_op"), ">="),
		chromedp.SetValue(chromedp.CSS("#f-objective_value"), " 150 "),
		chromedp.Click(chromedp.CSS("#add-objective")))
	if v := b.eval(`window.__stay + '|' + document.getElementById('f-objectives').value + '|' + document.getElementById('f-objective_metric').value`); v != "yes|reject_pct <= 30\ngoodput_rps >= 150\n|" {
		t.Errorf("after + Add objective: %q", v)
	}
}
