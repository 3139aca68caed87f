package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/web/form"
	"github.com/ratelab/ratelab/web/format"
)

// The calculator page (/calculus): a token bucket's delay and backlog
// bounds through one rate-latency server and through a chain of them, and
// the sweeps that check them by simulation (package presets builds those).

// maxCalcHops bounds the calculator's chain: a chain limiter's stages.
const maxCalcHops = limiter.MaxStages

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

// CalcSingle is one rate-latency server R, T and a token bucket (r, b).
type CalcSingle struct {
	R, T, D, Rate, Burst float64 // req/s, ms, ms, req/s, requests
	// MaxBurst is R*(D - T) (0 when D <= T); MaxBurstWhole its integer part.
	MaxBurst      float64
	MaxBurstWhole int
	// DelayMS is T + b/R and BacklogReq b + r*T for the given burst.
	DelayMS, BacklogReq float64
	Stable              bool   // r <= R
	Workers             int    // R*T/1000 when it is whole: the lab server that checks it
	CheckNote           string // why there is no check, else ""
	CheckURL            string
}

// CalcChain is a token bucket (r, b) through servers in series.
type CalcChain struct {
	Hops       []CalcHop
	RMin, TSum float64 // req/s, ms
	// ConcatenatedMS is TSum + b/RMin (pay the burst once); PerHopSumMS
	// adds the hops' bounds, each seeing the burst grown by the hops before.
	ConcatenatedMS, PerHopSumMS float64
	Stable                      bool
	Rate, Burst, D              float64 // the flow (req/s, requests) and the budget (ms)
	CheckURL                    string
}

// CalcHop is one server of a chain: c workers of S ms.
type CalcHop struct {
	Workers           int
	ServiceMS         float64
	R, T              float64 // req/s, ms
	BurstIn, DelayMS  float64 // the burst it sees and its delay bound
	BurstOut, Backlog float64
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

func (f *CalcForm) num(key, text string, min, max float64, whole bool) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		f.fail(key, "must be a number")
	case v < min || v > max:
		f.fail(key, fmt.Sprintf("must be between %s and %s", format.Num(min), format.Num(max)))
	case whole && v != math.Trunc(v):
		f.fail(key, "must be a whole number")
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
func parseHops(text string) ([]CalcHop, error) {
	var hops []CalcHop
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
		if err1 != nil || c < 1 || c > 100_000 {
			return nil, fmt.Errorf("line %d: workers must be a whole number from 1 to 100000", i+1)
		}
		if err2 != nil {
			return nil, fmt.Errorf("line %d: service_ms %q is not a number", i+1, format.Clip(strings.TrimSpace(fs[1]), 40))
		}
		if !(s > 0 && s <= 3_600_000) {
			return nil, fmt.Errorf("line %d: service_ms must be more than 0 and at most 3600000", i+1)
		}
		hops = append(hops, CalcHop{Workers: c, ServiceMS: s})
	}
	if len(hops) == 0 {
		return nil, errors.New("give at least one server")
	}
	if len(hops) > maxCalcHops {
		return nil, fmt.Errorf("at most %d servers", maxCalcHops)
	}
	return hops, nil
}

// calculate answers the form; inputs with errors leave their answer nil.
func calculate(f CalcForm) *CalcPage {
	p := &CalcPage{Form: f}
	fm := &p.Form
	R := fm.num("server_rps", f.ServerRPS, 1e-6, 1e9, false)
	T := fm.num("latency_ms", f.LatencyMS, 0, 3.6e6, false)
	D := fm.num("budget_ms", f.BudgetMS, 0, 8.64e7, false)
	r := fm.num("rate_rps", f.RateRPS, 1e-6, 1e9, false)
	b := fm.num("burst", f.Burst, 1, 1e7, false)
	// The chain is optional: with no servers listed the page answers for
	// the single server only.
	var hops []CalcHop
	if strings.TrimSpace(f.Hops) != "" {
		var err error
		if hops, err = parseHops(f.Hops); err != nil {
			fm.fail("hops", err.Error())
		}
	}
	if !math.IsNaN(R + T + D + r + b) {
		beta := calculus.RateLatency{RatePerMS: calculus.PerMS(R), LatencyMS: T}
		a := calculus.Affine(calculus.PerMS(r), b)
		s := &CalcSingle{R: R, T: T, D: D, Rate: r, Burst: b, Stable: r <= R}
		s.MaxBurst = calculus.MaxBurst(beta, D)
		s.MaxBurstWhole = int(math.Floor(s.MaxBurst + 1e-9))
		s.DelayMS, s.BacklogReq = calculus.Delay(a, beta), calculus.Backlog(a, beta)
		c := R * T / 1000
		switch {
		case !s.Stable:
			s.CheckNote = "No check: with r > R nothing is bounded."
		case s.MaxBurstWhole < 1:
			s.CheckNote = "No check: the budget leaves no room for even one request (D <= T + 1/R)."
		case c < 1 || math.Abs(c-math.Round(c)) > 1e-9:
			s.CheckNote = fmt.Sprintf("No check: the lab's server is c workers of S ms (R = c/S, T = S), so R*T/1000 = %s must be a whole number of workers.", format.Num(c))
		default:
			s.Workers = int(math.Round(c))
			s.CheckURL = "/calculus/check?mode=single&" + f.query()
		}
		p.Single = s
	}
	if hops != nil && !math.IsNaN(r+b+D) {
		ch := &CalcChain{Hops: hops, RMin: math.Inf(1), Stable: true, Rate: r, Burst: b, D: D}
		betas := make([]calculus.Hop, len(hops))
		for i := range hops {
			h := &ch.Hops[i]
			betas[i] = calculus.Workers(h.Workers, h.ServiceMS)
			h.R, h.T = calculus.RPS(betas[i].RatePerMS), betas[i].LatencyMS
			ch.RMin, ch.TSum = math.Min(ch.RMin, h.R), ch.TSum+h.T
			if r > h.R {
				ch.Stable = false
			}
		}
		if ch.Stable {
			a := calculus.Affine(calculus.PerMS(r), b)
			bounds := calculus.ChainBounds(a, betas)
			ch.ConcatenatedMS, ch.PerHopSumMS = bounds.ConcatenatedMS, bounds.PerHopSumMS
			cur := a
			for i := range ch.Hops {
				h := &ch.Hops[i]
				h.BurstIn, h.DelayMS = cur.BurstReq, bounds.PerHopMS[i]
				h.Backlog = calculus.Backlog(cur, betas[i])
				cur = calculus.Output(cur, betas[i])
				h.BurstOut = cur.BurstReq
			}
			ch.CheckURL = "/calculus/check?mode=chain&" + f.query()
		}
		p.Chain = ch
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

// check is the sweep that checks a single server's answer.
func (s *CalcSingle) check() *experiments.Config {
	return presets.SingleServerCheck(presets.SingleServer{ServerRPS: s.R, LatencyMS: s.T, BudgetMS: s.D, RateRPS: s.Rate,
		MaxBurst: s.MaxBurst, Burst: s.MaxBurstWhole, Workers: s.Workers})
}

// check is the sweep that checks a chain's answer.
func (ch *CalcChain) check() *experiments.Config {
	t := presets.Tandem{RateRPS: ch.Rate, Burst: ch.Burst, BudgetMS: ch.D, ConcatenatedMS: ch.ConcatenatedMS, PerHopSumMS: ch.PerHopSumMS}
	for _, h := range ch.Hops {
		t.Hops = append(t.Hops, presets.Hop{Workers: h.Workers, ServiceMS: h.ServiceMS})
	}
	return presets.TandemCheck(t)
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
		cfg := p.Single.check()
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
		cfg := p.Chain.check()
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
