package web

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

// TestEvents reads the event stream of a run over a real connection.
func TestEvents(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	ts := httptest.NewServer(l.srv)
	defer ts.Close()
	id := runIDFrom(t, l.postForm("/runs", formValuesOf(form.Default())))
	resp, err := http.Get(ts.URL + "/runs/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	var last struct {
		Status      string
		Done, Total int
	}
	sc := bufio.NewScanner(resp.Body)
	events := 0
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if err := json.Unmarshal([]byte(data), &last); err != nil {
				t.Fatal(err)
			}
			events++
		}
	}
	if events == 0 || last.Status != storage.StatusDone || last.Done != last.Total || last.Total != 7 {
		t.Errorf("%d events, last %+v", events, last)
	}
	if w := l.get("/runs/aaaaaaaaaaaa/events"); w.Code != http.StatusNotFound {
		t.Errorf("events of an unknown run: %d", w.Code)
	}
}
