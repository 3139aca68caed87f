package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/web/form"
)

// TestFormErrorsAtOnce: a form with five bad fields comes back with all
// five errors, each beside its field and in the summary as a link to the
// field's input.
func TestFormErrorsAtOnce(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	v := formValuesOf(form.Default())
	bad := map[string]string{"limiters.0.burst": "1..x", "duration_ms": "-5", "server.workers": "0", "objectives": "nope <= 3", "parts.0.rate_rps": "abc"}
	for k, val := range bad {
		v.Set(k, val)
	}
	w := l.postForm("/runs", v)
	if w.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", w.Code)
	}
	body := w.Body.String()
	if n := strings.Count(body, `class="field-error"`); n != len(bad) {
		t.Errorf("%d field errors, want %d", n, len(bad))
	}
	for _, id := range []string{"f-limiters-0-burst", "f-duration_ms", "f-server-workers", "f-objectives", "f-parts-0-rate_rps"} {
		if !strings.Contains(body, `<a href="#`+id+`" data-focus="`+id+`">`) {
			t.Errorf("the summary does not link %s", id)
		}
		if !strings.Contains(body, `id="`+id+`"`) {
			t.Errorf("no input %s", id)
		}
	}
}

// TestFormRowTemplates: the form carries a part row and a limiter row in
// <template>s, numbered TemplateIndex, for app.js to add without a post;
// a post with rows numbered apart (0 and 1, then a copied row's number)
// reads them in order.
func TestFormRowTemplates(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	body := l.get("/").Body.String()
	for _, id := range []string{`<template id="part-template">`, `<template id="limiter-template">`} {
		i := strings.Index(body, id)
		if i < 0 {
			t.Fatalf("no %s", id)
		}
		tpl := body[i : i+strings.Index(body[i:], "</template>")]
		if !strings.Contains(tpl, "987654") || strings.Contains(tpl, "field-error") {
			t.Errorf("%s: not a clean row numbered 987654", id)
		}
	}
	v := formValuesOf(form.Default())
	v.Set("limiters.5.type", "leaky-bucket")
	v.Set("limiters.5.rate_rps", "100")
	v.Set("limiters.5.queue", "4")
	w := l.postForm("/runs", v)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("a post with a copied row: %d %s", w.Code, w.Body)
	}
}
