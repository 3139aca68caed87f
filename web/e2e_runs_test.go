package web

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserRunsSearch: on /runs the user filters by a metric in the
// query box (a misspelt column is said at the box, the text kept), picks
// a parameter column, tags a run and writes a note, filters by the tag,
// and deletes two ticked runs after the page that names them; GET
// /api/runs, fetched by the page, agrees at each step.
func TestBrowserRunsSearch(t *testing.T) {
	t.Parallel()
	b := newBrowserLab(t, 120*time.Second)
	plain := b.l.submitDone(plainListDoc)
	answered := b.l.submitDone(strings.Replace(answerDoc, `{"version":1,`, `{"version":1,"name":"answered",`, 1))
	scratch := b.l.submitDone(strings.Replace(answerDoc, `{"version":1,`, `{"version":1,"name":"scratch",`, 1))
	rows := `Array.from(document.querySelectorAll('#runs-table tbody tr')).map(tr => tr.dataset.run).join(' ')`
	api := func(query, js string) string {
		t.Helper()
		return b.eval(`fetch('/api/runs?` + query + `').then(r => r.json()).then(j => ` + js + `)`)
	}

	b.step("query by a metric", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(b.url+"/runs"), chromedp.WaitVisible(chromedp.CSS("#runs-query")),
		chromedp.SetValue(chromedp.CSS("#runs-query"), "goodput_rps > 100"), chromedp.Click(chromedp.CSS("#runs-query-go")))
	b.poll("the filtered list", `location.search.includes('goodput_rps') && !!document.getElementById('runs-table')`, 10*time.Second)
	if got := b.eval(rows); got != plain {
		t.Errorf("goodput_rps > 100 shows %q, want %s alone", got, plain)
	}
	if got := api("q=goodput_rps%20%3E%20100", `j.runs.map(r => r.id + ' ' + r.values.goodput_rps).join(',')`); !strings.HasPrefix(got, plain+" 1") {
		t.Errorf("GET /api/runs with the query: %q", got)
	}

	b.step("a misspelt column", chromedp.SetValue(chromedp.CSS("#runs-query"), "goodptu_rps > 100"), chromedp.Click(chromedp.CSS("#runs-query-go")))
	b.poll("the query's error", `!!document.getElementById('runs-query-error')`, 10*time.Second)
	if got := b.eval(`document.getElementById('runs-query-error').textContent + ' | ' + document.getElementById('runs-query').value`); got != "unknown column `goodptu_rps` at 1; did you mean goodput_rps? | goodptu_rps > 100" {
		t.Errorf("the error at the box: %q", got)
	}

	b.step("pick a parameter column", chromedp.Navigate(b.url+"/runs"), chromedp.WaitVisible(chromedp.CSS("#runs-table")),
		chromedp.Click(chromedp.CSS("#runs-columns summary")), chromedp.Click(chromedp.CSS(`#runs-columns input[value="rate_rps"]`)),
		chromedp.Click(chromedp.CSS("#runs-columns-go")))
	b.poll("the rate_rps column", `!!document.querySelector('#runs-table th a[data-col="rate_rps"]')`, 10*time.Second)
	if got := b.eval(`document.querySelector('tr[data-run="` + answered + `"] td[data-col="rate_rps"]').textContent`); got != "40.0" {
		t.Errorf("the answered run's rate_rps: %q, want its answer's 40.0", got)
	}

	b.step("tag a run", chromedp.Click(chromedp.CSS(`tr[data-run="`+plain+`"] a.labels-link`)), chromedp.WaitVisible(chromedp.CSS("#labels-tags")),
		chromedp.SetValue(chromedp.CSS("#labels-tags"), "baseline, fast"), chromedp.SetValue(chromedp.CSS("#labels-note"), "kept for the record"),
		chromedp.Click(chromedp.CSS("#labels-save")))
	b.poll("the list with the tags", `!!document.querySelector('tr[data-run="`+plain+`"] .run-tags a.tag')`, 10*time.Second)
	if got := b.eval(`location.search.includes('rate_rps') + ' ' + document.querySelector('tr[data-run="` + plain + `"] .run-note').textContent`); got != "true kept for the record" {
		t.Errorf("back on the list (with its columns): %q", got)
	}
	b.step("filter by the tag", chromedp.Click(chromedp.CSS(`tr[data-run="`+plain+`"] .run-tags a.tag`)))
	b.poll("the tag's list", `location.search.includes('tag=baseline') && !!document.getElementById('runs-tags')`, 10*time.Second)
	if got := b.eval(rows); got != plain {
		t.Errorf("tag baseline shows %q", got)
	}
	if got := api("tag=baseline", `j.runs.map(r => r.id + ' ' + r.tags.join('+') + ' ' + r.note).join(',')`); got != plain+" baseline+fast kept for the record" {
		t.Errorf("GET /api/runs?tag=baseline: %q", got)
	}

	b.step("tick two runs and delete", chromedp.Navigate(b.url+"/runs"), chromedp.WaitVisible(chromedp.CSS("#bulk-delete")),
		chromedp.Click(chromedp.CSS(`input.compare-box[value="`+answered+`"]`)), chromedp.Click(chromedp.CSS(`input.compare-box[value="`+scratch+`"]`)),
		chromedp.Click(chromedp.CSS("#bulk-delete")))
	b.poll("the confirmation", `!!document.getElementById('delete-runs-confirm')`, 10*time.Second)
	if got := b.eval(`document.querySelector('#delete-runs h1').textContent + ' ' + document.getElementById('delete-runs-list').textContent`); !strings.HasPrefix(got, "Delete 2 runs? ") ||
		!strings.Contains(got, "answered") || !strings.Contains(got, "scratch") {
		t.Errorf("the confirmation names: %q", got)
	}
	b.step("confirm", chromedp.Click(chromedp.CSS("#delete-runs-confirm")))
	b.poll("the list after the delete", `!!document.getElementById('runs-deleted')`, 10*time.Second)
	if got := b.eval(rows + ` + ' | ' + document.getElementById('runs-deleted').textContent`); got != plain+" | Deleted 2 runs: answered, scratch." && got != plain+" | Deleted 2 runs: scratch, answered." {
		t.Errorf("after the delete: %q", got)
	}
	if got := api("", `j.total + ' ' + j.runs.map(r => r.id).join(',')`); got != "1 "+plain {
		t.Errorf("GET /api/runs after the delete: %q", got)
	}
}
