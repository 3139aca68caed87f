package web

import (
	"net/http"
	"strings"
	"testing"
)

// TestRunsSortAndFilter: the run list sorts by its column headers and
// filters by text and status; a bad sort is a 400 that says why.
func TestRunsSortAndFilter(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 8) // runs stay queued
	for _, name := range []string{"bravo", "alpha", "charlie"} {
		doc := strings.Replace(answerDoc, `{"version":1,`, `{"version":1,"name":"`+name+`",`, 1)
		if w := l.postJSON("/api/runs", []byte(doc)); w.Code != http.StatusAccepted {
			t.Fatalf("%s: %d %s", name, w.Code, w.Body)
		}
	}
	order := func(path string) []int {
		t.Helper()
		body := l.get(path).Body.String()
		return []int{strings.Index(body, ">alpha<"), strings.Index(body, ">bravo<"), strings.Index(body, ">charlie<")}
	}
	if o := order("/runs?sort=name&order=asc"); !(o[0] > 0 && o[0] < o[1] && o[1] < o[2]) {
		t.Errorf("name ascending: %v", o)
	}
	if o := order("/runs"); !(o[2] > 0 && o[2] < o[0] && o[0] < o[1]) {
		t.Errorf("newest first: %v", o)
	}
	if o := order("/runs?q=ALP"); o[0] < 0 || o[1] >= 0 || o[2] >= 0 {
		t.Errorf("?q=ALP: %v", o)
	}
	if o := order("/runs?status=done"); o[0] >= 0 || o[1] >= 0 || o[2] >= 0 {
		t.Errorf("?status=done: %v", o)
	}
	body := l.get("/runs?sort=name&order=asc").Body.String()
	if !strings.Contains(body, `id="sort-name" href="/runs?sort=name"`) && !strings.Contains(body, `href="/runs?sort=name" class="sort" id="sort-name"`) {
		t.Errorf("the name header does not turn the sort around")
	}
	w := l.get("/runs?sort=nope")
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `sort &#34;nope&#34; (one of name, created, status, points, or a value column)`) {
		t.Errorf("bad sort: %d\n%s", w.Code, w.Body)
	}
}
