package web

import (
	"html"
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

// TestConfigDiffLimitersByNameAndType: the same limiters in another order
// show no difference (they were matched by position: every parameter
// differed); a changed parameter shows under the limiter's name and type;
// an objective's operator prints as written, `<=`, not `\u003c=`.
func TestConfigDiffLimitersByNameAndType(t *testing.T) {
	tb := `{"type":"token-bucket","rate_rps":[100,200],"burst":5}`
	named := `{"type":"token-bucket","name":"small","rate_rps":100,"burst":1}`
	none := `{"type":"none"}`
	rows, _, _ := configDiff([][]byte{
		[]byte(`{"limiters":[` + tb + `,` + named + `,` + none + `,` + none + `]}`),
		[]byte(`{"limiters":[` + none + `,` + named + `,` + none + `,` + tb + `]}`),
	})
	if len(rows) != 0 {
		t.Errorf("the same limiters in another order differ: %+v", rows)
	}
	rows, _, _ = configDiff([][]byte{
		[]byte(`{"limiters":[` + tb + `,` + named + `],"objectives":[{"metric":"sojourn_p99_ms","op":"<=","value":150}]}`),
		[]byte(`{"limiters":[` + strings.Replace(named, `"burst":1`, `"burst":2`, 1) + `,` + tb + `],"objectives":[{"metric":"sojourn_p99_ms","op":">=","value":150}]}`),
	})
	if len(rows) != 2 {
		t.Fatalf("rows: %+v", rows)
	}
	if rows[0].Path != "limiters[small: token-bucket].burst" || rows[0].Values[0] != "1" || rows[0].Values[1] != "2" {
		t.Errorf("row 0: %+v", rows[0])
	}
	if rows[1].Path != "objectives[0].op" || rows[1].Values[0] != `"<="` || rows[1].Values[1] != `">="` {
		t.Errorf("row 1: %+v", rows[1])
	}
}

// TestCompareAnswers: two runs with objectives show their answers side by
// side, a row per setting matched across the runs, each run's verdict and
// worst values, and each run's best overall setting.
func TestCompareAnswers(t *testing.T) {
	l := newLab(t, true, 8)
	a := doneRun(t, l, twoLoadsDoc)
	b := doneRun(t, l, strings.Replace(strings.Replace(twoLoadsDoc, `"value":30`, `"value":10`, 1), `"rate_rps":[40,60,80]`, `"rate_rps":[80,60]`, 1))
	body := html.UnescapeString(l.get("/compare?runs=" + a + "," + b).Body.String())
	i := strings.Index(body, `id="compare-answers"`)
	if i < 0 {
		t.Fatal("no answers side by side")
	}
	sec := body[i : i+strings.Index(body[i:], "</section>")]
	for _, want := range []string{"<strong>token-bucket " + tbText(80, 2) + "</strong>", "nothing meets every objective; closest: token-bucket " + tbText(80, 2),
		"reject_pct <= 30: worst 19.8", "reject_pct <= 10: worst 19.8 (misses)", "margin 34.2% under load heavy"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the answers lack %q:\n%s", want, sec)
		}
	}
	// Three settings in all: 40 (first run only), 60 and 80 (both, matched
	// whatever their order).
	if n := strings.Count(sec, "<td>token-bucket <code>"); n != 3 {
		t.Errorf("%d setting rows, want 3", n)
	}
	row := sec[strings.Index(sec, "<td>token-bucket <code>"+tbText(40, 2)+"</code></td>"):]
	row = row[:strings.Index(row, "</tr>")]
	if strings.Count(row, "<strong>") != 1 {
		t.Errorf("the setting only the first run has: %s", row)
	}
}
