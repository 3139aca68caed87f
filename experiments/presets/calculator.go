package presets

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
)

// The calculator's answers: a token bucket (r, b) through one rate-latency
// server (R, T) with a delay budget D, and through lab servers in series.
// The web page only reads the inputs and shows these.

// The calculator's input ranges: the engine's own limits where one applies
// (funcs, so no importer can change them).

// CalcServerRPS is the server's rate R, req/s.
func CalcServerRPS() Range { return Range{Min: limiter.MinRateRPS, Max: limiter.MaxRateRPS} }

// CalcLatencyMS is the server's latency T, ms.
func CalcLatencyMS() Range { return Range{Min: 0, Max: server.MaxServiceMS} }

// CalcBudgetMS is the delay budget D, ms.
func CalcBudgetMS() Range { return Range{Min: 0, Max: server.MaxDeadlineMS} }

// CalcRateRPS is the token bucket's rate r, req/s.
func CalcRateRPS() Range { return Range{Min: limiter.MinRateRPS, Max: limiter.MaxRateRPS} }

// CalcBurst is the token bucket's burst b, requests.
func CalcBurst() Range { return Range{Min: 1, Max: limiter.MaxSize} }

// CalcWorkers is a chain server's workers.
func CalcWorkers() Range { return Range{Min: 1, Max: server.MaxWorkers} }

// CalcServiceMS is a chain server's service_ms (exclusive of 0).
func CalcServiceMS() Range { return Range{Min: 0, Max: server.MaxServiceMS} }

// CalcMaxHops bounds the chain: a chain limiter's stages.
const CalcMaxHops = limiter.MaxStages

// Range is an input's allowed values, inclusive.
type Range struct{ Min, Max float64 }

// SingleAnswer is the calculator's answer for one rate-latency server R
// (req/s), T (ms) and a token bucket (r, b) with a delay budget D (ms).
type SingleAnswer struct {
	R, T, D, Rate, Burst float64 // req/s, ms, ms, req/s, requests
	// MaxBurst is R*(D - T) (0 when D <= T); MaxBurstWhole its integer part.
	MaxBurst      float64
	MaxBurstWhole int
	// DelayMS is T + b/R and BacklogReq b + r*T for the given burst.
	DelayMS, BacklogReq float64
	Stable              bool   // r <= R
	Workers             int    // R*T/1000 when it is whole: the lab server that checks it
	CheckNote           string // why there is no check, else ""
}

// AnswerSingle computes the single-server answer.
func AnswerSingle(R, T, D, r, b float64) SingleAnswer {
	beta := calculus.RateLatency{RatePerMS: calculus.PerMS(R), LatencyMS: T}
	a := calculus.Affine(calculus.PerMS(r), b)
	s := SingleAnswer{R: R, T: T, D: D, Rate: r, Burst: b, Stable: r <= R}
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
		s.CheckNote = fmt.Sprintf("No check: the lab's server is c workers of S ms (R = c/S, T = S), so R*T/1000 = %s must be a whole number of workers.", num(c))
	default:
		s.Workers = int(math.Round(c))
	}
	return s
}

// Checkable reports whether the answer has a sweep that checks it.
func (s *SingleAnswer) Checkable() bool { return s.CheckNote == "" }

// Check is the sweep that checks the answer (see SingleServerCheck).
func (s *SingleAnswer) Check() *experiments.Config {
	return SingleServerCheck(SingleServer{ServerRPS: s.R, LatencyMS: s.T, BudgetMS: s.D, RateRPS: s.Rate,
		MaxBurst: s.MaxBurst, Burst: s.MaxBurstWhole, Workers: s.Workers})
}

// ChainHop is one server of a chain (c workers of S ms) with what the flow
// sees there.
type ChainHop struct {
	Workers           int
	ServiceMS         float64
	R, T              float64 // req/s, ms
	BurstIn, DelayMS  float64 // the burst it sees and its delay bound
	BurstOut, Backlog float64
}

// ChainAnswer is a token bucket (r, b) through servers in series.
type ChainAnswer struct {
	Hops       []ChainHop
	RMin, TSum float64 // req/s, ms
	// ConcatenatedMS is TSum + b/RMin (pay the burst once); PerHopSumMS
	// adds the hops' bounds, each seeing the burst grown by the hops before.
	ConcatenatedMS, PerHopSumMS float64
	Stable                      bool
	Rate, Burst, D              float64 // the flow (req/s, requests) and the budget (ms)
}

// AnswerChain computes the chain's answer for the flow (r, b) and budget D
// through hops (their Workers and ServiceMS).
func AnswerChain(r, b, D float64, hops []Hop) ChainAnswer {
	ch := ChainAnswer{RMin: math.Inf(1), Stable: true, Rate: r, Burst: b, D: D}
	betas := make([]calculus.Hop, len(hops))
	for i, hop := range hops {
		betas[i] = calculus.Workers(hop.Workers, hop.ServiceMS)
		h := ChainHop{Workers: hop.Workers, ServiceMS: hop.ServiceMS, R: calculus.RPS(betas[i].RatePerMS), T: betas[i].LatencyMS}
		ch.RMin, ch.TSum = math.Min(ch.RMin, h.R), ch.TSum+h.T
		if r > h.R {
			ch.Stable = false
		}
		ch.Hops = append(ch.Hops, h)
	}
	if !ch.Stable {
		return ch
	}
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
	return ch
}

// Check is the sweep that checks a stable chain's answer (see TandemCheck).
func (ch *ChainAnswer) Check() *experiments.Config {
	t := Tandem{RateRPS: ch.Rate, Burst: ch.Burst, BudgetMS: ch.D, ConcatenatedMS: ch.ConcatenatedMS, PerHopSumMS: ch.PerHopSumMS}
	for _, h := range ch.Hops {
		t.Hops = append(t.Hops, Hop{Workers: h.Workers, ServiceMS: h.ServiceMS})
	}
	return TandemCheck(t)
}
