package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

func TestAPI(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	w := l.postJSON("/api/runs", []byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},"limiters":[{"type":"token-bucket","rate_rps":10,"burst":[0]}]}`))
	// A well-formed document that is no config that can run is 422
	// (Unprocessable Content, RFC 9110 15.5.21); 400 is left to bodies
	// that are not JSON text.
	var e APIProblem
	if w.Code != http.StatusUnprocessableEntity || json.Unmarshal(w.Body.Bytes(), &e) != nil || len(e.Errors) == 0 || e.Errors[0].Path != "limiters[0].burst" {
		t.Errorf("bad config: %d %s", w.Code, w.Body)
	}
	if w := l.postJSON("/api/runs", []byte(`{`)); w.Code != http.StatusBadRequest {
		t.Errorf("broken JSON: %d", w.Code)
	}
	big := bytes.Repeat([]byte(" "), MaxAPIBytes+1)
	if w := l.postJSON("/api/runs", big); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("too large: %d", w.Code)
	}
	w = l.postJSON("/api/runs", []byte(`{"version":1,"name":"api","workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},"limiters":[{"type":"token-bucket","rate_rps":10,"burst":[1,5]}]}`))
	if w.Code != http.StatusAccepted {
		t.Fatalf("good config: %d %s", w.Code, w.Body)
	}
	loc := w.Header().Get("Location")
	id, _ := strings.CutPrefix(loc, "/api/runs/")
	if !storage.ValidID(id) {
		t.Fatalf("Location %q", loc)
	}
	l.wait(id)
	var got APIRun
	if err := json.Unmarshal(l.get(loc).Body.Bytes(), &got); err != nil || got.Status != "done" || got.PointsDone != 2 || got.PointsTotal != 2 {
		t.Errorf("GET %s: %+v %v", loc, got, err)
	}
	var manifest map[string]any
	if err := json.Unmarshal(got.Manifest, &manifest); err != nil {
		t.Errorf("manifest: %v", err)
	}
	if w := l.get("/api/runs/aaaaaaaaaaaa"); w.Code != http.StatusNotFound {
		t.Errorf("unknown run: %d", w.Code)
	}
}

// TestAPITraceLimit: the API refuses a trace past the form's 10 MB limit
// with 413 and the part's path (it ran it, and the run could then not be
// edited as a new sweep).
func TestAPITraceLimit(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	csv := strings.Repeat("1,a\n", form.MaxTraceBytes/4+1)
	doc := `{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"poisson","rate_rps":5},{"type":"trace","csv":"` +
		strings.ReplaceAll(csv, "\n", `\n`) + `"}]},"limiters":[{"type":"none"}]}`
	w := l.postJSON("/api/runs", []byte(doc))
	if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), `"workload.parts[1].csv"`) {
		t.Errorf("trace past the limit: %d %s", w.Code, w.Body.String())
	}
	if _, total, err := l.store.List(context.Background(), 10, 0); err != nil || total != 0 {
		t.Errorf("stored %d runs (%v)", total, err)
	}
}

// TestAPIAnswer: GET /api/runs/{id} carries the answer to the objectives
// as data: the settings over their scenarios, the recommended one per
// limiter and overall, its binding objective, scenario and margin.
func TestAPIAnswer(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	w := l.postJSON("/api/runs", []byte(`{"version":1,"name":"answer","seed":1,
		"workload":{"duration_ms":5000,"parts":[{"type":"poisson","rate_rps":90}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":200},
		"limiters":[{"type":"admission","limit":[1,4,10,20]}],
		"loads":[{"name":"poisson"},{"name":"bursty","parts":[{"type":"demand-curve","segments":[{"rate_rps":50,"duration_ms":200},{"rate_rps":300,"duration_ms":100}]}]}],
		"objectives":[{"metric":"sojourn_p99_ms","op":"<=","value":150},{"metric":"reject_pct","op":"<=","value":45}]}`))
	if w.Code != http.StatusAccepted {
		t.Fatalf("post: %d %s", w.Code, w.Body)
	}
	loc := w.Header().Get("Location")
	id, _ := strings.CutPrefix(loc, "/api/runs/")
	l.wait(id)
	var got APIRun
	if err := json.Unmarshal(l.get(loc).Body.Bytes(), &got); err != nil || got.Status != "done" {
		t.Fatalf("GET %s: %+v %v", loc, got, err)
	}
	a := got.Answer
	if a == nil {
		t.Fatal("no answer in the run's JSON")
	}
	if len(a.Settings) != 4 || len(a.Scenarios) != 2 || a.Scenarios[1] != "load bursty" || a.GoodputTolerancePct != 1 {
		t.Fatalf("answer %+v", a)
	}
	if len(a.Recommended) != 1 || a.Recommended[0].Setting == nil || a.BestOverall == nil || *a.BestOverall != *a.Recommended[0].Setting {
		t.Fatalf("recommended %+v best %v", a.Recommended, a.BestOverall)
	}
	s := a.Settings[*a.BestOverall]
	if !s.MeetsAll || !s.Recommended || !s.BestOverall || s.Margin == nil || *s.Margin <= 0 || s.Binding == "" || s.BindingScenario == nil {
		t.Fatalf("best setting %+v", s)
	}
	for _, o := range s.Outcomes {
		if !o.Pass || o.Worst == nil {
			t.Errorf("outcome %+v", o)
		}
	}
	if len(s.Points) != 2 || s.Points[0] == nil || s.Points[1] == nil || a.Recommended[0].Point == nil || *a.Recommended[0].Point != *s.Points[*s.BindingScenario] {
		t.Errorf("points %v, the choice's point %v", s.Points, a.Recommended[0].Point)
	}
	// A run without objectives has no answer.
	w = l.postJSON("/api/runs", []byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},"limiters":[{"type":"none"}]}`))
	loc = w.Header().Get("Location")
	id, _ = strings.CutPrefix(loc, "/api/runs/")
	l.wait(id)
	var plain map[string]json.RawMessage
	if err := json.Unmarshal(l.get(loc).Body.Bytes(), &plain); err != nil {
		t.Fatal(err)
	}
	if _, ok := plain["answer"]; ok {
		t.Errorf("an answer without objectives: %s", plain["answer"])
	}
}

// TestAPIAnswerClosest: with nothing feasible the closest setting is
// flagged closest, never recommended nor best overall; with a feasible
// one, best_overall names it and closest is null.
func TestAPIAnswerClosest(t *testing.T) {
	objs, errs := experiments.ParseObjectives("reject_pct <= 20")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, tc := range []struct {
		name     string
		feasible int
	}{{"nothing feasible", 0}, {"one feasible", 1}} {
		s := decide.Setting{Limiter: "tb", Type: "token-bucket", Points: []int{0}, Complete: true, MeetsAll: tc.feasible > 0,
			Binding: -1, BindingScenario: -1, Missed: 1 - tc.feasible, Violation: 0.5 * float64(1-tc.feasible),
			Recommended: tc.feasible > 0, BestOverall: tc.feasible > 0, Closest: tc.feasible == 0, ClosestOverall: tc.feasible == 0,
			Outcomes: []decide.Outcome{{Check: decide.Check{Objective: objs[0]}, Scenario: 0}}}
		a := &decide.Answer{Objectives: objs, Scenarios: []decide.Scenario{{}}, Settings: []decide.Setting{s},
			Choices: []decide.Choice{{Limiter: "tb", Type: "token-bucket", Settings: 1, Feasible: tc.feasible, Setting: 0, Point: 0}},
			Best:    0, Feasible: tc.feasible}
		got := apiAnswer(a)
		closest := tc.feasible == 0
		if (got.BestOverall != nil) == closest || (got.Closest != nil) != closest || got.Recommended[0].Closest != closest {
			t.Errorf("%s: best_overall %v closest %v choice %+v", tc.name, got.BestOverall, got.Closest, got.Recommended[0])
		}
		if as := got.Settings[0]; as.Recommended == closest || as.BestOverall == closest || as.Closest != closest || as.ClosestOverall != closest {
			t.Errorf("%s: setting %+v", tc.name, as)
		}
		data, err := json.Marshal(got.Settings[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{fmt.Sprintf(`"missed":%d,`, s.Missed), fmt.Sprintf(`"violation":%g,`, s.Violation), `"unmeasured":0,`} {
			if !strings.Contains(string(data), want) {
				t.Errorf("%s: setting JSON lacks %s: %s", tc.name, want, data)
			}
		}
	}
}
