package limiter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"

	"github.com/ratelab/ratelab/experiments/field"
)

// Limiter types.
const (
	TypeNone           = "none"
	TypeTokenBucket    = "token-bucket"
	TypeLeakyBucket    = "leaky-bucket"
	TypeAdmission      = "admission"
	TypeFixedWindow    = "fixed-window"
	TypeSlidingCounter = "sliding-window-counter"
	TypeSlidingLog     = "sliding-window-log"
	TypePerClient      = "per-client-token-bucket"
	TypeHierarchical   = "hierarchical-token-bucket"
)

// Shares of a per-client limiter.
const (
	SharesEqual    = "equal"
	SharesWeighted = "weighted"
)

// Limits on parameters.
const (
	MinRateRPS    = 0.001 // one request per 1000 s
	MinWindowMS   = 0.001
	MaxRateRPS    = 1_000_000
	MaxSize       = 10_000_000 // burst, queue and limit
	MaxWindowMS   = 86_400_000
	MaxValues     = 1000 // values of one parameter
	DefaultWindow = 1000
)

// Param names, in the order a limiter's sweep nests them (outer first).
const (
	ParamRate   = "rate_rps"
	ParamBurst  = "burst"
	ParamQueue  = "queue"
	ParamLimit  = "limit"
	ParamWindow = "window_ms"
)

// AllParams lists every parameter name in column order.
var AllParams = []string{ParamRate, ParamBurst, ParamQueue, ParamLimit, ParamWindow}

type typeInfo struct {
	params  []string // swept parameters, outer first
	primary string   // the "size" of the limiter: what a burst sweep varies
	doc     string
}

var types = map[string]typeInfo{
	TypeNone:           {nil, "", "no limiter: every request goes to the server at once"},
	TypeTokenBucket:    {[]string{ParamRate, ParamBurst}, ParamBurst, "token bucket (rate_rps, burst), starts full; policer"},
	TypeLeakyBucket:    {[]string{ParamRate, ParamQueue}, ParamQueue, "leaky bucket (rate_rps, queue): paced releases; shaper"},
	TypeAdmission:      {[]string{ParamLimit}, ParamLimit, "concurrency limit: rejects when limit requests are in the system"},
	TypeFixedWindow:    {[]string{ParamLimit, ParamWindow}, ParamLimit, "fixed window: limit per aligned window_ms"},
	TypeSlidingCounter: {[]string{ParamLimit, ParamWindow}, ParamLimit, "sliding-window counter (approximate): limit per window_ms"},
	TypeSlidingLog:     {[]string{ParamLimit, ParamWindow}, ParamLimit, "sliding-window log (exact): limit per window_ms"},
	TypePerClient:      {[]string{ParamRate, ParamBurst}, ParamBurst, "one token bucket per client, rate and burst split by equal or weighted shares"},
	TypeChain:          {nil, "", "a tandem: gates and servers in series before the run's server (see TypeChain)"},
	TypeHierarchical:   {[]string{ParamRate, ParamBurst}, ParamBurst, "work-conserving per-client buckets: guaranteed shares, unused share lent to busy clients under a global (rate_rps, burst) bucket"},
}

// HasShares reports whether a limiter type splits its rate between clients
// (and so takes "shares").
func HasShares(typ string) bool { return typ == TypePerClient || typ == TypeHierarchical }

// Types lists the limiter types in a stable order.
func Types() []string {
	return []string{TypeTokenBucket, TypeLeakyBucket, TypeAdmission, TypeFixedWindow, TypeSlidingCounter, TypeSlidingLog, TypePerClient, TypeHierarchical, TypeChain, TypeNone}
}

// Doc is a one-line description of a limiter type.
func Doc(typ string) string { return types[typ].doc }

// ParamsOf lists the parameters a limiter type takes, outer sweep dimension first.
func ParamsOf(typ string) []string { return types[typ].params }

// Values is a list of parameter values; JSON accepts a number or a list.
type Values []float64

// UnmarshalJSON takes 5 or [1, 2, 4]. Anything else is a
// *json.UnmarshalTypeError, so the decoder names the field.
func (v *Values) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] != '[' {
		var x float64
		if err := json.Unmarshal(b, &x); err != nil {
			return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[Values]()}
		}
		*v = Values{x}
		return nil
	}
	var xs []float64
	if err := json.Unmarshal(b, &xs); err != nil {
		return &json.UnmarshalTypeError{Value: "a list of other things", Type: reflect.TypeFor[Values]()}
	}
	*v = xs
	return nil
}

// jsonKind names the kind of a JSON value from its first byte.
func jsonKind(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '"':
		return "string"
	case b[0] == '{':
		return "object"
	case b[0] == 't' || b[0] == 'f':
		return "bool"
	}
	return "number"
}

// Spec is one limiter of a sweep with the values of its parameters; it
// expands to the cartesian product of those values.
type Spec struct {
	Type     string  `json:"type"`
	Name     string  `json:"name,omitempty"` // label in results; defaults to the type
	RateRPS  Values  `json:"rate_rps,omitempty"`
	Burst    Values  `json:"burst,omitempty"`
	Queue    Values  `json:"queue,omitempty"`
	Limit    Values  `json:"limit,omitempty"`
	WindowMS Values  `json:"window_ms,omitempty"`
	Shares   string  `json:"shares,omitempty"` // per-client: equal (default) or weighted
	Stages   []Stage `json:"stages,omitempty"` // chain only
}

// Label is the limiter's name in results.
func (s *Spec) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Type
}

// ValuesOf is the list of values of a parameter (nil for a name that is not
// a parameter).
func (s *Spec) ValuesOf(param string) *Values {
	switch param {
	case ParamRate:
		return &s.RateRPS
	case ParamBurst:
		return &s.Burst
	case ParamQueue:
		return &s.Queue
	case ParamLimit:
		return &s.Limit
	case ParamWindow:
		return &s.WindowMS
	}
	return nil
}

// Normalize fills defaults (window_ms 1000, equal shares).
func (s *Spec) Normalize() {
	if s.Type == TypeChain {
		s.normalizeChain()
		return
	}
	if slices.Contains(types[s.Type].params, ParamWindow) && len(s.WindowMS) == 0 {
		s.WindowMS = Values{DefaultWindow}
	}
	if HasShares(s.Type) && s.Shares == "" {
		s.Shares = SharesEqual
	}
}

// CheckFields refuses keys of a raw limiter object that its type does not take.
func CheckFields(path string, raw json.RawMessage) field.List {
	var errs field.List
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		errs.Add(path, "must be an object")
		return errs
	}
	var typ string
	if t, ok := keys["type"]; !ok {
		errs.Add(field.Join(path, "type"), "is required (one of %v)", Types())
		return errs
	} else if err := json.Unmarshal(t, &typ); err != nil {
		errs.Add(field.Join(path, "type"), "must be a string")
		return errs
	}
	info, ok := types[typ]
	if !ok {
		errs.Add(field.Join(path, "type"), "unknown limiter %q (one of %v)", typ, Types())
		return errs
	}
	if typ == TypeChain {
		return checkChainFields(path, keys)
	}
	allowed := append([]string{"type", "name"}, info.params...)
	if HasShares(typ) {
		allowed = append(allowed, "shares")
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !slices.Contains(allowed, k) {
			errs.Add(field.Join(path, k), "is not a parameter of %s (parameters: %v)", typ, info.params)
		}
	}
	return errs
}

// Validate checks the spec; path is its own path in the config.
func (s *Spec) Validate(path string) field.List {
	var errs field.List
	info, ok := types[s.Type]
	if !ok {
		errs.Add(field.Join(path, "type"), "unknown limiter %q (one of %v)", s.Type, Types())
		return errs
	}
	if s.Type == TypeChain {
		return s.validateChain(path)
	}
	if len(s.Stages) > 0 {
		errs.Add(field.Join(path, "stages"), "only a chain has stages")
	}
	if len(s.Name) > 100 {
		errs.Add(field.Join(path, "name"), "is longer than 100 characters")
	}
	for _, p := range AllParams {
		vs := *s.ValuesOf(p)
		pp := field.Join(path, p)
		if !slices.Contains(info.params, p) {
			if len(vs) > 0 {
				errs.Add(pp, "is not a parameter of %s (parameters: %v)", s.Type, info.params)
			}
			continue
		}
		if len(vs) == 0 {
			errs.Add(pp, "is required: give a value or a list of values")
			continue
		}
		if len(vs) > MaxValues {
			errs.Add(pp, "at most %d values", MaxValues)
			continue
		}
		for i, v := range vs {
			vp := pp
			if len(vs) > 1 {
				vp = field.Index(pp, i)
			}
			if msg := checkValue(p, v); msg != "" {
				errs.Add(vp, "%s", msg)
			}
		}
	}
	switch s.Shares {
	case "", SharesEqual, SharesWeighted:
		if s.Shares != "" && !HasShares(s.Type) {
			errs.Add(field.Join(path, "shares"), "only a per-client limiter has shares")
		}
	default:
		errs.Add(field.Join(path, "shares"), "must be %q or %q", SharesEqual, SharesWeighted)
	}
	return errs
}

func checkValue(param string, v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "must be a finite number"
	}
	switch param {
	case ParamRate:
		if v < MinRateRPS || v > MaxRateRPS {
			return fmt.Sprintf("must be between %g and %d requests/s", MinRateRPS, MaxRateRPS)
		}
	case ParamBurst, ParamQueue, ParamLimit:
		if v != math.Trunc(v) {
			return "must be a whole number"
		}
		if v < 1 {
			return "must be at least 1"
		}
		if v > MaxSize {
			return fmt.Sprintf("must be at most %d", MaxSize)
		}
	case ParamWindow:
		if v < MinWindowMS || v > MaxWindowMS {
			return fmt.Sprintf("must be between %g and %d ms", MinWindowMS, MaxWindowMS)
		}
	}
	return ""
}

// Params are one point's parameter values; unused ones are 0.
type Params struct {
	RateRPS  float64 `json:"rate_rps,omitempty"`
	Burst    float64 `json:"burst,omitempty"`
	Queue    float64 `json:"queue,omitempty"`
	Limit    float64 `json:"limit,omitempty"`
	WindowMS float64 `json:"window_ms,omitempty"`
}

// Get returns a parameter by name.
func (p *Params) Get(param string) float64 {
	switch param {
	case ParamRate:
		return p.RateRPS
	case ParamBurst:
		return p.Burst
	case ParamQueue:
		return p.Queue
	case ParamLimit:
		return p.Limit
	case ParamWindow:
		return p.WindowMS
	}
	return 0
}

func (p *Params) set(param string, v float64) {
	switch param {
	case ParamRate:
		p.RateRPS = v
	case ParamBurst:
		p.Burst = v
	case ParamQueue:
		p.Queue = v
	case ParamLimit:
		p.Limit = v
	case ParamWindow:
		p.WindowMS = v
	}
}

// Count is the number of points the spec expands to.
func (s *Spec) Count() int {
	if s.Type == TypeChain {
		return s.chainCount()
	}
	n := 1
	for _, p := range types[s.Type].params {
		n *= len(*s.ValuesOf(p))
	}
	return n
}

// Swept names the parameter a chart puts on its x axis: the innermost
// parameter given more than one value, else the limiter's size parameter.
func (s *Spec) Swept() string {
	if s.Type == TypeChain {
		return s.chainSwept()
	}
	info := types[s.Type]
	for i := len(info.params) - 1; i >= 0; i-- {
		if len(*s.ValuesOf(info.params[i])) > 1 {
			return info.params[i]
		}
	}
	return info.primary
}

// Points expands the spec to its parameter combinations, outer parameters
// varying slowest and values in the order given.
func (s *Spec) Points() []Params {
	if s.Type == TypeChain {
		return s.chainPoints()
	}
	params := types[s.Type].params
	out := []Params{{}}
	for _, p := range params {
		vs := *s.ValuesOf(p)
		next := make([]Params, 0, len(out)*len(vs))
		for _, base := range out {
			for _, v := range vs {
				q := base
				q.set(p, v)
				next = append(next, q)
			}
		}
		out = next
	}
	return out
}

// New builds the gate of one point. weights has one entry per client (for
// per-client limiters); server is read by an admission gate.
func New(s *Spec, p Params, weights []float64, server Occupancy) (Gate, error) {
	switch s.Type {
	case TypeChain:
		return newChain(s, p, weights)
	case TypeNone:
		return None{}, nil
	case TypeTokenBucket:
		return NewTokenBucket(p.RateRPS, p.Burst), nil
	case TypeLeakyBucket:
		return NewLeakyBucket(p.RateRPS, p.Queue), nil
	case TypeAdmission:
		return NewAdmission(int(p.Limit), server), nil
	case TypeFixedWindow:
		return NewFixedWindow(int(p.Limit), p.WindowMS), nil
	case TypeSlidingCounter:
		return NewSlidingWindowCounter(int(p.Limit), p.WindowMS), nil
	case TypeSlidingLog:
		return NewSlidingWindowLog(int(p.Limit), p.WindowMS), nil
	case TypePerClient, TypeHierarchical:
		w := weights
		if s.Shares != SharesWeighted {
			w = make([]float64, len(weights))
			for i := range w {
				w[i] = 1
			}
		}
		if s.Type == TypeHierarchical {
			return NewHierarchicalTokenBucket(p.RateRPS, p.Burst, w), nil
		}
		return NewPerClientTokenBucket(p.RateRPS, p.Burst, w), nil
	}
	return nil, fmt.Errorf("unknown limiter %q", s.Type)
}

// FormatParams writes the point's parameters as "rate_rps=100 burst=20".
func FormatParams(typ string, p Params) string {
	var b []byte
	names := types[typ].params
	if typ == TypeChain {
		names = formatChainParams(p)
	}
	for i, name := range names {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, name...)
		b = append(b, '=')
		b = strconv.AppendFloat(b, p.Get(name), 'g', -1, 64)
	}
	return string(b)
}
