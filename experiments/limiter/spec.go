package limiter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/field"
)

// Names of the parameters the built-in gates share (each gate's Kind lists
// the ones it takes).
const (
	ParamRate   = "rate_rps"
	ParamBurst  = "burst"
	ParamQueue  = "queue"
	ParamLimit  = "limit"
	ParamWindow = "window_ms"
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
	MaxNameLen    = 100
)

// The parameters the built-in gates share.
var (
	rateParam = Param{Name: ParamRate, Admits: AdmitsLarger, Column: true, Label: "Rate", Unit: "req/s", Units: "requests/s",
		Min: MinRateRPS, Max: MaxRateRPS, Doc: "tokens (or releases) per second"}
	burstParam = Param{Name: ParamBurst, Admits: AdmitsLarger, Column: true, Label: "Burst", Unit: "requests", Integer: true,
		Min: 1, Max: MaxSize, Doc: "bucket size: requests admitted back to back"}
	queueParam = Param{Name: ParamQueue, Admits: AdmitsLarger, Column: true, Label: "Queue", Unit: "requests", Integer: true,
		Min: 1, Max: MaxSize, Doc: "requests waiting for their release, at most"}
	// A limit of 0 refuses every request (the seed lab's Post 2 runs
	// round(capacity × deadline) = 0); every gate taking limitParam does.
	limitParam = Param{Name: ParamLimit, Admits: AdmitsLarger, Column: true, Label: "Limit", Unit: "requests", Integer: true,
		Min: 0, Max: MaxSize, Doc: "requests per window (or in the system); 0 refuses every request"}
	windowParam = Param{Name: ParamWindow, Admits: AdmitsSmaller, Column: true, Label: "Window", Unit: "ms",
		Min: MinWindowMS, Max: MaxWindowMS, Default: DefaultWindow, Doc: "window length"}
)

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
// expands to the cartesian product of those values. In JSON its parameters
// and options are keys of the limiter object beside type and name:
// {"type": "token-bucket", "rate_rps": 100, "burst": [1, 2, 4]}.
type Spec struct {
	Type    Type
	Name    string            // label in results; defaults to the type
	Params  map[string]Values // values of each parameter, by name
	Options map[string]string // word-valued settings, by name
	Stages  []Stage           // chain only
}

// Kind is the spec's registry row (nil for an unknown type).
func (s *Spec) Kind() *Kind {
	k, _ := Lookup(s.Type)
	return k
}

// Label is the limiter's name in results.
func (s *Spec) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return string(s.Type)
}

// ValuesOf is the list of values of a parameter (nil when not given).
func (s *Spec) ValuesOf(param string) Values { return s.Params[param] }

// SetValues sets the values of a parameter.
func (s *Spec) SetValues(param string, vs Values) {
	if s.Params == nil {
		s.Params = map[string]Values{}
	}
	s.Params[param] = vs
}

// Option is the value of a word-valued setting ("" when not given).
func (s *Spec) Option(name string) string { return s.Options[name] }

// SetOption sets a word-valued setting.
func (s *Spec) SetOption(name, v string) {
	if s.Options == nil {
		s.Options = map[string]string{}
	}
	s.Options[name] = v
}

// MarshalJSON writes type, name, the parameters in the kind's order, the
// options and the stages, leaving out what is not given.
func (s Spec) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	s.appendFields(&b)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// appendFields writes the object's opening brace and fields, without the
// closing brace (a Stage adds its own).
func (s *Spec) appendFields(b *bytes.Buffer) {
	b.WriteString(`{"type":`)
	writeJSON(b, string(s.Type))
	if s.Name != "" {
		b.WriteString(`,"name":`)
		writeJSON(b, s.Name)
	}
	for _, name := range s.paramOrder() {
		if vs := s.Params[name]; len(vs) > 0 {
			b.WriteString(`,"` + name + `":`)
			writeJSON(b, []float64(vs))
		}
	}
	for _, name := range s.optionOrder() {
		if v := s.Options[name]; v != "" {
			b.WriteString(`,"` + name + `":`)
			writeJSON(b, v)
		}
	}
	if len(s.Stages) > 0 {
		b.WriteString(`,"stages":`)
		writeJSON(b, s.Stages)
	}
}

func writeJSON(b *bytes.Buffer, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("limiter: marshal %T: %v", v, err)) // plain data cannot fail
	}
	b.Write(out)
}

// paramOrder is the kind's parameters in order, then any others by name.
func (s *Spec) paramOrder() []string {
	var names []string
	if k := s.Kind(); k != nil {
		names = k.ParamNames()
	}
	for _, p := range ReplicaParams() {
		if len(s.Params[p.Name]) > 0 {
			names = append(names, p.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Params)) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

func (s *Spec) optionOrder() []string {
	var names []string
	if k := s.Kind(); k != nil {
		for _, o := range k.Options {
			names = append(names, o.Name)
		}
	}
	for _, o := range ReplicaOptions() {
		if s.Options[o.Name] != "" {
			names = append(names, o.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Options)) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// UnmarshalJSON reads a limiter object. A key that is no parameter or
// option of any registered type is an unknown field; CheckFields says which
// keys the object's own type takes.
func (s *Spec) UnmarshalJSON(data []byte) error {
	*s = Spec{}
	return s.decodeFields(data, nil)
}

// decodeFields reads the keys of a limiter object; extra handles keys that
// are not a spec's (a stage's workers and service_ms), reporting whether it
// took the key.
func (s *Spec) decodeFields(data []byte, extra func(key string, raw json.RawMessage) (bool, error)) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return &json.UnmarshalTypeError{Value: jsonKind(bytes.TrimSpace(data)), Type: reflect.TypeFor[Spec]()}
	}
	if keys == nil {
		return nil // null
	}
	params, options := AllParams(), AllOptions()
	var first error
	fail := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		raw := keys[key]
		switch {
		case key == "type":
			var t string
			if err := json.Unmarshal(raw, &t); err != nil {
				fail(fieldTypeError(err, key))
			}
			s.Type = Type(t)
		case key == "name":
			if err := json.Unmarshal(raw, &s.Name); err != nil {
				fail(fieldTypeError(err, key))
			}
		case key == "stages":
			if err := json.Unmarshal(raw, &s.Stages); err != nil {
				fail(fieldTypeError(err, key))
			}
		case slices.ContainsFunc(params, func(p Param) bool { return p.Name == key }), isReplicaParam(key):
			var vs Values
			if err := vs.UnmarshalJSON(raw); err != nil {
				fail(fieldTypeError(err, key))
			}
			s.SetValues(key, vs)
		case slices.ContainsFunc(options, func(o Option) bool { return o.Name == key }), isReplicaOption(key):
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				fail(fieldTypeError(err, key))
			}
			s.SetOption(key, v)
		default:
			took := false
			if extra != nil {
				var err error
				if took, err = extra(key, raw); err != nil {
					fail(fieldTypeError(err, key))
				}
			}
			if !took {
				fail(fmt.Errorf("json: unknown field %q", key))
			}
		}
	}
	return first
}

// fieldTypeError puts key in front of the field a type error names, the way
// encoding/json names struct fields ("stages.burst").
func fieldTypeError(err error, key string) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		out := *te
		out.Field = key
		if te.Field != "" {
			out.Field = key + "." + te.Field
		}
		return &out
	}
	return err
}

// Normalize fills defaults: parameters left out that have a default
// (window_ms 1000), options left out (their first choice).
func (s *Spec) Normalize() {
	k := s.Kind()
	if k == nil {
		return
	}
	if k.compound {
		s.normalizeChain()
		return
	}
	for _, p := range k.Params {
		if p.optional() && len(s.Params[p.Name]) == 0 {
			s.SetValues(p.Name, Values{p.Default})
		}
	}
	for _, o := range k.Options {
		if s.Options[o.Name] == "" {
			s.SetOption(o.Name, o.Choices[0])
		}
	}
	s.normalizeReplicas()
}

// CheckFields refuses keys of a raw limiter object that its type does not
// take.
func CheckFields(path string, raw json.RawMessage) field.List {
	keys, k, errs := kinds.Object(builtinKinds, path, raw, "limiter")
	if errs != nil {
		return errs
	}
	if k.compound {
		return checkChainFields(path, keys)
	}
	allowed := k.Fields()
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		if slices.Contains(allowed, key) || isReplicaKey(key) {
			continue
		}
		msg := fmt.Sprintf("is not a parameter of %s (parameters: %v)", k.Type, k.ParamNames())
		if types := TypesWith(key); len(types) > 0 {
			msg += fmt.Sprintf("; %s belongs to %v", key, types)
		}
		errs.Add(field.Join(path, key), "%s", msg)
	}
	return errs
}

// Validate checks the spec; path is its own path in the config.
func (s *Spec) Validate(path string) field.List {
	var errs field.List
	k := s.Kind()
	if k == nil {
		errs.Add(field.Join(path, "type"), "unknown limiter %q (one of %v)", s.Type, Types())
		return errs
	}
	if k.compound {
		return s.validateChain(path)
	}
	if len(s.Stages) > 0 {
		errs.Add(field.Join(path, "stages"), "only a chain has stages")
	}
	if msg := field.Line(s.Name, MaxNameLen); msg != "" {
		errs.Add(field.Join(path, "name"), "%s", msg)
	}
	errs = append(errs, s.validateReplicas(path, k)...)
	for _, name := range s.paramOrder() {
		if _, ok := k.Param(name); !ok && len(s.Params[name]) > 0 && !isReplicaParam(name) {
			errs.Add(field.Join(path, name), "is not a parameter of %s (parameters: %v)", s.Type, k.ParamNames())
		}
	}
	for i := range k.Params {
		p := &k.Params[i]
		vs := s.Params[p.Name]
		pp := field.Join(path, p.Name)
		if len(vs) == 0 && !p.optional() {
			errs.Add(pp, "is required: give a value or a list of values")
			continue
		}
		checkValues(&errs, pp, p, vs)
	}
	for _, name := range s.optionOrder() {
		v := s.Options[name]
		if v == "" {
			continue
		}
		o, ok := k.Option(name)
		if !ok && isReplicaOption(name) {
			continue // validateReplicas
		}
		if !ok {
			errs.Add(field.Join(path, name), "is not a setting of %s (types that take it: %v)", s.Type, TypesWith(name))
			continue
		}
		if !slices.Contains(o.Choices, v) {
			errs.Add(field.Join(path, name), "must be %s", choiceList(o.Choices))
		}
	}
	return errs
}

// choiceList says "a" or "b", or one of "a", "b", "c".
func choiceList(cs []string) string {
	q := make([]string, len(cs))
	for i, c := range cs {
		q[i] = strconv.Quote(c)
	}
	if len(q) == 2 {
		return q[0] + " or " + q[1]
	}
	return "one of " + strings.Join(q, ", ")
}

// Params are one point's parameter values by name; a parameter the point's
// gate does not take is absent (Get gives 0).
type Params map[string]float64

// Get returns a parameter by name (0 when absent).
func (p Params) Get(param string) float64 { return p[param] }

// MarshalJSON writes the values in the order of AllParams (the results
// columns), then any others by name.
func (p Params) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	write := func(name string) {
		v, ok := p[name]
		if !ok {
			return
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeJSON(&b, name)
		b.WriteByte(':')
		writeJSON(&b, v)
	}
	var known []string
	for _, q := range AllParams() {
		known = append(known, q.Name)
		write(q.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(p)) {
		if !slices.Contains(known, name) {
			write(name)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Count is the number of points the spec expands to.
func (s *Spec) Count() int {
	k := s.Kind()
	if k == nil {
		return 0
	}
	if k.compound {
		return s.chainCount()
	}
	n := 1
	for _, p := range k.Params {
		n *= len(s.Params[p.Name])
	}
	for _, name := range s.replicaParamsUsed() {
		n *= len(s.Params[name])
	}
	return n
}

// Swept names the parameter a chart puts on its x axis: the innermost
// parameter given more than one value, else the limiter's size parameter.
func (s *Spec) Swept() string {
	k := s.Kind()
	if k == nil {
		return ""
	}
	if k.compound {
		return s.chainSwept()
	}
	names := append(k.ParamNames(), s.replicaParamsUsed()...)
	for i := len(names) - 1; i >= 0; i-- {
		if len(s.Params[names[i]]) > 1 {
			return names[i]
		}
	}
	return k.Size
}

// Points expands the spec to its parameter combinations, outer parameters
// varying slowest and values in the order given.
func (s *Spec) Points() []Params {
	k := s.Kind()
	if k == nil {
		return nil
	}
	if k.compound {
		return s.chainPoints()
	}
	out := []Params{{}}
	for _, name := range append(k.ParamNames(), s.replicaParamsUsed()...) {
		vs := s.Params[name]
		next := make([]Params, 0, len(out)*len(vs))
		for _, base := range out {
			for _, v := range vs {
				q := maps.Clone(base)
				q[name] = v
				next = append(next, q)
			}
		}
		out = next
	}
	return out
}

// New builds the gate of one point. weights has one entry per client (for
// per-client limiters); server is read by an admission gate. An optional
// parameter that p leaves out is at its row's default, as in a config
// that leaves it out (a sweep's points hold every parameter; a caller
// building a gate by hand need not know a parameter added since).
func New(s *Spec, p Params, weights []float64, server Occupancy) (Gate, error) {
	k := s.Kind()
	if k == nil {
		return nil, fmt.Errorf("unknown limiter %q", s.Type)
	}
	if s.Replicated() {
		return newReplicated(s, k, withDefaults(k, p), Env{Weights: weights, Server: server})
	}
	return k.New(s, withDefaults(k, p), Env{Weights: weights, Server: server})
}

// withDefaults is p, or a copy of it with the optional parameters it
// leaves out at their defaults.
func withDefaults(k *Kind, p Params) Params {
	var out Params
	for i := range k.Params {
		q := &k.Params[i]
		if _, ok := p[q.Name]; ok || !q.optional() {
			continue
		}
		if out == nil {
			out = maps.Clone(p)
			if out == nil {
				out = Params{}
			}
		}
		out[q.Name] = q.Default
	}
	if out == nil {
		return p
	}
	return out
}

// WithDefaults is p with the optional parameters of typ's gate it leaves
// out at their registry defaults (p itself when none is missing or typ is
// unknown): the values a gate of typ runs with.
func WithDefaults(typ Type, p Params) Params {
	k, ok := Lookup(typ)
	if !ok {
		return p
	}
	return withDefaults(k, p)
}

// FormatParams writes the point's parameters as "rate_rps=100 burst=20".
func FormatParams(typ Type, p Params) string {
	var names []string
	if k, ok := Lookup(typ); ok && !k.compound {
		names = k.ParamNames()
		for _, q := range ReplicaParams() {
			if _, ok := p[q.Name]; ok {
				names = append(names, q.Name)
			}
		}
	} else {
		names = presentParams(p)
	}
	var b []byte
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

// presentParams lists the parameters of p in results-column order.
func presentParams(p Params) []string {
	var out []string
	for _, q := range AllParams() {
		if _, ok := p[q.Name]; ok {
			out = append(out, q.Name)
		}
	}
	return out
}

// ArrivalCurve is the arrival curve of the output of a spec's gate at
// point p whatever its input, with clients clients sharing it (a keyed
// gate's curve times the clients), or ok=false for a gate without one (see
// Kind.Curve).
func ArrivalCurve(s *Spec, p Params, clients int) (c calculus.Curve, ok bool) {
	k := s.Kind()
	if k == nil || k.Curve == nil {
		return calculus.Curve{}, false
	}
	if s.Replicated() {
		return replicatedCurve(s, k, p, clients)
	}
	return k.Curve(p).Times(s.keys(clients)), true
}

// keys is how many copies of its Curve and Nominal a spec's gate runs: the
// clients when it is keyed, else 1.
func (s *Spec) keys(clients int) float64 {
	if k := s.Kind(); k != nil && k.Keyed != nil && k.Keyed(s) && clients > 1 {
		return float64(clients)
	}
	return 1
}

// GateDelayBoundMS bounds the time a gate holds a request before release
// (0 for policers; see Kind.DelayBoundMS); ok=false when the gate waits
// without a bound (Kind.Waits).
func GateDelayBoundMS(s *Spec, p Params) (float64, bool) {
	k := s.Kind()
	if k == nil {
		return 0, true
	}
	if s.Replicated() && s.Options[OptionSharing] == SharingCentral {
		return storeDelayBoundMS(s, k, p)
	}
	if k.DelayBoundMS == nil {
		return 0, !k.Waits
	}
	return k.DelayBoundMS(s, p), true
}

// Nominal is what a point's settings promise about the releases in any
// window of windowMS, with clients clients sharing the gate, or ok=false
// for a gate that promises no rate (see Kind.Nominal).
func Nominal(s *Spec, p Params, clients int, windowMS float64) (float64, bool) {
	k := s.Kind()
	if k == nil || k.Nominal == nil {
		return 0, false
	}
	return k.Nominal(p, windowMS) * s.keys(clients), true
}

// LagMS is the longest the spec's points hold a request before releasing
// it: so long do its series run past the end of the arrival window. A chain
// adds up its stages (at their largest values); the wait at its server
// stages is not known before the run.
func (s *Spec) LagMS(points []Params) float64 {
	k := s.Kind()
	if k == nil {
		return 0
	}
	if k.compound {
		lag := 0.0
		for i := range s.Stages {
			if st := &s.Stages[i].Spec; !s.Stages[i].IsServer() {
				lag += st.LagMS(st.Points())
			}
		}
		return lag
	}
	lag := 0.0
	if k.DelayBoundMS != nil {
		for _, p := range points {
			lag = math.Max(lag, k.DelayBoundMS(s, p))
		}
	}
	for _, p := range points {
		lag = math.Max(lag, p.Get(ParamStoreRTT)) // a central store's round trip
	}
	return lag
}

// HasShares reports whether a limiter type splits its rate between clients
// (and so takes "shares").
func HasShares(typ Type) bool {
	k, ok := Lookup(typ)
	return ok && k.PerClient
}

// ParamsOf lists the parameters a limiter type takes, outer sweep dimension first.
func ParamsOf(typ Type) []string {
	if k, ok := Lookup(typ); ok {
		return k.ParamNames()
	}
	return nil
}

// Doc is a one-line description of a limiter type.
func Doc(typ Type) string {
	if k, ok := Lookup(typ); ok {
		return k.Model
	}
	return ""
}

// checkValues checks a parameter's values given at path pp: at most
// MaxValues of them, each by the parameter's own check (a list's errors
// name the value's index).
func checkValues(errs *field.List, pp string, p *Param, vs []float64) {
	if len(vs) > MaxValues {
		errs.Add(pp, "at most %d values", MaxValues)
		return
	}
	for i, v := range vs {
		vp := pp
		if len(vs) > 1 {
			vp = field.Index(pp, i)
		}
		if msg := p.Check(v); msg != "" {
			errs.Add(vp, "%s", msg)
		}
	}
}

// List is one parameter list of a limiter that multiplies its points: its
// path under the limiter ("burst", "stages[1].rate_rps") and its length.
type List struct {
	Path string
	N    int
}

// Lists are the limiter's lists of more than one value, in the order its
// points vary (Points); their lengths multiply to Count.
func (s *Spec) Lists() []List {
	k := s.Kind()
	if k == nil {
		return nil
	}
	if k.compound {
		j := s.SweptStage()
		if j < 0 {
			return nil
		}
		var out []List
		for _, l := range s.Stages[j].Spec.Lists() {
			out = append(out, List{Path: fmt.Sprintf("stages[%d].%s", j, l.Path), N: l.N})
		}
		return out
	}
	var out []List
	for _, p := range k.Params {
		if n := len(s.Params[p.Name]); n > 1 {
			out = append(out, List{Path: p.Name, N: n})
		}
	}
	for _, name := range s.replicaParamsUsed() {
		if n := len(s.Params[name]); n > 1 {
			out = append(out, List{Path: name, N: n})
		}
	}
	return out
}
