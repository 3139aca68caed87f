package web

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/internal/golden"
)

// answerDoc: 50 req/s, constant. A token bucket of burst 2 at 20, 40 and 60
// req/s admits 20, 40 and 50 req/s (rejects 60%, 20%, 0%); no limiter
// admits all 50. With reject_pct <= 30 and admitted_rps <= 45 only the
// bucket at 40 meets both (point 1), admitted_rps binding ((45-40)/45 =
// 11% to spare against reject's (30-20)/30 = 33%); "none" (point 3) comes
// closest for itself, missing admitted_rps by (50-45)/45 = 11.1%.
// tbText is how the lab writes a token bucket's setting of rate and
// burst, its other parameters at their defaults: from the registry's rows.
func tbText(rate, burst float64) string {
	p := limiter.Params{limiter.ParamRate: rate, limiter.ParamBurst: burst}
	return limiter.FormatParams(limiter.TypeTokenBucket, limiter.WithDefaults(limiter.TypeTokenBucket, p))
}

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
		`id="answer-best" data-point="1"`, "Best overall:", "within 1% of the best goodput",
		`data-point="1"`, "recommended:", tbText(40, 2), "admitted_rps &lt;= 45 binds, 10.9% to spare (worst 40.1)",
		"1 of 3 settings meet every objective in every scenario",
		`data-point="3"`, "closest (misses admitted_rps &lt;= 45):", "admitted_rps &lt;= 45: worst 50.0, 11.1% past the target",
		`href="/runs/` + id + `?point=3#deploy"`,
		"bound ", "ms; measured: ",
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
	if settings.Code != http.StatusOK {
		t.Fatalf("settings.csv %d:\n%s", settings.Code, settings.Body)
	}
	golden.Check(t, "testdata/answer-settings.csv", settings.Body.Bytes())
}

// twoLoadsDoc: the bucket at 40 req/s meets reject_pct <= 30 under the
// light load alone, at 60 neither, at 80 under both (it rejects about 20%
// of the heavy load): the recommendation must hold under both loads.
const twoLoadsDoc = `{"version":1,"seed":1,
 "workload":{"duration_ms":4000,"parts":[{"type":"constant","rate_rps":50}]},
 "server":{"workers":1,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[40,60,80],"burst":2}],
 "loads":[{"name":"light"},{"name":"heavy","parts":[{"type":"constant","rate_rps":100}]}],
 "objectives":[{"metric":"reject_pct","op":"<=","value":30}]}`

// TestAnswerHoldsUnderEveryLoad: the panel recommends the setting that
// meets the objective under both loads, names the load that binds it,
// and the page opens on that setting's point there: Deploy's menu and the
// time-series charts show it; another setting's link selects it for both.
func TestAnswerHoldsUnderEveryLoad(t *testing.T) {
	l := newLab(t, true, 4)
	id := doneRun(t, l, twoLoadsDoc)
	body := l.get("/runs/" + id).Body.String()
	i := strings.Index(body, `id="answer"`)
	if i < 0 {
		t.Fatal("no answer")
	}
	answer := body[i : strings.Index(body[i:], "</section>")+i]
	// Points: rate 40 light, 40 heavy, 60 light, 60 heavy, 80 light, 80 heavy.
	for _, want := range []string{`id="answer-best" data-point="5"`, "<code>" + tbText(80, 2) + "</code>",
		"reject_pct &lt;= 30 binds under load heavy, 34.2% to spare (worst 19.8)", "2 scenarios (what you don&#39;t choose: 2 loads)",
		"1 of 3 settings meet every objective in every scenario"} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, answer)
		}
	}
	if !strings.Contains(body, `<option value="5" selected>5: token-bucket `+tbText(80, 2)+` (heavy) · best overall</option>`) {
		t.Errorf("Deploy does not open on the recommended setting's point 5")
	}
	if !strings.Contains(body, `<span class="muted" title="Deploy and Over time show it">5 shown</span>`) {
		t.Errorf("the results table does not show point 5 as the one over time")
	}
	// The results table flags the recommended setting's rows, under
	// both loads.
	results := body[strings.Index(body, `id="results-table"`):]
	flagged := regexp.MustCompile(`<tr class="[^"]*recommended[^"]*" data-point="(\d+)"`).FindAllStringSubmatch(results, -1)
	if len(flagged) != 2 || flagged[0][1] != "4" || flagged[1][1] != "5" || strings.Count(results, `<span class="badge rec" title="a point of the best overall setting">best</span>`) != 2 {
		t.Errorf("flagged rows %v, want 4 and 5 marked best", flagged)
	}
	if !strings.Contains(body, `<p class="deploy-verdict" id="deploy-verdict" role="status">This is the best overall setting: it meets every objective in every scenario (shown under load heavy).</p>`) {
		t.Errorf("Deploy does not say it shows the best overall setting")
	}
	// Selecting another point moves both; Deploy warns of what it misses.
	other := l.get("/runs/" + id + "?point=2").Body.String()
	if !strings.Contains(other, `role="alert">This setting misses reject_pct &lt;= 30 (worst 39.`) || !strings.Contains(other, `under load heavy); the recommended setting is point 5.</p>`) {
		t.Errorf("Deploy does not warn that point 2's setting misses the objective")
	}
	if !strings.Contains(other, `<option value="2" selected>`) || !strings.Contains(other, `href="/runs/`+id+`?point=5#deploy" class="select-point"`) {
		t.Errorf("?point=2 does not select point 2, or the answer does not link back to 5")
	}
}

// TestAnswerNothingFeasible: with no setting meeting both objectives the
// panel leads with the closest setting, counts the settings meeting each
// objective alone and names the pair that never holds together.
func TestAnswerNothingFeasible(t *testing.T) {
	l := newLab(t, true, 4)
	doc := strings.Replace(answerDoc, `"objectives":[{"metric":"reject_pct","op":"<=","value":30},{"metric":"admitted_rps","op":"<=","value":45}]`,
		`"objectives":[{"metric":"reject_pct","op":"<=","value":10},{"metric":"admitted_rps","op":"<=","value":30}]`, 1)
	id := doneRun(t, l, doc)
	body := l.get("/runs/" + id).Body.String()
	i := strings.Index(body, `id="answer"`)
	if i < 0 {
		t.Fatal("no answer")
	}
	answer := body[i : strings.Index(body[i:], "</section>")+i]
	for _, want := range []string{"Nothing meets every objective; closest overall (misses admitted_rps &lt;= 30):", "0 of 4 settings meet every objective in every scenario",
		"reject_pct &lt;= 10: met alone by 2 of 4 settings", "admitted_rps &lt;= 30: met alone by 1 of 4 settings",
		"reject_pct &lt;= 10 and admitted_rps &lt;= 30 never hold together; each alone does", "past the target"} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, answer)
		}
	}
	// Neither the Deploy menu nor the settings table calls a setting that
	// misses an objective recommended: they say closest and what it misses.
	deploy := body[strings.Index(body, `id="deploy-point"`):]
	deploy = deploy[:strings.Index(deploy, "</select>")]
	settings := body[strings.Index(body, `id="settings-table"`):]
	settings = settings[strings.Index(settings, "<tbody>"):strings.Index(settings, "</table>")]
	for name, part := range map[string]string{"Deploy menu": deploy, "settings table": settings} {
		if strings.Contains(part, "recommended") || strings.Contains(part, "best overall") {
			t.Errorf("the %s calls a failing setting recommended:\n%s", name, part)
		}
		if !strings.Contains(part, "closest (misses ") && !strings.Contains(part, "closest overall (misses ") {
			t.Errorf("the %s marks no closest setting with what it misses:\n%s", name, part)
		}
	}
}

// TestAnswerReplicated: on a replicated run the binding objective's worst
// is the pessimistic end of its interval, said so, and the guarantee is
// labelled as the worst measured over the replications (it was
// replication 1's measurement, unlabelled).
func TestAnswerReplicated(t *testing.T) {
	l := newLab(t, true, 4)
	id := doneRun(t, l, `{"version":1,"seed":1,"replications":3,
	 "workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":50}]},
	 "server":{"workers":1,"service_ms":10},
	 "limiters":[{"type":"token-bucket","rate_rps":[40,80],"burst":2}],
	 "objectives":[{"metric":"reject_pct","op":"<=","value":40}]}`)
	body := l.get("/runs/" + id).Body.String()
	i := strings.Index(body, `id="answer"`)
	if i < 0 {
		t.Fatal("no answer")
	}
	answer := body[i : strings.Index(body[i:], "</section>")+i]
	for _, want := range []string{"(end of the 95% interval; mean ", "worst measured over 3 replications: "} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, answer)
		}
	}
}

// TestAnswerTolerance: the panel says the config's goodput tolerance.
func TestAnswerTolerance(t *testing.T) {
	l := newLab(t, true, 4)
	id := doneRun(t, l, strings.Replace(answerDoc, `"objectives":`, `"decision":{"goodput_tolerance_pct":5},"objectives":`, 1))
	if body := l.get("/runs/" + id).Body.String(); !strings.Contains(body, "within 5% of the best goodput") {
		t.Error("the panel does not say the tolerance of 5%")
	}
}
