package web

import (
	"net/http"
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
