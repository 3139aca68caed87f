package web

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/storage"
)

// exportSweep: points 0-1 token-bucket (burst 10, 20), 2 the nginx gate
// (exact in nginx), 3 a sliding-window log (no format deploys it).
const exportSweep = `{"version": 1, "name": "deploy me", "seed": 1,
	"workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 50}]},
	"server": {"workers": 1, "service_ms": 1},
	"limiters": [
		{"type": "token-bucket", "rate_rps": 100, "burst": [10, 20]},
		{"type": "nginx-limit-req", "rate_rps": 5, "burst": 4, "delay": 2},
		{"type": "sliding-window-log", "limit": 10}]}`

func doneRun(t *testing.T, l *lab, doc string) string {
	t.Helper()
	w := l.postJSON("/api/runs", []byte(doc))
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST /api/runs: %d %s", w.Code, w.Body.String())
	}
	var run APIRun
	if err := json.Unmarshal(w.Body.Bytes(), &run); err != nil {
		t.Fatal(err)
	}
	if r := l.wait(run.ID); r.Status != storage.StatusDone {
		t.Fatalf("run %s: %s %s", run.ID, r.Status, r.Error)
	}
	return run.ID
}

// TestDeploySection: the run page shows the chosen point in a format, its
// notes and the rerun button; the download and the API give the engine's
// text; the rerun button starts a run of the config plus the gate.
func TestDeploySection(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	id := doneRun(t, l, exportSweep)
	cfg, err := document.DecodeConfig([]byte(exportSweep))
	if err != nil {
		t.Fatal(err)
	}
	want := func(point int, format string) *deploy.Export {
		p, err := deploy.PointOf(cfg, point)
		if err != nil {
			t.Fatal(err)
		}
		e, err := deploy.Render(format, p)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}

	// The page: point 1 in nginx, the first format that deploys it.
	body := l.get("/runs/" + id + "?point=1").Body.String()
	nginx := want(1, "nginx")
	for _, s := range []string{`id="deploy"`, "Deploy this setting", `href="#deploy"`, html.EscapeString(nginx.Text),
		html.EscapeString(nginx.Notes[0]), `id="deploy-rerun"`, "Rerun with nginx-limit-req",
		`href="/runs/` + id + `/export?point=1&amp;format=nginx"`, `download="ratelab-limit-req-` + id + `-point1.conf"`,
		`<option value="1" selected>1: token-bucket ` + limiter.FormatParams(limiter.TypeTokenBucket, cfg.Points()[1].Params) + `</option>`, `data-copy="deploy-text"`} {
		if !strings.Contains(body, s) {
			t.Errorf("run page lacks %q", s)
		}
	}
	// Another format, chosen in the menu.
	body = l.get("/runs/" + id + "?point=1&format=envoy").Body.String()
	if !strings.Contains(body, "max_tokens: 20") || !strings.Contains(body, "Rerun with envoy-local-ratelimit") {
		t.Error("?format=envoy does not show the Envoy export")
	}
	// The nginx gate in nginx is exact: no rerun.
	body = l.get("/runs/" + id + "?point=2&format=nginx").Body.String()
	if !strings.Contains(body, `id="deploy-exact"`) || strings.Contains(body, `id="deploy-rerun"`) {
		t.Error("the nginx gate's point in nginx is not shown exact")
	}
	// A point no format deploys says why.
	body = l.get("/runs/" + id + "?point=3").Body.String()
	if !strings.Contains(body, `id="deploy-none"`) || !strings.Contains(body, "No format deploys this point") {
		t.Error("a sliding-window point does not say that no format deploys it")
	}

	// The download.
	w := l.get("/runs/" + id + "/export?point=1&format=nginx")
	if w.Code != http.StatusOK || w.Body.String() != nginx.Text {
		t.Errorf("download: %d %q", w.Code, w.Body.String())
	}
	if cd := w.Header().Get("Content-Disposition"); !strings.Contains(cd, "ratelab-limit-req-"+id+"-point1.conf") {
		t.Errorf("download: Content-Disposition %q", cd)
	}
	if w := l.get("/runs/" + id + "/export?point=3&format=nginx"); w.Code != http.StatusUnprocessableEntity {
		t.Errorf("download of a point nginx cannot deploy: %d", w.Code)
	}

	// The API.
	var got APIExport
	w = l.get("/api/runs/" + id + "/export?point=1&format=traefik")
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
		t.Fatalf("GET export: %d %v %s", w.Code, err, w.Body.String())
	}
	traefik := want(1, "traefik")
	if got.Format != "traefik" || got.Text != traefik.Text || len(got.Notes) != len(traefik.Notes) || got.Point != 1 ||
		got.Type != "token-bucket" || got.Params["burst"] != 20 || got.Rerun == nil || got.Rerun.Type != "x-time-rate" || got.Exact {
		t.Errorf("GET export = %+v", got)
	}
	if mw := got.Rerun.ValuesOf("max_wait_ms"); len(mw) != 1 || mw[0] != 5 {
		t.Errorf("rerun max_wait_ms %v", mw)
	}
	for path, want := range map[string]struct {
		status int
		field  string // the error's path
	}{
		"/api/runs/" + id + "/export?point=2&format=nginx":       {http.StatusOK, ""},
		"/api/runs/" + id + "/export?point=9&format=nginx":       {http.StatusBadRequest, "point"},
		"/api/runs/" + id + "/export?point=x&format=nginx":       {http.StatusBadRequest, "point"},
		"/api/runs/" + id + "/export?format=nginx":               {http.StatusBadRequest, "point"},
		"/api/runs/" + id + "/export?point=1&format=yaml":        {http.StatusBadRequest, "format"},
		"/api/runs/" + id + "/export?point=1":                    {http.StatusBadRequest, "format"},
		"/api/runs/" + id + "/export?point=3&format=nginx":       {http.StatusUnprocessableEntity, "format"},
		"/api/runs/zzzzzzzzzzzzzzzz/export?point=1&format=nginx": {http.StatusNotFound, ""},
	} {
		w := l.get(path)
		if w.Code != want.status {
			t.Errorf("GET %s: %d, want %d: %s", path, w.Code, want.status, w.Body.String())
		}
		if want.status == http.StatusOK {
			continue
		}
		var e APIProblem
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || len(e.Errors) != 1 || e.Errors[0].Path != want.field || e.Errors[0].Msg == "" {
			t.Errorf("GET %s: errors %s, want one with path %q", path, w.Body.String(), want.field)
		}
	}

	// The rerun button: a new run of the config plus the gate.
	w = l.postForm("/runs/"+id+"/export/rerun", url.Values{"point": {"1"}, "format": {"nginx"}})
	rid := runIDFrom(t, w)
	rr := l.wait(rid)
	if rr.Status != storage.StatusDone || rr.RerunOf != "" {
		t.Fatalf("rerun %s: %s, rerun_of %q", rid, rr.Status, rr.RerunOf)
	}
	next, err := document.DecodeConfig(rr.Config)
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Limiters) != len(cfg.Limiters)+1 {
		t.Fatalf("rerun has %d limiters", len(next.Limiters))
	}
	added := next.Limiters[len(next.Limiters)-1]
	if added.Type != "nginx-limit-req" || added.Name != "token-bucket as nginx" || added.ValuesOf("burst")[0] != 19 || added.Option("nodelay") != "on" {
		t.Errorf("added limiter %+v", added)
	}
	if !strings.Contains(rr.Name, "deploy me + token-bucket as nginx") {
		t.Errorf("rerun name %q", rr.Name)
	}
	if body := l.get("/runs/" + rid).Body.String(); !strings.Contains(body, "token-bucket as nginx") {
		t.Error("the rerun's page does not show the added limiter")
	}
	// No rerun for an exact export, nor for a point that is not deployed.
	for _, v := range []url.Values{{"point": {"2"}, "format": {"nginx"}}, {"point": {"3"}, "format": {"nginx"}}} {
		if w := l.postForm("/runs/"+id+"/export/rerun", v); w.Code != http.StatusUnprocessableEntity {
			t.Errorf("rerun %v: %d", v, w.Code)
		}
	}
	if w := l.postForm(fmt.Sprintf("/runs/%s/export/rerun", id), url.Values{"point": {"1"}, "format": {"nope"}}); w.Code != http.StatusBadRequest {
		t.Errorf("rerun of an unknown format: %d", w.Code)
	}
}

// TestDeployMenuTellsPointsApart: the Deploy menu names each point by what
// tells it apart, as the bounds table does: retry-storm's points share one
// token bucket and differ by client policy, so each label names its policy
// and no two are alike.
func TestDeployMenuTellsPointsApart(t *testing.T) {
	t.Parallel()
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 1,
	"workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 50}]},
	"server": {"workers": 1, "service_ms": 1},
	"limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 10}],
	"policies": [{"name": "no-retry"}, {"name": "fixed", "timeout_ms": 100, "retries": 2, "backoff_ms": 10}]}`))
	if err != nil {
		t.Fatal(err)
	}
	v := newDeployView("r", cfg, 1, "")
	if v == nil || len(v.Points) != 2 {
		t.Fatalf("deploy view %+v", v)
	}
	if v.Points[0].Label == v.Points[1].Label || !strings.Contains(v.Points[1].Label, "fixed") || !strings.Contains(v.Label, "fixed") {
		t.Fatalf("labels %q, %q (chosen %q): want each to name its policy", v.Points[0].Label, v.Points[1].Label, v.Label)
	}
}

// TestDeployLabelOneSpace: a limiter without parameters reads "none
// (bursty)", not "none  (bursty)".
func TestDeployLabelOneSpace(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 1,
	"workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 50}]},
	"server": {"workers": 1, "service_ms": 1},
	"limiters": [{"type": "none"}],
	"loads": [{"name": "steady"}, {"name": "bursty", "parts": [{"type": "constant", "rate_rps": 90}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	v := newDeployView("r", cfg, 1, "")
	if v == nil || v.Label != "none (bursty)" {
		t.Fatalf("label %q, want %q", v.Label, "none (bursty)")
	}
}
