package web

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/limiter/limitertest"
	"github.com/ratelab/ratelab/web/form"
)

// A gate type added to the registry alone (limitertest registers one in
// this test binary) is offered by the form, its parameter and option
// rendered with their label and unit; a posted form with it runs; a bad
// value comes back beside its input with the range from its row; the API
// takes it and lists it. No file of web/ names it.
func TestRegisteredGateInFormAndAPI(t *testing.T) {
	limitertest.Register(t)
	l := newLab(t, true, 4)

	page := l.get("/").Body.String()
	if !strings.Contains(page, `<option value="test-spacer"`) {
		t.Fatal("the form offers no test-spacer limiter")
	}
	gap := inputBlock(t, page, "limiters.0.gap_ms")
	if !strings.Contains(gap, `data-for="test-spacer"`) || !strings.Contains(gap, ">Gap") || !strings.Contains(gap, `<span class="unit">ms</span>`) {
		t.Errorf("gap_ms input: %s", gap)
	}
	if edge := inputBlock(t, page, "limiters.0.edge"); !strings.Contains(edge, `<option value="open"`) {
		t.Errorf("edge option: %s", edge)
	}

	v := formValuesOf(form.Default())
	v.Set("limiters.0.type", "test-spacer")
	v.Set("limiters.0.gap_ms", "5, 0.1")
	w := l.postForm("/runs", v)
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(inputBlock(t, w.Body.String(), "limiters.0.gap_ms"), "value 2 (0.1): must be between 0.5 and 60000 ms") {
		t.Fatalf("gap_ms 0.1: %d\n%s", w.Code, inputBlock(t, w.Body.String(), "limiters.0.gap_ms"))
	}
	v.Set("limiters.0.gap_ms", "5, 20")
	v.Set("limiters.0.edge", "open")
	id := runIDFrom(t, l.postForm("/runs", v))
	if run := l.wait(id); run.Status != "done" || run.PointsTotal != 2 {
		t.Fatalf("run %+v", run)
	}
	// results.csv has a gap_ms column (wherever the registry puts it)
	// with the second point's value.
	results := l.get("/runs/" + id + "/files/results.csv").Body.String()
	rows := strings.Split(strings.TrimSpace(results), "\n")
	col := slices.Index(strings.Split(rows[0], ","), "gap_ms")
	if len(rows) != 3 || col < 0 || !strings.HasPrefix(rows[2], "1,test-spacer,test-spacer,") || strings.Split(rows[2], ",")[col] != "20.0" {
		t.Errorf("results.csv:\n%s", results)
	}
	if w := l.get("/runs/" + id); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "gap_ms = 5, 20 ms") {
		t.Errorf("run page %d has no summary of the gate's values", w.Code)
	}

	w = l.postJSON("/api/runs", []byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},"limiters":[{"type":"test-spacer","gap_ms":[10,40]}]}`))
	if w.Code != http.StatusAccepted {
		t.Fatalf("API: %d %s", w.Code, w.Body)
	}
	var types APITypes
	if err := json.Unmarshal(l.get("/api/types").Body.Bytes(), &types); err != nil {
		t.Fatal(err)
	}
	last := types.Limiters[len(types.Limiters)-1]
	if last.Type != "test-spacer" || len(last.Params) != 1 || last.Params[0].Name != "gap_ms" || last.Params[0].Min != 0.5 || last.Params[0].Admits != "smaller" || last.Options[0].Choices[1] != "open" {
		t.Errorf("/api/types lists %+v last", last)
	}
}

// GET /api/types lists every registered limiter and part type with its
// parameters or fields, and each limiter type's Retry-After.
func TestAPITypes(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	w := l.get("/api/types")
	var types APITypes
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &types) != nil {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	byType := map[string]APILimiterType{}
	for _, k := range types.Limiters {
		byType[k.Type] = k
	}
	if !byType["chain"].Stages || byType["admission"].Stage {
		t.Errorf("chain %+v, admission %+v", byType["chain"], byType["admission"])
	}
	// every registered type, in registry order, with its row's parameters
	// and Retry-After (which gates give one: limiter's
	// TestRowsSayWhichGatesGiveRetryAfter)
	kinds := limiter.Kinds()
	if len(types.Limiters) != len(kinds) {
		t.Fatalf("/api/types lists %d limiter types, the registry %d", len(types.Limiters), len(kinds))
	}
	for i, k := range kinds {
		got := types.Limiters[i]
		if got.Type != string(k.Type) || got.RetryAfter != k.RetryAfter {
			t.Errorf("limiter type %d: %s with retry_after %q, want %s with %q", i, got.Type, got.RetryAfter, k.Type, k.RetryAfter)
		}
		var want []APIParam
		for _, q := range k.Params {
			want = append(want, APIParam{Name: q.Name, Unit: q.Unit, Integer: q.Integer, Min: q.Min, Max: q.Max, Default: q.Default, Admits: string(q.Admits), Doc: q.Doc})
		}
		if len(got.Params) != len(want) || (len(want) > 0 && !slices.Equal(got.Params, want)) {
			t.Errorf("%s: parameters %+v, its row %+v", k.Type, got.Params, want)
		}
	}
	if len(types.Parts) == 0 || types.Parts[0].Type != "demand-curve" || !slices.ContainsFunc(types.Parts[0].Fields, func(f APIPartField) bool { return f.Name == "segments" && f.Line == "rate_rps,duration_ms" }) {
		t.Errorf("parts: %+v", types.Parts)
	}
}
