package web

import (
	"net/http"
	"strings"
	"testing"
)

// answerDoc: 50 req/s, constant. A token bucket of burst 2 at 20, 40 and 60
// req/s admits 20, 40 and 50 req/s (rejects 60%, 20%, 0%); no limiter
// admits all 50. With reject_pct <= 30 and admitted_rps <= 45 only the
// bucket at 40 meets both (point 1), admitted_rps binding ((45-40)/45 =
// 11% to spare against reject's (30-20)/30 = 33%); "none" (point 3) comes
// closest for itself, missing admitted_rps by (50-45)/45 = 11.1%.
const answerDoc = `{"version":1,"seed":1,
 "workload":{"duration_ms":10000,"parts":[{"type":"constant","rate_rps":50}]},
 "server":{"workers":1,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[20,40,60],"burst":2},{"type":"none"}],
 "objectives":[{"metric":"reject_pct","op":"<=","value":30},{"metric":"admitted_rps","op":"<=","value":45}]}`

func TestAnswerPanel(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	w := l.postJSON("/api/runs", []byte(answerDoc))
	if w.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/api/runs/")
	l.wait(id)
	body := l.get("/runs/" + id).Body.String()
	i := strings.Index(body, `id="answer"`)
	if i < 0 {
		t.Fatalf("no answer section:\n%s", body)
	}
	if j := strings.Index(body, `id="results"`); j < i {
		t.Fatalf("the answer is not above the results table")
	}
	answer := body[i : strings.Index(body[i:], "</section>")+i]
	for _, want := range []string{
		`data-point="1"`, "recommended:", "rate_rps=40 burst=2", "admitted_rps &lt;= 45 binds",
		"1 of 3 settings meet every objective in every scenario",
		`data-point="3"`, "closest (misses):", "admitted_rps &lt;= 45: measured 50.0, 11.1% past the target",
		"bound ", "ms, measured ",
	} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, answer)
		}
	}
	if !strings.Contains(body, `id="chart-pareto"`) || !strings.Contains(body, "meets every objective") {
		t.Errorf("no Pareto chart with the feasible points")
	}
	csv := l.get("/runs/" + id + "/files/results.csv").Body.String()
	if !strings.Contains(strings.SplitN(csv, "\n", 2)[0], ",pass_reject_pct_le_30,pass_admitted_rps_le_45,meets_all") {
		t.Errorf("results.csv header: %s", strings.SplitN(csv, "\n", 2)[0])
	}
	// The web lab stores settings.csv beside results.csv, as lab run writes it.
	settings := l.get("/runs/" + id + "/files/settings.csv")
	if settings.Code != http.StatusOK || !strings.Contains(settings.Body.String(), "\ntoken-bucket,token-bucket,40.0,2,,,,19.8,true,40.1,true,true,40.1,0.1089,admitted_rps <= 45,,true,true\n") {
		t.Errorf("settings.csv %d:\n%s", settings.Code, settings.Body)
	}
}
