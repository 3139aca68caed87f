package web

import (
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/form"
)

// TestObjectivePicker: the form offers every metric an objective can name
// by its name on the page with its unit; "+ Add objective" without
// JavaScript appends the picked line to the objectives and keeps every
// other value; a metric typed wrong comes back beside the objectives box
// with the user's text kept.
func TestObjectivePicker(t *testing.T) {
	l := newLab(t, true, 4)
	home := l.get("/").Body.String()
	pick := home[strings.Index(home, `id="objective-pick"`):]
	pick = pick[:strings.Index(pick, "</div>")]
	for _, k := range experiments.ObjectiveMetrics() {
		if !strings.Contains(pick, `<option value="`+k+`"`) {
			t.Errorf("the picker does not offer %s", k)
		}
	}
	for _, want := range []string{">goodput_rps: goodput (req/s)</option>", ">sojourn_max_ms (ms)</option>"} {
		if !strings.Contains(pick, want) {
			t.Errorf("the picker lacks %s", want)
		}
	}
	// Parameters are settings, not objectives.
	for _, param := range []string{"burst", "rate_rps", "limit_refresh_period_ms"} {
		if strings.Contains(pick, `<option value="`+param+`"`) {
			t.Errorf("the picker offers the parameter %s", param)
		}
	}

	v := formValuesOf(form.Default())
	v.Set("name", "kept name")
	v.Set("objectives", "reject_pct <= 30")
	v.Set(form.PickMetricKey, "goodput_rps")
	v.Set(form.PickOpKey, ">=")
	v.Set(form.PickValueKey, "150")
	v.Set("action", "add-objective")
	w := l.postForm("/runs", v)
	if w.Code != http.StatusOK {
		t.Fatalf("add objective: %d", w.Code)
	}
	body := html.UnescapeString(w.Body.String())
	if !strings.Contains(body, "reject_pct <= 30\ngoodput_rps >= 150\n</textarea>") || !strings.Contains(body, `value="kept name"`) {
		t.Errorf("the objective was not added, or the form lost a value")
	}
	if strings.Contains(body, `<option value="goodput_rps" selected`) {
		t.Errorf("the picker keeps the added metric")
	}

	v.Set("objectives", "goodput_rp >= 150")
	v.Set("action", "run")
	w = l.postForm("/runs", v)
	if w.Code != http.StatusUnprocessableEntity {
		t.Fatalf("a wrong metric: %d", w.Code)
	}
	body = html.UnescapeString(w.Body.String())
	box := body[strings.Index(body, `id="f-objectives"`):]
	box = box[:strings.Index(box, "</div>")]
	if !strings.Contains(box, "goodput_rp >= 150</textarea>") || !strings.Contains(box, `unknown metric "goodput_rp": did you mean goodput_rps?`) {
		t.Errorf("the error is not beside the objectives with the text kept:\n%s", box)
	}
}
