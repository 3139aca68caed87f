package web

import (
	"net/http"
	"regexp"
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
	if !strings.Contains(feasible, "4 points, 1 meeting every objective") || !strings.Contains(feasible, `id="feasible-only" checked`) {
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
