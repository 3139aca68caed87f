package limiter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/server"
)

// TypeChain is a tandem: requests cross several gates and servers in order
// before the run's server, for example
//
//	{"type": "chain", "stages": [
//	  {"type": "per-client-token-bucket", "rate_rps": 200, "burst": 40},
//	  {"type": "token-bucket", "rate_rps": 150, "burst": [10, 20, 40]},
//	  {"type": "leaky-bucket", "rate_rps": 120, "queue": 10},
//	  {"type": "server", "workers": 2, "service_ms": 4}]}
//
// The config's server is always the last hop (its deadline counts from the
// arrival at the first stage). A gate stage is any limiter but none,
// admission and chain; a server stage has workers and service_ms (defaults
// 1 and 10) and serves FIFO like the run's server. At most one stage lists
// several values: the chain's points are that stage's points, and their
// params are that stage's (of the first gate stage when nothing is swept).
// A request rejected by any gate is rejected; the chain's release is the
// time the last stage hands it to the run's server.
const TypeChain Type = "chain"

func chainKind() *Kind {
	return &Kind{
		Type:       TypeChain,
		Model:      "a tandem: its stages, gates and servers, in series before the run's server; a request rejected by any gate is rejected",
		RetryAfter: "the first time a retry passes every stage: exact, searched below the latest of its gate stages' own; with nginx (delay), Guava or Resilience4j before a gate that latest, possibly late by their delay",
		compound:   true,
		New: func(s *Spec, p Params, env Env) (Gate, error) {
			return newChain(s, p, env.Weights)
		},
	}
}

// StageServer is the type of a server stage of a chain.
const StageServer Type = "server"

// MaxStages bounds the length of a chain.
const MaxStages = 16

// Stage is one hop of a chain: a gate (the limiter fields) or a server.
type Stage struct {
	Spec
	Workers   int     `json:"workers,omitempty"`
	ServiceMS float64 `json:"service_ms,omitempty"`
}

// MarshalJSON writes the stage as its gate's object, or as a server's
// {"type": "server", "workers": 2, "service_ms": 4}.
func (st Stage) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	st.Spec.appendFields(&b)
	if st.Workers != 0 {
		b.WriteString(`,"workers":`)
		writeJSON(&b, st.Workers)
	}
	if st.ServiceMS != 0 {
		b.WriteString(`,"service_ms":`)
		writeJSON(&b, st.ServiceMS)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a gate stage's or a server stage's object.
func (st *Stage) UnmarshalJSON(data []byte) error {
	*st = Stage{}
	return st.Spec.decodeFields(data, func(key string, raw json.RawMessage) (bool, error) {
		switch key {
		case "workers":
			return true, json.Unmarshal(raw, &st.Workers)
		case "service_ms":
			return true, json.Unmarshal(raw, &st.ServiceMS)
		}
		return false, nil
	})
}

// IsServer reports whether the stage is a server.
func (st *Stage) IsServer() bool { return st.Type == StageServer }

// ServerSpec is a server stage's model (its deadline is unused).
func (st *Stage) ServerSpec() server.Spec {
	return server.Spec{Workers: st.Workers, ServiceMS: st.ServiceMS, DeadlineMS: server.DefaultDeadlineMS}
}

// checkChainFields refuses unknown keys of a chain and of its stages.
func checkChainFields(path string, keys map[string]json.RawMessage) field.List {
	var errs field.List
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if k != "type" && k != "name" && k != "stages" {
			errs.Add(field.Join(path, k), "is not a field of a chain (fields: type, name, stages)")
		}
	}
	var stages []json.RawMessage
	if raw, ok := keys["stages"]; !ok {
		errs.Add(field.Join(path, "stages"), "is required: a list of gates and servers")
		return errs
	} else if err := json.Unmarshal(raw, &stages); err != nil {
		errs.Add(field.Join(path, "stages"), "must be a list of objects")
		return errs
	}
	for j, raw := range stages {
		sp := field.Index(field.Join(path, "stages"), j)
		var sk map[string]json.RawMessage
		if err := json.Unmarshal(raw, &sk); err != nil {
			errs.Add(sp, "must be an object")
			continue
		}
		var typ string
		if t, ok := sk["type"]; ok && json.Unmarshal(t, &typ) == nil && Type(typ) == StageServer {
			for _, k := range slices.Sorted(maps.Keys(sk)) {
				if k != "type" && k != "workers" && k != "service_ms" {
					errs.Add(field.Join(sp, k), "is not a field of a server stage (fields: type, workers, service_ms)")
				}
			}
			continue
		}
		errs = append(errs, CheckFields(sp, raw)...)
	}
	return errs
}

func (s *Spec) normalizeChain() {
	for j := range s.Stages {
		st := &s.Stages[j]
		if st.IsServer() {
			if st.Workers == 0 {
				st.Workers = server.DefaultWorkers
			}
			if st.ServiceMS == 0 {
				st.ServiceMS = server.DefaultServiceMS
			}
			continue
		}
		st.Spec.Normalize()
	}
}

func (s *Spec) validateChain(path string) field.List {
	var errs field.List
	if msg := field.Line(s.Name, MaxNameLen); msg != "" {
		errs.Add(field.Join(path, "name"), "%s", msg)
	}
	for _, p := range s.paramOrder() {
		if len(s.Params[p]) > 0 {
			errs.Add(field.Join(path, p), "a chain has no parameters of its own: give them to its stages")
		}
	}
	for _, o := range s.optionOrder() {
		if s.Options[o] != "" {
			errs.Add(field.Join(path, o), "a chain has no %s of its own: give them to its stages", o)
		}
	}
	sp := field.Join(path, "stages")
	if len(s.Stages) == 0 || len(s.Stages) > MaxStages {
		errs.Add(sp, "needs 1 to %d stages (gates and servers)", MaxStages)
		return errs
	}
	swept := -1
	for j := range s.Stages {
		st := &s.Stages[j]
		p := field.Index(sp, j)
		if st.IsServer() {
			ss := st.ServerSpec()
			errs = append(errs, ss.Validate(p)...)
			continue
		}
		if st.Workers != 0 || st.ServiceMS != 0 {
			errs.Add(p, "workers and service_ms belong to server stages")
		}
		if k := st.Kind(); k != nil && !k.Stage {
			errs.Add(field.Join(p, "type"), "%q cannot be a stage of a chain (a gate: %v, or %q)", st.Type, chainGates(), StageServer)
			continue
		}
		if len(st.Stages) > 0 {
			errs.Add(field.Join(p, "stages"), "only a chain has stages")
		}
		if st.Spec.Replicated() {
			errs.Add(field.Join(p, ParamInstances), "a stage of a chain runs as one instance (give instances on a limiter of its own)")
			continue
		}
		e := st.Spec.Validate(p)
		errs = append(errs, e...)
		if len(e) == 0 && st.Spec.Count() > 1 {
			if swept >= 0 {
				errs.Add(p, "only one stage of a chain may list several values (%s already does)", field.Index(sp, swept))
			} else {
				swept = j
			}
		}
	}
	return errs
}

func chainGates() []Type {
	var out []Type
	for _, k := range Kinds() {
		if k.Stage {
			out = append(out, k.Type)
		}
	}
	return out
}

// SweptStage is the index of the stage whose values make the chain's
// points: the stage listing several values, else the first gate; -1 when
// the chain has no gate.
func (s *Spec) SweptStage() int {
	first := -1
	for j := range s.Stages {
		st := &s.Stages[j]
		if st.IsServer() {
			continue
		}
		if st.Spec.Count() > 1 {
			return j
		}
		if first < 0 {
			first = j
		}
	}
	return first
}

// StageParams are the values stage j runs with at the chain point p.
func (s *Spec) StageParams(j int, p Params) Params {
	if j == s.SweptStage() {
		return p
	}
	return s.Stages[j].Spec.Points()[0]
}

func (s *Spec) chainCount() int {
	if j := s.SweptStage(); j >= 0 {
		return s.Stages[j].Spec.Count()
	}
	return 1
}

func (s *Spec) chainSwept() string {
	if j := s.SweptStage(); j >= 0 {
		return s.Stages[j].Spec.Swept()
	}
	return ""
}

func (s *Spec) chainPoints() []Params {
	if j := s.SweptStage(); j >= 0 {
		return s.Stages[j].Spec.Points()
	}
	return []Params{{}}
}

// Chain runs a request through every stage in turn. Each stage sees its
// requests in non-decreasing time: gates release in order, and a FIFO
// server with a fixed service time finishes in order (its starts never
// decrease), so no re-sorting is needed between stages.
type Chain struct {
	_       cacheline.Pad    // a sweep's points run side by side (package cacheline)
	gates   []Gate           // nil at server stages
	servers []*server.Server // nil at gate stages
	lastMS  []float64        // when each gate stage was last offered a request

	// for the Retry-After: each gate stage as an Advisor and a releaser
	// (nil where it is not), each server stage's service time, and whether
	// every gate stage is both (the answer is then exact)
	advisors  []Advisor
	releasers []releaser
	serviceMS []float64
	exact     bool
	_         cacheline.Pad
}

func newChain(s *Spec, p Params, weights []float64) (*Chain, error) {
	n := len(s.Stages)
	c := &Chain{gates: make([]Gate, n), servers: make([]*server.Server, n), lastMS: make([]float64, n),
		advisors: make([]Advisor, n), releasers: make([]releaser, n), serviceMS: make([]float64, n), exact: true}
	for j := range s.Stages {
		st := &s.Stages[j]
		if st.IsServer() {
			c.servers[j] = server.New(st.ServerSpec())
			c.serviceMS[j] = st.ServiceMS
			continue
		}
		if k := st.Kind(); k == nil || !k.Stage {
			return nil, fmt.Errorf("stage %d: %s cannot be a stage of a chain", j, st.Type)
		}
		g, err := New(&st.Spec, s.StageParams(j, p), weights, nil)
		if err != nil {
			return nil, fmt.Errorf("stage %d: %w", j, err)
		}
		c.gates[j] = g
		c.advisors[j], _ = g.(Advisor)
		c.releasers[j], _ = g.(releaser)
		c.exact = c.exact && c.advisors[j] != nil && c.releasers[j] != nil
	}
	return c, nil
}

// Parts are the chain's gate stages (Composite): the loop finds their
// hooks.
func (c *Chain) Parts() []Gate {
	var parts []Gate
	for _, g := range c.gates {
		if g != nil {
			parts = append(parts, g)
		}
	}
	return parts
}

// Offer passes the request through the stages; it is rejected at the first
// gate that rejects it.
func (c *Chain) Offer(t float64, client int32) (float64, bool) {
	for j, g := range c.gates {
		if g == nil {
			_, t = c.servers[j].Serve(t)
			continue
		}
		var ok bool
		c.lastMS[j] = t
		if t, ok = g.Offer(t, client); !ok {
			return 0, false
		}
	}
	return t, true
}

// NextAdmitMS is the chain's Retry-After (Advisor): the first time at
// which a request of the client would pass every stage, nothing else
// arriving.
//
// An upper bound first: the latest of its gate stages' own, each asked at
// the later of t and the time that stage last saw a request. A request at
// that time passes every stage: it reaches stage j no earlier than then
// (gates release at or after the arrival, servers later) and no earlier
// than the stage's last request (stages see their requests in order);
// every gate's admission, with nothing else arriving, turns true once and
// stays true; so each stage admits it.
//
// The bound is exact when every stage before the last gate releases at
// the arrival (policers, no server before the last gate). Otherwise a
// shaper or a server ahead of a gate delays the retry, and the gate may
// admit it earlier at the chain's door than its own time says; where every
// gate stage can say when it would release a request without changing
// (releaser: the policers, the leaky bucket, x-time-rate) the answer is
// then searched below the bound: the first door time whose request,
// carried through the stages (a server's start by WouldStart plus its
// service time), every gate admits where it reaches it. That is exact
// too. A chain with another delaying gate (nginx with delay, Guava,
// Resilience4j) keeps the bound: honest, possibly late by the delays
// ahead of its latest gate.
func (c *Chain) NextAdmitMS(t float64, client int32) float64 {
	top := t
	for j, a := range c.advisors {
		if a != nil {
			top = max(top, a.NextAdmitMS(max(t, c.lastMS[j]), client))
		}
	}
	if !c.exact || top == t || math.IsInf(top, 1) {
		return top
	}
	return firstAdmitBelow(t, top, top, func(x float64) bool { return c.passes(x, client) })
}

// passes reports whether a request of client entering at x would pass
// every stage, nothing else arriving, without changing any.
func (c *Chain) passes(x float64, client int32) bool {
	y := x
	for j, a := range c.advisors {
		if c.gates[j] == nil {
			y = c.servers[j].WouldStart(y) + c.serviceMS[j]
			continue
		}
		y = max(y, c.lastMS[j])
		if a.NextAdmitMS(y, client) > y {
			return false
		}
		y = c.releasers[j].releaseAt(y, client)
	}
	return true
}
