package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestDeleteRun: the run list links a finished run's confirmation page;
// a post without confirm asks again; a confirmed post deletes the run (its
// permalink then answers 404) and the list says so; a queued run is not
// deleted.
func TestDeleteRun(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	w := l.postJSON("/api/runs", []byte(answerDoc))
	if w.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	l.wait(id)
	if body := l.get("/runs/" + id).Body.String(); !strings.Contains(body, "The answer") {
		t.Fatal("the run page before deleting lacks its answer") // and is now in the page cache
	}
	if body := l.get("/runs").Body.String(); !strings.Contains(body, `href="/runs/`+id+`/delete"`) {
		t.Fatalf("the run list has no delete link:\n%s", body)
	}
	if w := l.get("/runs/" + id + "/delete"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `id="delete-confirm"`) {
		t.Fatalf("confirmation page %d:\n%s", w.Code, w.Body)
	}
	if w := l.postForm("/runs/"+id+"/delete", url.Values{}); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/runs/"+id+"/delete" {
		t.Fatalf("unconfirmed delete: %d %s", w.Code, w.Header().Get("Location"))
	}
	if w := l.get("/runs/" + id); w.Code != http.StatusOK {
		t.Fatalf("an unconfirmed delete deleted: %d", w.Code)
	}
	w = l.postForm("/runs/"+id+"/delete", url.Values{"confirm": {"yes"}})
	if w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), "/runs?deleted=") {
		t.Fatalf("delete: %d %s", w.Code, w.Header().Get("Location"))
	}
	if body := l.get(w.Header().Get("Location")).Body.String(); !strings.Contains(body, `id="runs-deleted"`) {
		t.Fatalf("the list does not say the run was deleted:\n%s", body)
	}
	if w := l.get("/runs/" + id); w.Code != http.StatusNotFound {
		t.Fatalf("deleted run's page: %d", w.Code)
	}

	q := newLab(t, false, 4) // the runner never starts: the run stays queued
	w = q.postJSON("/api/runs", []byte(answerDoc))
	id = strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	if w := q.postForm("/runs/"+id+"/delete", url.Values{"confirm": {"yes"}}); w.Code != http.StatusConflict {
		t.Fatalf("deleting a queued run: %d", w.Code)
	}
	if w := q.get("/runs/" + id); w.Code != http.StatusOK {
		t.Fatalf("the queued run is gone: %d", w.Code)
	}
}

// TestAPIDeleteRun: DELETE /api/runs/{id} deletes a finished run (204; its
// API address, page and files then 404, and its cached page goes), a
// queued run is a 409 problem and stays, a second delete a 404.
func TestAPIDeleteRun(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	id := l.submitDone(answerDoc)
	if w := l.get("/runs/" + id); w.Code != http.StatusOK {
		t.Fatalf("the run page before deleting: %d", w.Code) // now in the page cache
	}
	del := func(l *lab, id string) *httptest.ResponseRecorder {
		return l.do(httptest.NewRequest(http.MethodDelete, "/api/runs/"+id, nil))
	}
	if w := del(l, id); w.Code != http.StatusNoContent || w.Body.Len() != 0 {
		t.Fatalf("DELETE: %d %s", w.Code, w.Body)
	}
	for _, p := range []string{"/api/runs/" + id, "/runs/" + id, "/runs/" + id + "/files/manifest.json"} {
		if w := l.get(p); w.Code != http.StatusNotFound {
			t.Errorf("%s after DELETE: %d", p, w.Code)
		}
	}
	if w := del(l, id); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "there is no run") {
		t.Errorf("a second DELETE: %d %s", w.Code, w.Body)
	}

	q := newLab(t, false, 4) // the runner never starts: the run stays queued
	w := q.postJSON("/api/runs", []byte(answerDoc))
	id = strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	if w := del(q, id); w.Code != http.StatusConflict || w.Header().Get("Content-Type") != "application/problem+json" ||
		!strings.Contains(w.Body.String(), "cancel it first") {
		t.Fatalf("deleting a queued run: %d %s %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	if w := q.get("/api/runs/" + id); w.Code != http.StatusOK {
		t.Fatalf("the queued run is gone: %d", w.Code)
	}
}
