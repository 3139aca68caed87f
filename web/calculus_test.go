package web

import (
	"context"
	"html"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
	"github.com/ratelab/ratelab/web/format"
)

func TestCalculate(t *testing.T) {
	t.Parallel()
	p := calculate(defaultCalcForm())
	if len(p.Form.Errors) > 0 {
		t.Fatalf("default form has errors: %v", p.Form.Errors)
	}
	s := p.Single
	if s.MaxBurst != 20 || s.MaxBurstWhole != 20 || math.Abs(s.DelayMS-210) > 1e-9 || s.Workers != 1 || s.CheckURL == "" {
		t.Errorf("R 100, T 10, D 210, b 20: %+v; want max burst 20, delay 210, one worker", s)
	}
	ch := p.Chain
	// Hops 2×8 ms (250 req/s, 8 ms) and 1×10 ms (100 req/s, 10 ms), flow (80 req/s, 20):
	// concatenated 18 + 20/0.1 = 218; per hop 8 + 20/0.25 = 88, then burst 20 + 0.08*8 = 20.64: 10 + 206.4.
	if math.Abs(ch.ConcatenatedMS-218) > 1e-9 || math.Abs(ch.PerHopSumMS-(88+216.4)) > 1e-9 || ch.RMin != 100 || ch.TSum != 18 {
		t.Errorf("chain %+v", ch)
	}
	f := defaultCalcForm()
	f.RateRPS = "150"
	if p := calculate(f); p.Single.Stable || p.Single.CheckURL != "" || p.Chain.Stable {
		t.Errorf("r > R must be unbounded: %+v %+v", p.Single, p.Chain)
	}
	f = defaultCalcForm()
	f.ServerRPS, f.Hops = "abc", "2; 8"
	p = calculate(f)
	if p.Form.Err("server_rps") == "" || p.Form.Err("hops") == "" || p.Single != nil || p.Chain != nil {
		t.Errorf("bad input: errors %v", p.Form.Errors)
	}
	f = defaultCalcForm()
	f.ServerRPS = "150" // R*T = 1.5 workers: no lab server matches
	if p := calculate(f); p.Single.CheckURL != "" || !strings.Contains(p.Single.CheckNote, "whole number of workers") {
		t.Errorf("R*T not whole: %+v", p.Single)
	}
}

// TestCalculusHops: the chain of servers is optional (an empty list failed
// the whole page with 422 although the single-server answer needs none),
// and a service time that is not a number says so.
func TestCalculusHops(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	w := l.get("/calculus?server_rps=100&latency_ms=10&budget_ms=210&rate_rps=80&burst=20&hops=")
	if w.Code != http.StatusOK {
		t.Errorf("empty chain: %d, want 200", w.Code)
	}
	if body := w.Body.String(); !strings.Contains(body, "b = R·(D − T) = 20") || strings.Contains(body, "at least one server") {
		t.Error("empty chain: no single-server answer, or an error for the optional chain")
	}
	w = l.get("/calculus?server_rps=100&latency_ms=10&budget_ms=210&rate_rps=80&burst=20&hops=2,x")
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), htmlEscape(`service_ms "x" is not a number`)) {
		t.Errorf("hops 2,x: %d, no not-a-number message", w.Code)
	}
}

// TestCalculusInBrowserFlow walks the pages as a user would: the
// calculator, its single-server check (the new-sweep form, filled), the
// chain check (its config, run), and the run page's bounds.
func TestCalculusInBrowserFlow(t *testing.T) {
	t.Parallel()
	l := newLab(t, true, 4)
	w := l.get("/calculus")
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, "b = R·(D − T) = 20") || !strings.Contains(body, "218 ms") {
		t.Fatalf("/calculus: %d\n%s", w.Code, format.Clip(body, 3000))
	}
	checkScripts(t, "/calculus", body)
	if w := l.get("/calculus?server_rps=x&latency_ms=10&budget_ms=1&rate_rps=1&burst=1&hops=1,1"); w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "must be a number") {
		t.Errorf("bad input: %d", w.Code)
	}

	// Single server: the check fills the new-sweep form; posting it runs.
	q := calcFormOf(nil)
	w = l.get("/calculus/check?mode=single&" + q.query())
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "Filled from the calculator") {
		t.Fatalf("single check: %d", w.Code)
	}
	single := calculate(q).Single
	cfg := single.Check()
	v := formValuesOf(form.FromConfig(cfg))
	id := runIDFrom(t, l.postForm("/runs", v))
	if run := l.wait(id); run.Status != storage.StatusDone {
		t.Fatalf("check run: %s %s", run.Status, run.Error)
	}
	res, err := l.store.Result(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Points {
		b := p.Bounds
		if b == nil || !b.Bounded || b.SojournMaxMS > b.SojournBoundMS || b.EndToEndMaxMS > b.EndToEndBoundMS {
			t.Errorf("point %d: bounds %+v", p.Index, b)
		}
		if p.Params[limiter.ParamBurst] == 20 && p.Params[limiter.ParamRate] == 80 && b.SojournBoundMS != 210 {
			t.Errorf("burst 20: sojourn bound %g, want 210", b.SojournBoundMS)
		}
	}
	page := l.get("/runs/" + id).Body.String()
	for _, want := range []string{`id="bounds"`, `id="chart-arrival-`, `id="chart-heat-0-goodput"`, `id="chart-heat-0-sojourn"`, "200.0 / 210.0"} {
		if !strings.Contains(page, want) {
			t.Errorf("check run page lacks %s", want)
		}
	}
	checkScripts(t, "/runs/"+id, page)

	// Chain: the check page shows the config; posting it runs the tandem.
	w = l.get("/calculus/check?mode=chain&" + q.query())
	m := regexp.MustCompile(`(?s)<textarea name="config"[^>]*>(.*?)</textarea>`).FindStringSubmatch(w.Body.String())
	if w.Code != http.StatusOK || m == nil {
		t.Fatalf("chain check: %d", w.Code)
	}
	doc := html.UnescapeString(m[1])
	if _, err := document.DecodeConfig([]byte(doc)); err != nil {
		t.Fatalf("chain check config does not decode: %v\n%s", err, doc)
	}
	id = runIDFrom(t, l.postForm("/calculus/run", url.Values{"config": {doc}}))
	if run := l.wait(id); run.Status != storage.StatusDone {
		t.Fatalf("chain run: %s %s", run.Status, run.Error)
	}
	res, err = l.store.Result(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Points {
		b := p.Bounds
		if !b.Bounded || b.ConcatenatedMS >= b.PerHopSumMS || b.EndToEndMaxMS > b.ConcatenatedMS || len(b.Hops) != 3 {
			t.Errorf("tandem point %d: %+v", p.Index, b)
		}
	}
	page = l.get("/runs/" + id).Body.String()
	if !strings.Contains(page, `id="chart-tandem"`) || !strings.Contains(page, "per-hop sum (ms)") || !strings.Contains(page, "server 2×8 ms") || !strings.Contains(page, "/calculus/edit/"+id) {
		t.Error("tandem run page lacks the tandem chart, the per-hop column or the edit link")
	}
	if w := l.get("/calculus/edit/" + id); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "&#34;chain&#34;") {
		t.Errorf("edit page: %d", w.Code)
	}
	if w := l.postForm("/calculus/run", url.Values{"config": {`{"version":1}`}}); w.Code != http.StatusUnprocessableEntity {
		t.Errorf("bad config: %d", w.Code)
	}
}
