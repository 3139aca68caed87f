package limiter

import (
	"fmt"
	"math/rand/v2"
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

// DecisionCases lists every limiter type at the nominal 100 requests/s
// (burst, queue and limit 100, window 1000 ms; admission 10 in the system)
// with 20 clients, and the per-client gates again with 10 000 clients at
// 10 000 requests/s and burst 20 000 (1/s and 2 each: a client's burst
// share must hold a whole token), where the per-client state no longer
// fits in the first cache levels.
func DecisionCases() []DecisionCase {
	nominal := Params{RateRPS: 100, Burst: 100, Queue: 100, Limit: 100, WindowMS: DefaultWindow}
	var out []DecisionCase
	for _, typ := range Types() {
		if typ == TypeChain { // a composition of the others
			continue
		}
		s := Spec{Type: typ}
		p := Params{}
		for _, name := range ParamsOf(typ) {
			v := nominal.Get(name)
			if typ == TypeAdmission {
				v = 10
			}
			p.set(name, v)
			*s.ValuesOf(name) = Values{v}
		}
		s.Normalize()
		out = append(out, DecisionCase{Name: typ, Spec: s, Params: p, Clients: 20, OfferedRPS: DecisionLoad * 100})
	}
	for _, typ := range []string{TypePerClient, TypeHierarchical} {
		const clients, rate, burst = 10_000, 10_000, 20_000
		s := Spec{Type: typ, RateRPS: Values{rate}, Burst: Values{burst}}
		s.Normalize()
		out = append(out, DecisionCase{Name: fmt.Sprintf("%s/%d", typ, clients), Spec: s, Params: Params{RateRPS: rate, Burst: burst}, Clients: clients, OfferedRPS: DecisionLoad * rate})
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
// OfferedRPS, clients drawn uniformly, PCG seeded with 1). occ is the
// server an admission gate reads; onAdmit, if not nil, is told every
// admission's release time (to feed that server).
func (c *DecisionCase) NewReplay(occ Occupancy, onAdmit func(release float64)) (*DecisionReplay, error) {
	weights := make([]float64, c.Clients)
	for i := range weights {
		weights[i] = 1
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
	release, ok := r.gate.Offer(r.t[r.i]+r.offMS, r.c[r.i])
	if ok && r.onAdmit != nil {
		r.onAdmit(release)
	}
	if r.i++; r.i == len(r.t) {
		r.i = 0
		r.offMS += r.spanMS
	}
	return ok
}
