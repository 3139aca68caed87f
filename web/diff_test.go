package web

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/web/form"
)

// TestDecisionDiff: two points of one run show how many requests they
// decide differently, the timeline and the first disagreements; the CSV
// has a row for each; runs on other arrivals are refused saying why; bad
// queries are 4xx with a clear message.
func TestDecisionDiff(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 8)
	a := l.doneRun()
	run, _ := l.store.Get(t.Context(), a)
	last := strconv.Itoa(run.PointsTotal - 1)
	w := l.get("/diff?a=" + a + ":0&b=" + a + ":" + last)
	if w.Code != http.StatusOK {
		t.Fatalf("diff: %d %s", w.Code, w.Body.String())
	}
	body := w.Body.String()
	for _, want := range []string{`id="diff-count"`, `id="diff-timeline"`, `id="diff-first"`, `href="/diff.csv?a=`} {
		if !strings.Contains(body, want) {
			t.Errorf("diff page lacks %s", want)
		}
	}
	i := strings.Index(body, `id="diff-count">`)
	count, _ := strconv.Atoi(body[i+len(`id="diff-count">`) : i+len(`id="diff-count">`)+strings.Index(body[i+len(`id="diff-count">`):], "<")])
	if count == 0 {
		t.Error("the first and last points of the default sweep agree on every request")
	}
	w = l.get("/diff.csv?a=" + a + ":0&b=" + a + ":" + last)
	rows, err := csv.NewReader(strings.NewReader(w.Body.String())).ReadAll()
	if err != nil || w.Code != http.StatusOK || len(rows) != count+1 || strings.Join(rows[0], ",") != "seq,time_ms,client,a,b,release_a_ms,release_b_ms" {
		t.Errorf("CSV: %d, %d rows (want %d), %v", w.Code, len(rows), count+1, err)
	}
	if cd := w.Header().Get("Content-Disposition"); !strings.Contains(cd, "decisions-"+a+"-0-vs-"+a+"-"+last+".csv") {
		t.Errorf("CSV Content-Disposition %q", cd)
	}

	v := formValuesOf(form.Default())
	v.Set("seed", "7")
	b := runIDFrom(t, l.postForm("/runs", v))
	l.wait(b)
	for _, c := range []struct {
		query string
		code  int
		want  string
	}{
		{"?a=" + a + ":0&b=" + b + ":0", http.StatusUnprocessableEntity, "different arrivals: seed"},
		{"?a=" + a + ":0", http.StatusBadRequest, "b: missing"},
		{"?a=" + a + "&b=" + a + ":1", http.StatusBadRequest, "is not RUN:POINT"},
		{"?a=" + a + ":-1&b=" + a + ":1", http.StatusBadRequest, "is not RUN:POINT"},
		{"?a=nope:1&b=" + a + ":1", http.StatusBadRequest, "not a run id"},
		{"?a=aaaaaaaaaaaa:0&b=" + a + ":1", http.StatusNotFound, "no run"},
		{"?a=" + a + ":0&b=" + a + ":9999", http.StatusUnprocessableEntity, "b: point 9999"},
		{"?a=" + a + ":0&b=" + a + ":1&eps_ms=0", http.StatusBadRequest, "eps_ms"},
		{"?a=" + a + ":0&b=" + a + ":1&x=1", http.StatusBadRequest, "unknown parameter"},
	} {
		for _, path := range []string{"/diff", "/diff.csv"} {
			w := l.get(path + c.query)
			if w.Code != c.code || !strings.Contains(w.Body.String(), c.want) {
				t.Errorf("%s%s: %d, want %d with %q", path, c.query, w.Code, c.code, c.want)
			}
		}
	}
	// The compare page offers the diff of its runs.
	if body := l.get("/compare?runs=" + a + "," + b).Body.String(); !strings.Contains(body, `id="diff-form"`) {
		t.Error("the compare page has no decision diff form")
	}
}
