package limiter

import (
	"fmt"
	"maps"
	"math/rand/v2"

	"github.com/ratelab/ratelab/experiments/server"
)

// Decision-cost benchmark: every gate type decides on the same arrival
// stream, so their costs per decision (ns, allocations) compare. The
// benchmark itself (timing) lives in the callers: the limiter package's
// BenchmarkDecision and the `lab bench` command; this file only builds the
// deterministic cases and replays them.

// DecisionLoad is the offered load of a decision stream relative to the
// gate's nominal rate: 1.5 times, so every policer both admits and rejects.
const DecisionLoad = 1.5

// DecisionArrivals is the length of one pass of the stream; a replay runs
// it again and again, shifted in time, for as many decisions as asked.
const DecisionArrivals = 1 << 16

// DecisionCase is one gate of the decision-cost benchmark.
type DecisionCase struct {
	Name       string // the limiter type, and the client count for per-client gates
	Spec       Spec
	Params     Params
	Clients    int
	OfferedRPS float64 // the stream's rate: DecisionLoad times the nominal rate
}

// DecisionCases lists every limiter type at its Example setting (about
// 100 requests/s) with 20 clients, and the per-client gates again with
// 10 000 clients at 10 000 requests/s and burst 20 000 (1/s and 2 each: a
// client's burst share must hold a whole token), where the per-client state
// no longer fits in the first cache levels.
func DecisionCases() []DecisionCase {
	var out []DecisionCase
	for _, k := range Kinds() {
		if k.compound { // a composition of the others
			continue
		}
		s := Spec{Type: k.Type}
		for _, name := range k.ParamNames() {
			s.SetValues(name, Values{k.Example[name]})
		}
		s.Normalize()
		out = append(out, DecisionCase{Name: string(k.Type), Spec: s, Params: maps.Clone(k.Example), Clients: 20, OfferedRPS: DecisionLoad * 100})
	}
	for _, k := range Kinds() {
		if !k.PerClient {
			continue
		}
		const clients, rate, burst = 10_000, 10_000, 20_000
		s := Spec{Type: k.Type, Params: map[string]Values{ParamRate: {rate}, ParamBurst: {burst}}}
		s.Normalize()
		out = append(out, DecisionCase{Name: fmt.Sprintf("%s/%d", k.Type, clients), Spec: s, Params: Params{ParamRate: rate, ParamBurst: burst}, Clients: clients, OfferedRPS: DecisionLoad * rate})
	}
	return out
}

// DecisionReplay feeds a gate the decision stream, one arrival per Step.
type DecisionReplay struct {
	gate    Gate
	onAdmit func(release float64)
	t       []float64
	c       []int32
	spanMS  float64 // one pass of the stream
	i       int
	offMS   float64
}

// NewReplay builds the case's gate over a fresh decision stream (Poisson at
// OfferedRPS, clients drawn uniformly, PCG seeded with 1). A gate that reads
// the server's occupancy (Kind.ReadsServer) reads a 10 ms single-worker
// server fed with its admissions.
func (c *DecisionCase) NewReplay() (*DecisionReplay, error) {
	weights := make([]float64, c.Clients)
	for i := range weights {
		weights[i] = 1
	}
	var occ Occupancy
	var onAdmit func(release float64)
	if k := c.Spec.Kind(); k != nil && k.ReadsServer {
		srv := server.New(server.Spec{Workers: 1, ServiceMS: server.DefaultServiceMS, DeadlineMS: server.DefaultDeadlineMS})
		occ, onAdmit = srv, func(release float64) { srv.Serve(release) }
	}
	g, err := New(&c.Spec, c.Params, weights, occ)
	if err != nil {
		return nil, fmt.Errorf("decision case %s: %w", c.Name, err)
	}
	rng := rand.New(rand.NewPCG(1, uint64(c.Clients)))
	r := &DecisionReplay{gate: g, onAdmit: onAdmit, t: make([]float64, DecisionArrivals), c: make([]int32, DecisionArrivals)}
	mean := 1000 / c.OfferedRPS
	at := 0.0
	for i := range r.t {
		at += rng.ExpFloat64() * mean
		r.t[i], r.c[i] = at, int32(rng.IntN(c.Clients))
	}
	r.spanMS = at + mean
	return r, nil
}

// Step makes one decision and reports whether the gate admitted.
func (r *DecisionReplay) Step() bool {
	release, ok := r.gate.Offer(r.Next())
	if ok && r.onAdmit != nil {
		r.onAdmit(release)
	}
	return ok
}

// Next returns the stream's next arrival (ms, client) and moves past it
// without offering it to the gate: a caller outside the engine times a
// library's own limiter on the same stream with it.
func (r *DecisionReplay) Next() (float64, int32) {
	t, c := r.t[r.i]+r.offMS, r.c[r.i]
	if r.i++; r.i == len(r.t) {
		r.i = 0
		r.offMS += r.spanMS
	}
	return t, c
}
