package limiter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

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
		RetryAfter: "the latest of its gate stages' (each admits the retry then); exact when no shaper or server stage stands before the last gate, else possibly late by their delay",
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
	if len(s.Name) > MaxNameLen {
		errs.Add(field.Join(path, "name"), "is longer than %d characters", MaxNameLen)
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
	gates   []Gate           // nil at server stages
	servers []*server.Server // nil at gate stages
	lastMS  []float64        // when each gate stage was last offered a request
}

func newChain(s *Spec, p Params, weights []float64) (*Chain, error) {
	c := &Chain{gates: make([]Gate, len(s.Stages)), servers: make([]*server.Server, len(s.Stages)), lastMS: make([]float64, len(s.Stages))}
	for j := range s.Stages {
		st := &s.Stages[j]
		if st.IsServer() {
			c.servers[j] = server.New(st.ServerSpec())
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
	}
	return c, nil
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

// NextAdmitMS is the chain's Retry-After (Advisor): the latest of its gate
// stages' own, each asked at the later of t and the time that stage last
// saw a request (a later request reaches it no earlier).
//
// What it guarantees: a request of the client at the advised time, with
// nothing else arriving, passes every stage. It reaches stage j no
// earlier than the advised time (gates release at or after the arrival,
// servers later) and no earlier than the stage's last request (stages see
// their requests in order); every gate's admission, with nothing else
// arriving, turns true once and stays true; so each stage admits it.
//
// Where it is exact: when every stage before the last gate stage releases
// each request at its arrival (policers, and no server stage before the
// last gate), each gate sees the retry at its own time, and a retry before
// the advised time is refused by the stage whose time is the latest.
// Otherwise it can be late: a shaper or a server ahead of a gate delays
// the retry, so the gate may already admit it a little earlier at the
// chain's door than its own time says. A gate stage that cannot advise
// (none among the registered stage gates) adds nothing: the answer is
// then only a lower bound.
func (c *Chain) NextAdmitMS(t float64, client int32) float64 {
	n := t
	for j, g := range c.gates {
		if a, ok := g.(Advisor); ok {
			n = max(n, a.NextAdmitMS(max(t, c.lastMS[j]), client))
		}
	}
	return n
}
