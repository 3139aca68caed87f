package presets

import (
	"fmt"
	"math"
	"strconv"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/workload"
)

// The sweeps that check the web calculator's network-calculus answers by
// simulation. The lab's server is c workers of S ms: a rate-latency server
// with R = c/S and T = S.

// checkWindowMS is the arrival window of a check.
const checkWindowMS = 5000

// SingleServer is the calculator's answer for one server (R, T) and a delay
// budget D: the largest burst R*(D - T) a token bucket of rate r may have.
type SingleServer struct {
	ServerRPS, LatencyMS, BudgetMS float64 // R, T and D
	RateRPS                        float64 // r
	MaxBurst                       float64 // R*(D - T)
	Burst                          int     // MaxBurst's whole part: the burst checked
	Workers                        int     // R*T/1000: the lab server of R and T
}

// SingleServerCheck is the sweep that checks a burst b for a budget D: a
// token bucket at three rates up to r and bursts around b, into the lab
// server with R and T and deadline D. Its run page shows each point's bound
// beside its measurement, and the rate × burst heatmap outlines where the
// bound meets the deadline.
func SingleServerCheck(s SingleServer) *experiments.Config {
	b := float64(s.Burst)
	rates := limiter.Values{}
	for _, x := range []float64{s.RateRPS / 2, s.RateRPS * 3 / 4, s.RateRPS} {
		x = math.Round(x*10) / 10
		if x > 0 && (len(rates) == 0 || rates[len(rates)-1] < x) {
			rates = append(rates, x)
		}
	}
	cfg := &experiments.Config{
		Version: experiments.Version,
		Name:    fmt.Sprintf("calculus check: burst %d for %s ms at %s req/s", s.Burst, num(s.BudgetMS), num(s.ServerRPS)),
		Description: fmt.Sprintf("From the calculator: a server of R = %s req/s, T = %s ms and a budget of D = %s ms allow a burst of b = R*(D - T) = %s. "+
			"The token bucket sweeps bursts around %d at rates up to %s req/s; the bound T + b/R should meet the deadline up to burst %d, and no measurement may exceed its bound.",
			num(s.ServerRPS), num(s.LatencyMS), num(s.BudgetMS), num(s.MaxBurst), s.Burst, num(s.RateRPS), s.Burst),
		Seed:     1,
		Workload: checkWorkload(s.RateRPS, s.Burst),
		Limiters: []limiter.Spec{{Type: limiter.TypeTokenBucket, Params: map[string]limiter.Values{
			limiter.ParamRate: rates, limiter.ParamBurst: uniqueWhole(b/4, b/2, b, b*3/2, b*2)}}},
	}
	cfg.Server.Workers, cfg.Server.ServiceMS, cfg.Server.DeadlineMS = s.Workers, s.LatencyMS, s.BudgetMS
	cfg.Normalize()
	return cfg
}

// Hop is one server of a tandem: Workers of ServiceMS each.
type Hop struct {
	Workers   int
	ServiceMS float64
}

// Tandem is the calculator's answer for a token bucket (r, b) through
// servers in series, with a delay budget: the concatenated bound (the
// burst paid once) and the sum of the per-hop bounds.
type Tandem struct {
	RateRPS, Burst, BudgetMS    float64
	Hops                        []Hop
	ConcatenatedMS, PerHopSumMS float64
}

// TandemCheck is the sweep that runs the token bucket (r, b/2..2b) through
// the hops as one chain limiter: every hop but the last is a server stage,
// the last is the run's server.
func TandemCheck(t Tandem) *experiments.Config {
	b := math.Max(1, math.Floor(t.Burst))
	stages := []limiter.Stage{{Spec: limiter.Spec{Type: limiter.TypeTokenBucket, Params: map[string]limiter.Values{
		limiter.ParamRate: {t.RateRPS}, limiter.ParamBurst: uniqueWhole(b/2, b, b*2)}}}}
	for _, h := range t.Hops[:len(t.Hops)-1] {
		stages = append(stages, limiter.Stage{Spec: limiter.Spec{Type: limiter.StageServer}, Workers: h.Workers, ServiceMS: h.ServiceMS})
	}
	last := t.Hops[len(t.Hops)-1]
	cfg := &experiments.Config{
		Version: experiments.Version,
		Name:    fmt.Sprintf("calculus check: tandem of %d servers", len(t.Hops)),
		Description: fmt.Sprintf("From the calculator: a token bucket (%s req/s, burst %s) through %d servers in series. "+
			"Concatenated bound (pay the burst once) %s ms against the sum of per-hop bounds %s ms; the run shows the measured end-to-end maximum beside both.",
			num(t.RateRPS), num(b), len(t.Hops), num(t.ConcatenatedMS), num(t.PerHopSumMS)),
		Seed:     1,
		Workload: checkWorkload(t.RateRPS, int(b)),
		Limiters: []limiter.Spec{{Type: limiter.TypeChain, Name: "tandem", Stages: stages}},
	}
	cfg.Server.Workers, cfg.Server.ServiceMS, cfg.Server.DeadlineMS = last.Workers, last.ServiceMS, t.BudgetMS
	cfg.Normalize()
	return cfg
}

// checkWorkload is the traffic of a check, built to reach the bound: four
// rounds of an idle gap (the bucket refills), an instantaneous burst of 3b
// requests (a full bucket passes b at once), then 700 ms of steady
// overload at 1.2 r (the bucket stays empty and passes its rate r).
func checkWorkload(rateRPS float64, burst int) workload.Spec {
	spec := workload.Spec{DurationMS: checkWindowMS}
	var bursts []workload.Burst
	for _, at := range []float64{0, 1500, 3000, 4500} {
		end := math.Min(at+700, checkWindowMS)
		bursts = append(bursts, workload.Burst{AtMS: at, Count: 3 * burst})
		spec.Parts = append(spec.Parts, workload.Part{Type: workload.Constant, Client: "steady", RateRPS: math.Round(rateRPS*12) / 10, StartMS: at, EndMS: &end})
	}
	spec.Parts = append(spec.Parts, workload.Part{Type: workload.Bursts, Client: "bursty", Bursts: bursts})
	return spec
}

// uniqueWhole lists positive whole values in order without repeats.
func uniqueWhole(vs ...float64) limiter.Values {
	var out limiter.Values
	for _, v := range vs {
		v = math.Max(1, math.Floor(v))
		if len(out) == 0 || out[len(out)-1] < v {
			out = append(out, v)
		}
	}
	return out
}

// num prints a number the shortest way that reads back exactly.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
