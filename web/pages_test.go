package web

import (
	"encoding/json"
	"net/http"
	"strconv"
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

// TestStartAfterTheWindowIsRefused: a part starting after the arrival
// window is refused at its start_ms, not run with 0 arrivals.
func TestStartAfterTheWindowIsRefused(t *testing.T) {
	l := newLab(t, false, 4)
	w := l.postJSON("/api/runs", []byte(`{"version":1,"workload":{"duration_ms":10000,"parts":[{"type":"poisson","rate_rps":90,"start_ms":20000}]},"limiters":[{"type":"none"}]}`))
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `"path": "workload.parts[0].start_ms"`) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
}

// TestTooManyPointsNamesTheLists: a sweep past the point limit is refused
// at each list that multiplies it, the message naming them.
func TestTooManyPointsNamesTheLists(t *testing.T) {
	l := newLab(t, false, 4)
	list := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = strconv.Itoa(i + 1)
		}
		return "[" + strings.Join(v, ",") + "]"
	}
	w := l.postJSON("/api/runs", []byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":10}]},
		"limiters":[{"type":"token-bucket","rate_rps":`+list(1000)+`,"burst":`+list(20)+`}]}`))
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `"path": "limiters[0].rate_rps"`) ||
		!strings.Contains(w.Body.String(), `"path": "limiters[0].burst"`) || !strings.Contains(w.Body.String(), "rate_rps 1000 × burst 20 = 20000 points") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
}
