package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/web/form"
)

// TestComparePage: two done runs of different configs show the fields
// that differ by config path and one chart per measure with a line per
// run · limiter; the run list's checkbox query redirects to the
// permalink; bad queries are 4xx with a clear message.
func TestComparePage(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 8)
	a := l.doneRun()
	v := formValuesOf(form.Default())
	v.Set("name", "other seed")
	v.Set("seed", "7")
	b := runIDFrom(t, l.postForm("/runs", v))
	l.wait(b)

	w := l.get("/compare?runs=" + a + "," + b)
	if w.Code != http.StatusOK {
		t.Fatalf("compare: %d %s", w.Code, w.Body.String())
	}
	body := w.Body.String()
	for _, want := range []string{`id="config-diff"`, "<code>seed</code>", "<code>name</code>", "other seed", `id="compare-1-1"`, a + " · ", b + " · "} {
		if !strings.Contains(body, want) {
			t.Errorf("compare page lacks %s", want)
		}
	}
	if strings.Contains(body, "<code>workload.duration_ms</code>") {
		t.Error("a field both runs share is in the diff")
	}

	// The run list: a checkbox per run and the compare button; its query
	// (runs repeated) redirects to the permalink.
	list := l.get("/runs").Body.String()
	if !strings.Contains(list, `form="compare-form"`) || !strings.Contains(list, `id="compare-button"`) {
		t.Error("the run list has no compare checkboxes")
	}
	w = l.get("/compare?runs=" + a + "&runs=" + b)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/compare?runs="+a+","+b {
		t.Errorf("repeated runs: %d → %q", w.Code, w.Header().Get("Location"))
	}

	for _, c := range []struct {
		query string
		code  int
		want  string
	}{
		{"", http.StatusBadRequest, "pick two or more runs"},
		{"?runs=" + a, http.StatusBadRequest, "needs two or more runs"},
		{"?runs=" + a + "," + a, http.StatusBadRequest, "given twice"},
		{"?runs=" + a + ",nope", http.StatusBadRequest, "is not a run id"},
		{"?runs=" + a + ",aaaaaaaaaaaa", http.StatusNotFound, "no run"},
		{"?runs=" + strings.Repeat(a+",", 3) + "bbbbbbbbbbbb,cccccccccccc,dddddddddddd,eeeeeeeeeeee,ffffffffffff", http.StatusBadRequest, ""},
		{"?runs=aaaaaaaaaaaa,bbbbbbbbbbbb,cccccccccccc,dddddddddddd,eeeeeeeeeeee,ffffffffffff,gggggggggggg", http.StatusBadRequest, "at most 6"},
		{"?runs=" + a + "," + b + "&x=1", http.StatusBadRequest, "unknown parameter"},
	} {
		w := l.get("/compare" + c.query)
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("/compare%s: %d, want %d with %q", c.query, w.Code, c.code, c.want)
		}
	}
}

// TestConfigDiff: leaves by config path, lists of values as one leaf,
// missing fields empty.
func TestConfigDiff(t *testing.T) {
	t.Parallel()
	rows, same, clipped := configDiff([][]byte{
		[]byte(`{"a":1,"l":[{"b":[1,2],"c":"x"}],"only":true}`),
		[]byte(`{"a":1,"l":[{"b":[1,3],"c":"x"}]}`),
	})
	if same != 2 || clipped || len(rows) != 2 {
		t.Fatalf("rows %v same %d", rows, same)
	}
	if rows[0].Path != "l[0].b" || rows[0].Values[0] != "[1,2]" || rows[0].Values[1] != "[1,3]" {
		t.Errorf("row 0: %+v", rows[0])
	}
	if rows[1].Path != "only" || rows[1].Values[1] != "" {
		t.Errorf("row 1: %+v", rows[1])
	}
}
