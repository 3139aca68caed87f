package web

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// resultRows lists the data-point of each results table row, in order.
func resultRows(t *testing.T, body string) []string {
	t.Helper()
	i := strings.Index(body, `id="results-table"`)
	if i < 0 {
		t.Fatalf("no results table")
	}
	table := body[i : i+strings.Index(body[i:], "</table>")]
	var out []string
	for _, m := range regexp.MustCompile(`<tr[^>]* data-point="(\d+)"`).FindAllStringSubmatch(table, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestResultsTableSortFilter: without JavaScript the results table sorts
// by any column through ?sort=&dir= and shows only the feasible points
// through ?feasible=1; each is its own cached page, and the links keep
// the rest of the address.
func TestResultsTableSortFilter(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	w := l.postJSON("/api/runs", []byte(answerDoc))
	if w.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	l.wait(id)
	page := "/runs/" + id
	if got := strings.Join(resultRows(t, l.get(page).Body.String()), ","); got != "0,1,2,3" {
		t.Errorf("sweep order %s", got)
	}
	// reject_pct: 60, 20, 0 for the bucket at 20, 40, 60; 0 for none.
	// Ties keep sweep order in either direction.
	if got := strings.Join(resultRows(t, l.get(page+"?sort=reject_pct").Body.String()), ","); got != "2,3,1,0" {
		t.Errorf("sorted by reject_pct: %s", got)
	}
	desc := l.get(page + "?sort=reject_pct&dir=desc").Body.String()
	if got := strings.Join(resultRows(t, desc), ","); got != "0,1,2,3" {
		t.Errorf("sorted by reject_pct, descending: %s", got)
	}
	if !strings.Contains(desc, `aria-sort="descending" data-key="reject_pct"`) {
		t.Errorf("the sorted column is not marked")
	}
	if got := strings.Join(resultRows(t, l.get(page+"?sort=point&dir=desc").Body.String()), ","); got != "3,2,1,0" {
		t.Errorf("sorted by point, descending: %s", got)
	}
	feasible := l.get(page + "?feasible=1&sort=goodput_rps").Body.String()
	if got := strings.Join(resultRows(t, feasible), ","); got != "1" {
		t.Errorf("feasible rows %s", got)
	}
	if !strings.Contains(feasible, `data-points="4">1 of 4 points</span>`) || !strings.Contains(feasible, `id="feasible-only" checked`) {
		t.Errorf("the filter is not shown as on")
	}
	// The point links keep the order and filter.
	if !strings.Contains(feasible, `href="/runs/`+id+`?feasible=1&amp;point=1&amp;sort=goodput_rps#timeline"`) &&
		!strings.Contains(feasible, `shown`) {
		t.Errorf("point link lost the table's state")
	}
	// An unknown column is sweep order; the page is the default's.
	if got := strings.Join(resultRows(t, l.get(page+"?sort=nope&dir=desc").Body.String()), ","); got != "0,1,2,3" {
		t.Errorf("unknown sort: %s", got)
	}
	// The point selector is the first column.
	body := l.get(page).Body.String()
	head := body[strings.Index(body, `id="results-table"`):]
	head = head[:strings.Index(head, "</tr>")]
	if i, j := strings.Index(head, `data-key="point"`), strings.Index(head, `data-key="limiter"`); i < 0 || j < i {
		t.Errorf("the point column is not first")
	}
}

// TestParetoAxesByQuery: the Pareto chart plots the columns ?px= and ?py=
// name, its selects show them, and an unknown column falls back.
func TestParetoAxesByQuery(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	w := l.postJSON("/api/runs", []byte(answerDoc))
	if w.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	l.wait(id)
	body := l.get("/runs/" + id + "?px=reject_pct&py=utilization_pct").Body.String()
	if !strings.Contains(body, `<option value="reject_pct" selected`) || !strings.Contains(body, `<option value="utilization_pct" selected`) {
		t.Errorf("the selects do not show the chosen columns")
	}
	if !strings.Contains(body, "Pareto front: utilization (%) against rejected (%)") {
		t.Errorf("the chart does not plot the chosen columns")
	}
	def := l.get("/runs/" + id + "?px=nope").Body.String()
	if !strings.Contains(def, "Pareto front: goodput (req/s) against rejected (%)") {
		t.Errorf("default Pareto columns wrong")
	}
}

// tableHeaderKeys lists the results table's header keys, in order.
func tableHeaderKeys(t *testing.T, body string) []string {
	t.Helper()
	i := strings.Index(body, `id="results-table"`)
	if i < 0 {
		t.Fatalf("no results table")
	}
	head := body[i : i+strings.Index(body[i:], "</thead>")]
	var out []string
	for _, m := range regexp.MustCompile(`data-key="([^"]+)"`).FindAllStringSubmatch(head, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestResultsColumnChooser: the chooser offers every column of the run's
// results.csv (but point and limiter, always shown, meets_all, shown with
// objectives, and the _ci95 columns, which are the cells' ±); ?cols=
// shows the chosen ones in results.csv's order, sorts by them and keeps
// through the page's other links; the header counts what the filter
// shows.
func TestResultsColumnChooser(t *testing.T) {
	l := newLab(t, true, 4)
	id := doneRun(t, l, answerDoc)
	page := "/runs/" + id
	csv := l.get(page + "/files/results.csv").Body.String()
	header := strings.Split(strings.SplitN(csv, "\n", 2)[0], ",")
	body := l.get(page).Body.String()
	chooser := body[strings.Index(body, `id="column-chooser"`):]
	chooser = chooser[:strings.Index(chooser, "</details>")]
	offered := 0
	for _, key := range header {
		if key == "point" || key == "limiter" || key == "meets_all" {
			continue
		}
		offered++
		if !strings.Contains(chooser, `name="cols" value="`+key+`"`) {
			t.Errorf("the chooser does not offer results.csv's %s", key)
		}
	}
	if n := strings.Count(chooser, `name="cols"`); n != offered {
		t.Errorf("the chooser offers %d columns, results.csv has %d to offer", n, offered)
	}
	if !strings.Contains(chooser, `value="goodput_rps" checked`) || strings.Contains(chooser, `value="admitted" checked`) {
		t.Errorf("the default columns are not the ones checked")
	}

	// Chosen columns, in results.csv's order whatever the address' order.
	w := l.get(page + "?cols=pass_reject_pct_le_30&cols=admitted,type&sort=admitted&dir=desc")
	got := tableHeaderKeys(t, w.Body.String())
	if want := []string{"point", "limiter", "swept", "type", "admitted", "pass_reject_pct_le_30"}; !slices.Equal(got, want) {
		t.Errorf("chosen columns %v, want %v", got, want)
	}
	// admitted: the bucket at 20, 40, 60 req/s admits about 200, 400, 500
	// of 500 arrivals; none admits all 500.
	if rows := strings.Join(resultRows(t, w.Body.String()), ","); rows != "2,3,1,0" {
		t.Errorf("sorted by admitted, descending: %s", rows)
	}
	chosen := w.Body.String()
	if !strings.Contains(chosen, `<input type="hidden" name="sort" value="admitted">`) || !strings.Contains(chosen, `name="cols" value="admitted" checked`) {
		t.Errorf("the chooser form does not keep the sort, or does not show the choice")
	}
	if !strings.Contains(chosen, `cols=admitted%2Cpass_reject_pct_le_30%2Ctype`) {
		t.Errorf("the page's links do not keep the columns")
	}
	// A column the run does not have shows nothing; the page still renders.
	if got := tableHeaderKeys(t, l.get(page+"?cols=nope,goodput_rps").Body.String()); !slices.Equal(got, []string{"point", "limiter", "swept", "goodput_rps"}) {
		t.Errorf("unknown column: %v", got)
	}
	if !strings.Contains(body, `data-points="4">4 of 4 points</span>`) {
		t.Errorf("the header does not count the points shown")
	}
}

// TestResultsTableIntervals: a replicated run's measures print as mean ±
// the half-width of their 95% interval, as results.csv's <col> and
// <col>_ci95; its settings print alone.
func TestResultsTableIntervals(t *testing.T) {
	l := newLab(t, true, 4)
	id := doneRun(t, l, `{"version":1,"seed":1,"replications":3,
	 "workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":50}]},
	 "server":{"workers":1,"service_ms":10},
	 "limiters":[{"type":"token-bucket","rate_rps":[20,40],"burst":2}]}`)
	csv := l.get("/runs/" + id + "/files/results.csv").Body.String()
	lines := strings.Split(csv, "\n")
	header := strings.Split(lines[1-1], ",")
	row := strings.Split(lines[1], ",")
	col := func(k string) string { return row[slices.Index(header, k)] }
	body := l.get("/runs/" + id + "?cols=goodput_rps,rate_rps").Body.String()
	want := ">" + col("goodput_rps") + " ± " + col("goodput_rps_ci95") + "<"
	if !strings.Contains(body, want) {
		t.Errorf("no cell %q", want)
	}
	if !strings.Contains(body, ">"+col("rate_rps")+"<") || strings.Contains(body, col("rate_rps")+" ±") {
		t.Errorf("the rate, a setting, prints with an interval or not at all")
	}
	if !strings.Contains(body, "mean ± the half-width of its 95% interval") {
		t.Errorf("the chooser does not say what ± is")
	}
}

// settingsRows lists the settings table's rows by their data-order.
func settingsRows(t *testing.T, body string) []string {
	t.Helper()
	i := strings.Index(body, `id="settings-table"`)
	if i < 0 {
		t.Fatalf("no settings table")
	}
	table := body[i : i+strings.Index(body[i:], "</table>")]
	var out []string
	for _, m := range regexp.MustCompile(`<tr[^>]* data-order="(\d+)"`).FindAllStringSubmatch(table, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestSettingsTable: a run with objectives has a settings table, a row
// per setting with its worst values over the scenarios; it sorts and
// filters like the results table, without JavaScript, and each row
// selects its setting's binding point.
func TestSettingsTable(t *testing.T) {
	l := newLab(t, true, 4)
	id := doneRun(t, l, twoLoadsDoc)
	page := "/runs/" + id
	body := l.get(page).Body.String()
	if got := strings.Join(settingsRows(t, body), ","); got != "0,1,2" {
		t.Errorf("settings order %s", got)
	}
	table := body[strings.Index(body, `id="settings"`):]
	table = table[:strings.Index(table, "</section>")]
	for _, want := range []string{"3 of 3 settings", "rate_rps=80 burst=2", "best overall", "load heavy", "reject_pct &lt;= 30",
		`data-key="worst_reject_pct"`, `data-key="margin"`, `<span class="muted" title="Deploy and Over time show it">5 shown</span>`, " (misses)"} {
		if !strings.Contains(table, want) {
			t.Errorf("the settings table lacks %q", want)
		}
	}
	// Worst reject_pct, descending: 40 (rejects most of the heavy load), 60, 80.
	sorted := l.get(page + "?ssort=worst_reject_pct&sdir=desc").Body.String()
	if got := strings.Join(settingsRows(t, sorted), ","); got != "0,1,2" {
		t.Errorf("by worst reject_pct, descending: %s", got)
	}
	if got := strings.Join(settingsRows(t, l.get(page+"?ssort=worst_reject_pct").Body.String()), ","); got != "2,1,0" {
		t.Errorf("by worst reject_pct: %s", got)
	}
	if !strings.Contains(sorted, `aria-sort="descending" data-key="worst_reject_pct"`) {
		t.Error("the sorted column is not marked")
	}
	feasible := l.get(page + "?sfeasible=1&ssort=margin").Body.String()
	if got := strings.Join(settingsRows(t, feasible), ","); got != "2" {
		t.Errorf("feasible settings %s", got)
	}
	if !strings.Contains(feasible, `data-points="3">1 of 3 settings</span>`) || !strings.Contains(feasible, `id="settings-feasible-only" checked`) {
		t.Error("the filter is not shown as on")
	}
	// The results table's links keep the settings table's state.
	if !strings.Contains(feasible, `?point=0&amp;sfeasible=1&amp;ssort=margin#timeline`) {
		t.Error("the point links lose the settings table's state")
	}
	// A run without objectives has none.
	if plain := l.get("/runs/" + doneRun(t, l, exportSweep)).Body.String(); strings.Contains(plain, `id="settings"`) {
		t.Error("a settings table without objectives")
	}
}
