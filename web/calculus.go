package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/web/form"
	"github.com/ratelab/ratelab/web/format"
)

// The calculator page (/calculus): a token bucket's delay and backlog
// bounds through one rate-latency server and through a chain of them, and
// the sweeps that check them by simulation (package presets builds those).

// CalcForm is the calculator's input as typed (query parameters), with
// errors per input.
type CalcForm struct {
	ServerRPS, LatencyMS, BudgetMS, RateRPS, Burst, Hops string
	Errors                                               map[string]string
}

// CalcPage is the calculator with its answers; a nil answer could not be
// computed from the input.
type CalcPage struct {
	Form   CalcForm
	Single *CalcSingle
	Chain  *CalcChain
}

// CalcSingle is the engine's single-server answer and the link to its check.
type CalcSingle struct {
	presets.SingleAnswer
	CheckURL string
}

// CalcChain is the engine's chain answer and the link to its check.
type CalcChain struct {
	presets.ChainAnswer
	CheckURL string
}

func defaultCalcForm() CalcForm {
	return CalcForm{ServerRPS: "100", LatencyMS: "10", BudgetMS: "210", RateRPS: "80", Burst: "20", Hops: "2, 8\n1, 10"}
}

func calcFormOf(q url.Values) CalcForm {
	f := defaultCalcForm()
	if len(q) == 0 {
		return f
	}
	f = CalcForm{ServerRPS: q.Get("server_rps"), LatencyMS: q.Get("latency_ms"), BudgetMS: q.Get("budget_ms"),
		RateRPS: q.Get("rate_rps"), Burst: q.Get("burst"), Hops: q.Get("hops")}
	return f
}

// num parses an input within its range; NaN (and the error on the form)
// when it is not a number in range.
func (f *CalcForm) num(key, text string, r presets.Range) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		f.fail(key, "must be a number")
	case v < r.Min || v > r.Max:
		f.fail(key, fmt.Sprintf("must be between %s and %s", format.Num(r.Min), format.Num(r.Max)))
	default:
		return v
	}
	return math.NaN()
}

func (f *CalcForm) fail(key, msg string) {
	if f.Errors == nil {
		f.Errors = map[string]string{}
	}
	f.Errors[key] = msg
}

// Err is the message of one input.
func (f *CalcForm) Err(key string) string { return f.Errors[key] }

// query writes the form back as query parameters.
func (f *CalcForm) query() string {
	v := url.Values{}
	v.Set("server_rps", f.ServerRPS)
	v.Set("latency_ms", f.LatencyMS)
	v.Set("budget_ms", f.BudgetMS)
	v.Set("rate_rps", f.RateRPS)
	v.Set("burst", f.Burst)
	v.Set("hops", f.Hops)
	return v.Encode()
}

// parseHops reads "workers, service_ms" lines.
func parseHops(text string) ([]presets.Hop, error) {
	var hops []presets.Hop
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		fs := strings.Split(line, ",")
		if len(fs) != 2 {
			return nil, fmt.Errorf("line %d: write \"workers, service_ms\"", i+1)
		}
		c, err1 := strconv.Atoi(strings.TrimSpace(fs[0]))
		s, err2 := strconv.ParseFloat(strings.TrimSpace(fs[1]), 64)
		if err1 != nil || float64(c) < presets.CalcWorkers().Min || float64(c) > presets.CalcWorkers().Max {
			return nil, fmt.Errorf("line %d: workers must be a whole number from %s to %s", i+1, format.Num(presets.CalcWorkers().Min), format.Num(presets.CalcWorkers().Max))
		}
		if err2 != nil {
			return nil, fmt.Errorf("line %d: service_ms %q is not a number", i+1, format.Clip(strings.TrimSpace(fs[1]), 40))
		}
		if !(s > presets.CalcServiceMS().Min && s <= presets.CalcServiceMS().Max) {
			return nil, fmt.Errorf("line %d: service_ms must be more than 0 and at most %s", i+1, format.Num(presets.CalcServiceMS().Max))
		}
		hops = append(hops, presets.Hop{Workers: c, ServiceMS: s})
	}
	if len(hops) == 0 {
		return nil, errors.New("give at least one server")
	}
	if len(hops) > presets.CalcMaxHops {
		return nil, fmt.Errorf("at most %d servers", presets.CalcMaxHops)
	}
	return hops, nil
}

// calculate answers the form with the engine's answers; inputs with
// errors leave their answer nil.
func calculate(f CalcForm) *CalcPage {
	p := &CalcPage{Form: f}
	fm := &p.Form
	R := fm.num("server_rps", f.ServerRPS, presets.CalcServerRPS())
	T := fm.num("latency_ms", f.LatencyMS, presets.CalcLatencyMS())
	D := fm.num("budget_ms", f.BudgetMS, presets.CalcBudgetMS())
	r := fm.num("rate_rps", f.RateRPS, presets.CalcRateRPS())
	b := fm.num("burst", f.Burst, presets.CalcBurst())
	// The chain is optional: with no servers listed the page answers for
	// the single server only.
	var hops []presets.Hop
	if strings.TrimSpace(f.Hops) != "" {
		var err error
		if hops, err = parseHops(f.Hops); err != nil {
			fm.fail("hops", err.Error())
		}
	}
	if !math.IsNaN(R + T + D + r + b) {
		p.Single = &CalcSingle{SingleAnswer: presets.AnswerSingle(R, T, D, r, b)}
		if p.Single.Checkable() {
			p.Single.CheckURL = "/calculus/check?mode=single&" + f.query()
		}
	}
	if hops != nil && !math.IsNaN(r+b+D) {
		p.Chain = &CalcChain{ChainAnswer: presets.AnswerChain(r, b, D, hops)}
		if p.Chain.Stable {
			p.Chain.CheckURL = "/calculus/check?mode=chain&" + f.query()
		}
	}
	return p
}

func (s *Server) calculusPage(w http.ResponseWriter, r *http.Request) {
	p := calculate(calcFormOf(r.URL.Query()))
	status := http.StatusOK
	if len(p.Form.Errors) > 0 {
		status = http.StatusUnprocessableEntity
	}
	s.render(w, r, status, CalculusPage(p))
}

// calculusCheck turns an answer into a sweep: a single server's check fills
// the new-sweep form (change anything, then run); a chain, which the form
// cannot express, is shown as its config document with a button to run it.
func (s *Server) calculusCheck(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := calcFormOf(q)
	p := calculate(f)
	back := "/calculus?" + f.query()
	switch q.Get("mode") {
	case "single":
		if p.Single == nil || p.Single.CheckURL == "" {
			s.errorPage(w, r, http.StatusUnprocessableEntity, "Nothing to check", "The calculator has no burst to check for this input. "+checkNote(p))
			return
		}
		cfg := p.Single.Check()
		if err := cfg.Validate(); err != nil {
			s.errorPage(w, r, http.StatusUnprocessableEntity, "This check cannot run", err.Error())
			return
		}
		s.homePage(w, r, http.StatusOK, HomeData{Form: form.FromConfig(cfg),
			Notice: fmt.Sprintf("Filled from the calculator: bursts around %d into R = %s req/s, T = %s ms, deadline %s ms. Press Run to check the bound by simulation.",
				p.Single.MaxBurstWhole, format.Num(p.Single.R), format.Num(p.Single.T), format.Num(p.Single.D))})
	case "chain":
		if p.Chain == nil || p.Chain.CheckURL == "" {
			s.errorPage(w, r, http.StatusUnprocessableEntity, "Nothing to check", "The chain has no bound for this input (check the servers and r <= every R).")
			return
		}
		cfg := p.Chain.Check()
		if err := cfg.Validate(); err != nil {
			s.errorPage(w, r, http.StatusUnprocessableEntity, "This check cannot run", err.Error())
			return
		}
		s.render(w, r, http.StatusOK, Editor(EditorPage{Title: "Check the chain by simulation", Back: back, Config: string(cfg.JSON()),
			Intro: "The new-sweep form has no chains yet, so here is the sweep as a config document (the same JSON lab run --config and POST /api/runs take). A chain's stages run in order; its last hop is the run's server."}))
	default:
		s.errorPage(w, r, http.StatusBadRequest, "Unknown check", "mode must be single or chain.")
	}
}

func checkNote(p *CalcPage) string {
	if p.Single != nil {
		return p.Single.CheckNote
	}
	return ""
}

// round3 rounds for display (3 decimals).
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
