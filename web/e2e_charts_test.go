package web

import "time"

// The charts as echarts holds them (issue 26): TestBrowserPresetPages
// calls checkDrawnCharts on the run pages of drawnChartPresets, so the
// presets run and load once for both checks. Every preset's page opened
// whole draws 560 charts, 5 minutes on the shared 2 cores (five presets:
// 44 s); these three (27 s at a load average of 34) hold every kind of line chart of many series (small
// charts per limiter, client lines coloured by rate and dashed by
// policy, seven limiters' lines), 46 charts. jsLegends checks every
// preset's options as the page carries them, and TestChartsLegible
// (web/charts) every chart the options make.
var drawnChartPresets = []string{"admission-control", "collapse", "capacity-drop"}

// jsDrawnCharts reads every drawn chart's option back from echarts
// (echarts.getInstanceByDom(el).getOption(), what echarts made of the
// option, every component a list): no legend of type "scroll"; a chart of
// several named series (an interval's bars and band and a key's empty
// series aside) has a shown legend or a colour key (visualMap); a chart
// of more than six has a colour key or a legend naming every one. It
// returns the problems, and the number of charts read after "|".
const jsDrawnCharts = `(() => {
	const out = [];
	let n = 0;
	for (const el of document.querySelectorAll('div.chart[data-drawn]')) {
		const c = echarts.getInstanceByDom(el);
		if (!c) { out.push(el.id + ': drawn but no echarts instance'); continue; }
		const o = c.getOption();
		n++;
		const legends = (o.legend || []).filter(l => l && l.show !== false);
		if ((o.legend || []).some(l => l && l.type === 'scroll')) out.push(el.id + ': a scrolling legend');
		const names = [...new Set((o.series || [])
			.filter(s => s.name && !/ 95% (CI|interval)$/.test(s.name) && (s.data || []).length > 0)
			.map(s => s.name))];
		const keys = (o.visualMap || []).length;
		if (names.length > 1 && legends.length === 0 && keys === 0) out.push(el.id + ': ' + names.length + ' series without a legend or colour key');
		if (names.length > 6 && keys === 0 && !legends.some(l => !l.data || l.data.length === 0 || names.every(x => l.data.some(d => (d && d.name !== undefined ? d.name : d) === x)))) {
			out.push(el.id + ': ' + names.length + ' series, no colour key and no legend naming each');
		}
	}
	return out.join('; ') + '|' + n;
})()`

// checkDrawnCharts opens every section of the run page on screen and
// checks its drawn charts (jsDrawnCharts); name says which page. It
// returns how long it took.
func (b *browserLab) checkDrawnCharts(name string) time.Duration {
	b.t.Helper()
	start := time.Now()
	b.eval(jsOpenAll)
	b.poll(name+": every chart drawn", `document.querySelectorAll('div.chart[data-drawn]').length === document.querySelectorAll('div.chart').length`, 20*time.Second)
	res := b.eval(jsDrawnCharts)
	bad, n := res, ""
	for i := len(res) - 1; i >= 0; i-- {
		if res[i] == '|' {
			bad, n = res[:i], res[i+1:]
			break
		}
	}
	if n == "0" {
		b.t.Errorf("%s: no drawn chart read", name)
	}
	if bad != "" {
		b.t.Errorf("%s: %s", name, bad)
	}
	return time.Since(start)
}
