package web

import (
	"bytes"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// plainListDoc has no objectives; with 4 workers its best point serves
// about 150 rps, more than any setting of answerDoc.
const plainListDoc = `{"version":1,"seed":1,"name":"plain",
 "workload":{"duration_ms":3000,"parts":[{"type":"constant","rate_rps":200}]},
 "server":{"workers":4,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[50,150],"burst":5}]}`

// submitDone submits a document and waits for its run to end.
func (l *lab) submitDone(doc string) string {
	l.t.Helper()
	w := l.postJSON("/api/runs", []byte(doc))
	if w.Code != http.StatusAccepted {
		l.t.Fatalf("submit: %d %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	l.wait(id)
	return id
}

func (l *lab) apiRuns(query string) (APIRuns, *httptest.ResponseRecorder) {
	l.t.Helper()
	w := l.get("/api/runs?" + query)
	var out APIRuns
	if w.Code == http.StatusOK {
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			l.t.Fatalf("GET /api/runs?%s: %v", query, err)
		}
	}
	return out, w
}

func runIDs(out APIRuns) []string {
	var ids []string
	for _, r := range out.Runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestRunsListQueryAndColumns: the query box filters by a metric on the
// page and in GET /api/runs alike; the chosen columns show each run's
// values (its answer's, or its best point's) in both; a query that does
// not read is a 400 at the box with the text kept, a problem naming q in
// the API.
func TestRunsListQueryAndColumns(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	withObj := l.submitDone(strings.Replace(answerDoc, `{"version":1,`, `{"version":1,"name":"answered",`, 1))
	plain := l.submitDone(plainListDoc)

	q := url.Values{"q": {"goodput_rps > 100 and limiter = token-bucket"}, "cols": {"rate_rps,goodput_rps"}}
	w := l.get("/runs?" + q.Encode())
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, `data-run="`+plain+`"`) || strings.Contains(body, `data-run="`+withObj+`"`) {
		t.Fatalf("the page of %s: %d, plain %v, answered %v", q.Encode(), w.Code, strings.Contains(body, plain), strings.Contains(body, withObj))
	}
	if !strings.Contains(body, `value="goodput_rps &gt; 100 and limiter = token-bucket"`) {
		t.Error("the query box does not keep the query")
	}
	if !strings.Contains(body, `<td class="num value-col" data-col="rate_rps">150.0</td>`) {
		t.Errorf("the plain run's rate_rps is not its best point's 150.0")
	}
	out, _ := l.apiRuns(q.Encode())
	if got := runIDs(out); !slices.Equal(got, []string{plain}) || out.Total != 1 {
		t.Fatalf("GET /api/runs?%s: %v (total %d)", q.Encode(), got, out.Total)
	}
	if r := out.Runs[0]; r.Values["rate_rps"] != 150.0 || r.ValuesFrom == nil || r.ValuesFrom.Basis != "best-point" || !slices.Equal(out.Columns, []string{"rate_rps", "goodput_rps"}) {
		t.Errorf("values: %+v from %+v, columns %v", r.Values, r.ValuesFrom, out.Columns)
	}
	if !slices.ContainsFunc(out.Available, func(c APIValueColumn) bool { return c.Key == "sojourn_p99_ms" && c.Kind == "metric" }) {
		t.Errorf("available columns: %+v", out.Available)
	}
	// The run with objectives has its answer's values: rate_rps=40.
	out, _ = l.apiRuns("q=" + url.QueryEscape("rate_rps = 40") + "&cols=rate_rps,limiter")
	if got := runIDs(out); !slices.Equal(got, []string{withObj}) || out.Runs[0].Values["limiter"] != "token-bucket" || out.Runs[0].ValuesFrom.Basis != "answer" {
		t.Fatalf("rate_rps = 40: %v %+v", got, out.Runs)
	}
	// Sorted by a metric: highest first on the first click, then the other way.
	out, _ = l.apiRuns("sort=goodput_rps")
	if got := runIDs(out); !slices.Equal(got, []string{plain, withObj}) {
		t.Errorf("sort=goodput_rps: %v", got)
	}
	out, _ = l.apiRuns("sort=goodput_rps&dir=asc")
	if got := runIDs(out); !slices.Equal(got, []string{withObj, plain}) {
		t.Errorf("sort=goodput_rps&dir=asc: %v", got)
	}
	if !strings.Contains(l.get("/runs").Body.String(), `href="/runs?sort=goodput_rps" class="sort" data-col="goodput_rps"`) {
		t.Error("the goodput header does not sort highest first on its first click")
	}

	bad := url.Values{"q": {"goodptu_rps > 150"}}
	w = l.get("/runs?" + bad.Encode())
	body = w.Body.String()
	if w.Code != http.StatusBadRequest || !strings.Contains(body, `id="runs-query-error"`) ||
		!strings.Contains(html.UnescapeString(body), "unknown column `goodptu_rps` at 1; did you mean goodput_rps?") ||
		!strings.Contains(body, `value="goodptu_rps &gt; 150"`) || !strings.Contains(body, `aria-invalid="true"`) {
		t.Errorf("a misspelt column: %d\n%s", w.Code, body)
	}
	_, w = l.apiRuns(bad.Encode())
	var p struct {
		Detail string `json:"detail"`
		Errors []struct{ Path, Message string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &p); w.Code != http.StatusBadRequest || err != nil || len(p.Errors) != 1 || p.Errors[0].Path != "q" ||
		p.Detail != "unknown column `goodptu_rps` at 1; did you mean goodput_rps?" {
		t.Errorf("the API's misspelt column: %d %s", w.Code, w.Body)
	}
	if w := l.get("/runs?cols=nope"); w.Code != http.StatusBadRequest || !strings.Contains(html.UnescapeString(w.Body.String()), "?cols= names `nope`") {
		t.Errorf("an unknown column: %d", w.Code)
	}
	// The picker offers every column, parameters and metrics, and keeps the query.
	body = l.get("/runs?q=" + url.QueryEscape("points > 1")).Body.String()
	if !strings.Contains(body, `id="runs-columns"`) || !strings.Contains(body, `name="cols" value="burst"`) || !strings.Contains(body, `<input type="hidden" name="q" value="points &gt; 1">`) {
		t.Error("the column picker lacks a parameter or the query")
	}
}

// TestRunLabels: a run's tags and note, set by its form (errors at their
// inputs, 422, the text kept) or PATCH /api/runs/{id}, show in the list,
// filter it (?tag=, tag = x) and come back from GET /api/runs.
func TestRunLabels(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4) // queued runs take tags too
	a := strings.TrimPrefix(l.postJSON("/api/runs", []byte(answerDoc)).Header().Get("Location"), "/api/runs/")
	b := strings.TrimPrefix(l.postJSON("/api/runs", []byte(answerDoc)).Header().Get("Location"), "/api/runs/")
	back := "/runs?q=" + url.QueryEscape("points > 1")
	if w := l.get(labelsURL(a, back)); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `id="labels-tags"`) {
		t.Fatalf("the labels form: %d", w.Code)
	}
	w := l.postForm("/runs/"+a+"/labels", url.Values{"tags": {"ok, has;semicolon"}, "note": {"kept text"}, "back": {back}})
	if body := w.Body.String(); w.Code != http.StatusUnprocessableEntity || !strings.Contains(body, `id="labels-tags-error"`) ||
		!strings.Contains(body, `value="ok, has;semicolon"`) || !strings.Contains(body, ">kept text</textarea>") {
		t.Fatalf("bad tags: %d\n%s", w.Code, body)
	}
	w = l.postForm("/runs/"+a+"/labels", url.Values{"tags": {"Baseline, canary"}, "note": {"first try\nsecond line"}, "back": {back}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != back {
		t.Fatalf("save: %d %s", w.Code, w.Header().Get("Location"))
	}
	if w := l.postForm("/runs/"+a+"/labels", url.Values{"tags": {"x"}, "back": {"https://evil.example/"}}); w.Header().Get("Location") != "/runs" {
		t.Errorf("a return address off the lab: %s", w.Header().Get("Location"))
	}
	l.postForm("/runs/"+a+"/labels", url.Values{"tags": {"Baseline, canary"}, "note": {"first try\nsecond line"}})
	body := l.get("/runs").Body.String()
	if !strings.Contains(body, `class="tag" href="/runs?tag=baseline">baseline</a>`) || !strings.Contains(body, "first try …") {
		t.Errorf("the list does not show the tags and note")
	}
	out, _ := l.apiRuns("tag=baseline")
	if got := runIDs(out); !slices.Equal(got, []string{a}) || !slices.Equal(out.Runs[0].Tags, []string{"baseline", "canary"}) || out.Runs[0].Note != "first try\nsecond line" {
		t.Fatalf("?tag=baseline: %v %+v", got, out.Runs)
	}
	req := httptest.NewRequest(http.MethodPatch, "/api/runs/"+b, bytes.NewReader([]byte(`{"tags":["canary","x2"]}`)))
	req.Header.Set("Content-Type", "application/json")
	var got APIRun
	if w := l.do(req); w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &got) != nil || !slices.Equal(got.Tags, []string{"canary", "x2"}) {
		t.Fatalf("PATCH: %d %s", w.Code, w.Body)
	}
	req = httptest.NewRequest(http.MethodPatch, "/api/runs/"+b, bytes.NewReader([]byte(`{"note":"`+strings.Repeat("n", 2001)+`"}`)))
	req.Header.Set("Content-Type", "application/json")
	if w := l.do(req); w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `"path": "note"`) {
		t.Errorf("PATCH a long note: %d %s", w.Code, w.Body)
	}
	out, _ = l.apiRuns("q=" + url.QueryEscape("tag = canary and tag != baseline"))
	if got := runIDs(out); !slices.Equal(got, []string{b}) || out.Runs[0].Note != "" {
		t.Errorf("tag = canary and tag != baseline: %v", got)
	}
	got = APIRun{}
	if w := l.get("/api/runs/" + a); json.Unmarshal(w.Body.Bytes(), &got) != nil || !slices.Equal(got.Tags, []string{"baseline", "canary"}) {
		t.Errorf("GET /api/runs/{id} lacks the tags: %s", w.Body)
	}
}

// TestBulkDelete: ticked runs are deleted after a page that names them,
// all in one step, with their files; a queued one among them stops the
// delete (409) and nothing goes.
func TestBulkDelete(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	a, b, c := l.submitDone(plainListDoc), l.submitDone(answerDoc), l.submitDone(plainListDoc)
	w := l.get("/runs/delete?runs=" + a + "&runs=" + b)
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, "Delete 2 runs?") || !strings.Contains(body, "<code>"+a+"</code>") || !strings.Contains(body, `id="delete-runs-confirm"`) {
		t.Fatalf("the confirmation: %d\n%s", w.Code, body)
	}
	if w := l.postForm("/runs/delete", url.Values{"runs": {a, b}}); w.Code != http.StatusOK || l.get("/runs/"+a).Code != http.StatusOK {
		t.Fatalf("unconfirmed: %d", w.Code)
	}
	q := newLab(t, false, 4)
	queued := strings.TrimPrefix(q.postJSON("/api/runs", []byte(answerDoc)).Header().Get("Location"), "/api/runs/")
	qa := q.storeRun(nil)
	if w := q.postForm("/runs/delete", url.Values{"runs": {qa, queued}, "confirm": {"yes"}}); w.Code != http.StatusConflict || q.get("/runs/"+qa).Code != http.StatusOK {
		t.Errorf("a queued run among the ticked: %d; nothing may go", w.Code)
	}
	w = l.postForm("/runs/delete", url.Values{"runs": {a + "," + b}, "confirm": {"yes"}})
	if w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), "/runs?deleted=") {
		t.Fatalf("delete: %d %s", w.Code, w.Header().Get("Location"))
	}
	if body := l.get(w.Header().Get("Location")).Body.String(); !strings.Contains(body, "Deleted 2 runs: plain, ") {
		t.Errorf("the list does not name the deleted runs")
	}
	for _, id := range []string{a, b} {
		if w := l.get("/runs/" + id + "/files/results.csv"); w.Code != http.StatusNotFound {
			t.Errorf("run %s's results.csv after the delete: %d", id, w.Code)
		}
	}
	if w := l.get("/runs/" + c + "/files/results.csv"); w.Code != http.StatusOK {
		t.Errorf("the run not ticked lost its file: %d", w.Code)
	}
	if out, _ := l.apiRuns(""); !slices.Equal(runIDs(out), []string{c}) {
		t.Errorf("GET /api/runs after the delete: %v", runIDs(out))
	}
	if w := l.get("/runs/delete?runs=" + a); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `id="delete-runs-missing"`) {
		t.Errorf("asking to delete a deleted run: %d", w.Code)
	}
}

// TestRunPageLabels: a finished run's page (cached) shows its tags and
// note as soon as they are saved, by its form or the API, and its "Tags
// and note" button returns to it.
func TestRunPageLabels(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	id := l.submitDone(plainListDoc)
	body := l.get("/runs/" + id).Body.String() // now in the page cache
	if strings.Contains(body, `id="run-labels"`) || !strings.Contains(body, `href="`+html.EscapeString(labelsURL(id, "/runs/"+id))+`"`) {
		t.Fatal("the run page has labels already, or no Tags and note button")
	}
	w := l.postForm("/runs/"+id+"/labels", url.Values{"tags": {"canary"}, "note": {"line one\nline two"}, "back": {"/runs/" + id}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/runs/"+id {
		t.Fatalf("save: %d %s", w.Code, w.Header().Get("Location"))
	}
	body = l.get("/runs/" + id).Body.String()
	if !strings.Contains(body, `<a class="tag" href="/runs?tag=canary">canary</a>`) || !strings.Contains(body, "line one\nline two</p>") {
		t.Errorf("the run page after saving its labels lacks them")
	}
	req := httptest.NewRequest(http.MethodPatch, "/api/runs/"+id, strings.NewReader(`{"note":"from the API"}`))
	req.Header.Set("Content-Type", "application/json")
	if w := l.do(req); w.Code != http.StatusOK {
		t.Fatalf("PATCH: %d %s", w.Code, w.Body)
	}
	if body := l.get("/runs/" + id).Body.String(); !strings.Contains(body, ">from the API</p>") || !strings.Contains(body, ">canary</a>") {
		t.Errorf("the run page after PATCH lacks the new note or keeps no tag")
	}
}
