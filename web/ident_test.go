package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/storage"
)

func TestIdentBreaksAtSeparatorsOnly(t *testing.T) {
	for in, want := range map[string]string{
		"token-bucket rate_rps=60": "token-<wbr>bucket rate_<wbr>rps=<wbr>60",
		"a<b>":                     "a&lt;b&gt;",
		"burst=2.5":                "burst=<wbr>2.5",
		"":                         "",
	} {
		if got := identHTML(in); got != want {
			t.Errorf("identHTML(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRerunIsNamedAfterItsOriginal: a re-run is "re-run of NAME", once.
func TestRerunIsNamedAfterItsOriginal(t *testing.T) {
	for name, want := range map[string]string{"sweep": "re-run of sweep", "re-run of sweep": "re-run of sweep", "": "re-run of (unnamed) r1"} {
		if got := rerunName(storage.Run{ID: "r1", Name: name}); got != want {
			t.Errorf("rerunName(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestAPIRunsListsWithTheListsFilters: GET /api/runs answers the run list
// as JSON with its filters; a bad direction is a 400 naming it.
func TestAPIRunsListsWithTheListsFilters(t *testing.T) {
	l := newLab(t, true, 4)
	a := doneRun(t, l, `{"version":1,"name":"alpha","workload":{"duration_ms":500,"parts":[{"type":"constant","rate_rps":20}]},"limiters":[{"type":"token-bucket","rate_rps":10,"burst":2}]}`)
	doneRun(t, l, `{"version":1,"name":"beta","workload":{"duration_ms":500,"parts":[{"type":"constant","rate_rps":20}]},"limiters":[{"type":"none"}]}`)
	w := l.get("/api/runs?q=alph&sort=name&dir=asc")
	var got APIRuns
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
		t.Fatalf("%d %s %v", w.Code, w.Body, err)
	}
	if got.Total != 1 || len(got.Runs) != 1 || got.Runs[0].ID != a || got.Runs[0].Name != "alpha" {
		t.Fatalf("GET /api/runs?q=alph: %+v", got)
	}
	if w := l.get("/api/runs?dir=up"); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"path": "dir"`) {
		t.Fatalf("a bad dir: %d %s", w.Code, w.Body)
	}
	if w := l.get("/api/runs"); !strings.Contains(w.Body.String(), `"total": 2`) {
		t.Fatalf("every run: %s", w.Body)
	}
}

// TestFirstClickSortsBestFirst: goodput (higher is better) sorts
// descending on its first click, a delay ascending; a second click turns
// either around.
func TestFirstClickSortsBestFirst(t *testing.T) {
	d := &RunPageData{}
	for key, want := range map[string]string{"goodput_rps": "desc", "jain_index": "desc", "worst_goodput_rps": "desc", "margin": "desc",
		"sojourn_p99_ms": "asc", "reject_pct": "asc", "limiter": "asc", "point": "asc"} {
		if got := d.firstDir(key); got != want {
			t.Errorf("firstDir(%s) = %s, want %s", key, got, want)
		}
	}
}
