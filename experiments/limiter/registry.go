package limiter

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/registry"
)

// Type names a kind of gate in a config ("token-bucket").
type Type string

// Param is one numeric parameter of a gate type: the JSON key of its
// values, what the form shows beside its input, the range the validator
// allows, and how results.csv prints it.
type Param struct {
	Name    string  // JSON key and results.csv column, unit last: "rate_rps"
	Label   string  // the form's label: "Rate"
	Unit    string  // for axes and the form: "req/s", "requests", "ms"
	Units   string  // in messages, when not Unit: "requests/s"
	Integer bool    // whole numbers only; printed without decimals
	Min     float64 // smallest allowed value
	Max     float64 // largest allowed value
	Default float64 // filled in when a config leaves it out (see Optional)
	// Optional: a config may leave the parameter out, for Default, even
	// when Default is 0 (a Default other than 0 is always optional; a
	// parameter with neither is required).
	Optional bool
	Doc      string // one line for help and the API docs
	// RangeNote says where the range comes from when a library sets it
	// ("redis_rate divides the period by the rate"); range errors end with it.
	RangeNote string
	// Admits says which way of the parameter's values admits more requests
	// (AdmitsLarger for a burst, rate, limit or queue; AdmitsSmaller for a
	// window or refresh period; AdmitsNone when neither does): the
	// recommendation's last ties prefer the less permissive setting
	// (experiments/decide). Every row states it (checkRow).
	Admits Admits
	// OneOf, when given, lists the only values allowed (a library's
	// units: envoy-ratelimit's unit_s); Check refuses the others.
	OneOf []float64
	// Column: results.csv has a column for the parameter in every run (the
	// parameters of the textbook gates); another parameter gets its column
	// only in the runs whose limiters take it.
	Column bool
}

// Admits is which way of a parameter's values admits more requests.
type Admits string

// The directions a parameter admits more in.
const (
	AdmitsLarger  Admits = "larger"  // a larger value admits more (burst, rate, limit, queue)
	AdmitsSmaller Admits = "smaller" // a smaller value admits more (a window or refresh period)
	AdmitsNone    Admits = "none"    // no direction admits more
)

// Permissive compares a and b as values of the parameter: +1 when a
// admits more than b, -1 when less, 0 when equal or without a direction.
func (p *Param) Permissive(a, b float64) int {
	if a == b {
		return 0
	}
	more := a > b
	switch p.Admits {
	case AdmitsLarger:
	case AdmitsSmaller:
		more = !more
	default:
		return 0
	}
	if more {
		return 1
	}
	return -1
}

func (p *Param) optional() bool { return p.Optional || p.Default != 0 }

// Check returns "" when v is an allowed value of the parameter, else what
// is allowed.
func (p *Param) Check(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "must be a finite number"
	}
	if p.Integer && v != math.Trunc(v) {
		return "must be a whole number"
	}
	msg := p.checkRange(v)
	if msg == "" && len(p.OneOf) > 0 && !slices.Contains(p.OneOf, v) {
		vs := make([]string, len(p.OneOf))
		for i, x := range p.OneOf {
			vs[i] = num(x)
		}
		msg = "must be one of " + strings.Join(vs, ", ")
	}
	if msg != "" && p.RangeNote != "" {
		msg += ": " + p.RangeNote
	}
	return msg
}

func (p *Param) checkRange(v float64) string {
	if p.Integer {
		if v < p.Min {
			return fmt.Sprintf("must be at least %s", num(p.Min))
		}
		if v > p.Max {
			return fmt.Sprintf("must be at most %s", num(p.Max))
		}
		return ""
	}
	if v < p.Min || v > p.Max {
		units := p.Units
		if units == "" {
			units = p.Unit
		}
		return fmt.Sprintf("must be between %s and %s %s", num(p.Min), num(p.Max), units)
	}
	return ""
}

// num prints a limit in its shortest decimal form, without an exponent.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Option is a non-numeric setting of a gate type, one of a fixed list of
// words (the first is the default). It is not swept.
type Option struct {
	Name    string
	Label   string
	Choices []string
	Doc     string
}

// Env is what a gate may read besides its parameters: the clients' weights
// (one per client of the workload) and the server's occupancy.
type Env struct {
	Weights []float64
	Server  Occupancy
}

// Kind is one gate type's row in the registry: everything the rest of the
// lab knows about the type. Validation, sweeps, results columns, the form,
// the API docs, chart units and reference lines, the bounds and the CLI help
// all read these rows; none of them switches on a type name.
type Kind struct {
	Type  Type
	Model string // one line: what the gate does
	// Params are the swept parameters, outer sweep dimension first.
	Params []Param
	// Options are the gate's word-valued settings (such as shares).
	Options []Option
	// Size is the parameter a chart puts on its x axis when nothing is
	// swept: what a burst sweep varies.
	Size string
	// Stage reports whether the gate may be a stage of a chain.
	Stage bool
	// Shaper reports whether the gate holds requests and releases them
	// paced at least 1000/rate_rps ms apart in arrival order, as a leaky
	// bucket does (else it is a policer: release at the arrival or reject).
	// The bounds pass the curves of its input through it.
	Shaper bool
	// ReadsServer reports whether the gate reads the run's server occupancy
	// (Env.Server); such a gate cannot be a stage of a chain.
	ReadsServer bool
	// PerClient reports whether the gate splits rate_rps and burst between
	// the clients by its shares option, so that every client's share of the
	// burst must hold at least one token.
	PerClient bool
	// CheckClients checks the spec against the workload's clients (their
	// weights, one per client) and names the field at fault under path;
	// nil: nothing to check.
	CheckClients func(s *Spec, path string, weights []float64) field.List
	// Example is a typical setting at about 100 requests/s: the decision
	// benchmark's case and the form's first values.
	Example Params
	// Keyed reports whether, under the spec's options, the gate keeps a full
	// bucket per client (nginx's key, Envoy's descriptor): Curve and Nominal
	// then describe one client's requests, and the aggregate of n clients is
	// n times them. nil: never keyed.
	Keyed func(s *Spec) bool
	// Waits reports that the gate holds requests with no bound on the wait
	// (it never refuses): its output obeys Curve, but no delay bound
	// exists, so a point through it has no end-to-end bound.
	Waits bool
	// New builds the gate of one point.
	New func(s *Spec, p Params, env Env) (Gate, error)
	// Curve is the arrival curve the gate's output obeys whatever its input
	// (requests and ms; see package calculus); nil for a gate without one.
	Curve func(p Params) calculus.Curve
	// FlowCurves are, for a gate that keys its clients, each client's
	// arrival curve (own) and that of all the other clients together
	// (cross) at the gate's output, for the per-flow bounds of clients
	// sharing a FIFO server (calculus.FIFODelay, calculus.BlindDelay);
	// weights are the workload's client weights. nil: no per-client curves.
	FlowCurves func(s *Spec, p Params, weights []float64) (own, cross []calculus.Curve)
	// DelayBoundMS bounds the time the gate holds a request before its
	// release; nil for policers (0).
	DelayBoundMS func(s *Spec, p Params) float64
	// Nominal is what the settings promise about the releases in any window
	// of windowMS: the reference line of the "most releases in any window"
	// chart; nil for gates that promise no rate.
	Nominal func(p Params, windowMS float64) float64
	// RetryAfter says, in one line, what the gate answers a refused
	// client as its Retry-After (its gates implement Advisor: the first
	// time a request of that client would pass if nothing else arrived);
	// "" for a gate that gives none (one that never refuses, or one that
	// cannot know: a concurrency limit depends on the server). Clients
	// that honour Retry-After (workload.Behaviour.RetryAfter) wait for it.
	RetryAfter string

	// Leases: the gate can run under sharing lease (a token bucket whose
	// rate and burst a lease retunes, leaseRetuner: token-bucket).
	Leases bool

	// Adaptive: the gate is an adaptive concurrency limit
	// (limiter.Adaptive): a run with one has the adaptive measures
	// (results.csv's limit_mean … columns, the run page's limit chart).
	Adaptive bool

	// compound kinds (chain) hold stages instead of parameters; chain.go
	// gives their sweep and validation.
	compound bool
}

// Param finds a parameter of the kind by name.
func (k *Kind) Param(name string) (*Param, bool) {
	i := slices.IndexFunc(k.Params, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return nil, false
	}
	return &k.Params[i], true
}

// ParamNames lists the kind's parameter names, outer sweep dimension first.
func (k *Kind) ParamNames() []string {
	out := make([]string, len(k.Params))
	for i := range k.Params {
		out[i] = k.Params[i].Name
	}
	return out
}

// Option finds an option of the kind by name.
func (k *Kind) Option(name string) (*Option, bool) {
	i := slices.IndexFunc(k.Options, func(o Option) bool { return o.Name == name })
	if i < 0 {
		return nil, false
	}
	return &k.Options[i], true
}

// Fields lists every JSON key a limiter object of this kind takes.
func (k *Kind) Fields() []string {
	out := []string{"type", "name"}
	if k.compound {
		return append(out, "stages")
	}
	out = append(out, k.ParamNames()...)
	for _, o := range k.Options {
		out = append(out, o.Name)
	}
	return out
}

// Compound reports whether the kind holds stages (a chain).
func (k *Kind) Compound() bool { return k.compound }

// The registry, in the order the form and the help list the types. Adding a
// gate type is its file (the gate and its Kind) and one line here.
func builtinKinds() []*Kind {
	return []*Kind{
		tokenBucketKind(),
		leakyBucketKind(),
		admissionKind(),
		fixedWindowKind(),
		slidingWindowCounterKind(),
		slidingWindowLogKind(),
		perClientTokenBucketKind(),
		hierarchicalTokenBucketKind(),
		gcraKind(),
		dualTokenBucketKind(),
		xTimeRateKind(),
		xTimeRatePerKeyKind(),
		redisRateKind(),
		uberRateLimitKind(),
		nginxLimitReqKind(),
		envoyLocalRateLimitKind(),
		envoyRatelimitKind(),
		guavaSmoothBurstyKind(),
		guavaSmoothWarmingUpKind(),
		resilience4jKind(),
		netflixAIMDKind(),
		netflixVegasKind(),
		netflixGradient2Kind(),
		envoyAdaptiveKind(),
		failsafeAdaptiveKind(),
		gubernatorKind(),
		chainKind(),
		noneKind(),
	}
}

// kinds is the registry; builtinKinds fills it on first use.
var kinds registry.Table[Type, *Kind]

// Key is the row's type name.
func (k *Kind) Key() Type { return k.Type }

// Kinds lists the registered gate types.
func Kinds() []*Kind { return kinds.Rows(builtinKinds) }

// Lookup finds a gate type's row.
func Lookup(t Type) (*Kind, bool) { return kinds.Lookup(builtinKinds, t) }

// Register adds a gate type to the registry (after the built-in ones) and
// returns the function that removes it again. It is for tests and programs
// that embed the engine; a gate of the lab itself is a line of the registry
// list. It panics on a type that is already registered or a row without a
// constructor.
func Register(k *Kind) (unregister func()) {
	if k.New == nil {
		panic(fmt.Sprintf("limiter: register %q: a kind needs New", k.Type))
	}
	if err := checkRow(k, Kinds()); err != nil {
		panic(fmt.Sprintf("limiter: register %q: %v", k.Type, err))
	}
	return kinds.Register(builtinKinds, k)
}

// checkRow checks a row against itself and the rows before it: options
// have choices, defaults lie in their ranges, Size names a parameter, and a
// parameter name that other types take has their unit and whole-or-real
// kind (one results.csv column and one axis unit serve them all; labels
// and docs may differ).
func checkRow(k *Kind, before []*Kind) error {
	for _, o := range k.Options {
		if len(o.Choices) == 0 {
			return fmt.Errorf("option %s has no choices", o.Name)
		}
	}
	for _, p := range k.Params {
		switch p.Admits {
		case AdmitsLarger, AdmitsSmaller, AdmitsNone:
		default:
			return fmt.Errorf("parameter %s: Admits must be %q, %q or %q, not %q", p.Name, AdmitsLarger, AdmitsSmaller, AdmitsNone, p.Admits)
		}
		if p.Default != 0 && p.Check(p.Default) != "" {
			return fmt.Errorf("parameter %s: default %g %s", p.Name, p.Default, p.Check(p.Default))
		}
		for _, b := range before {
			if q, ok := b.Param(p.Name); ok && (q.Unit != p.Unit || q.Integer != p.Integer) {
				return fmt.Errorf("parameter %s is %s (whole %v) in %s but %s (whole %v) here", p.Name, q.Unit, q.Integer, b.Type, p.Unit, p.Integer)
			}
			if q, ok := b.Param(p.Name); ok && q.Admits != p.Admits {
				return fmt.Errorf("parameter %s admits more when %s in %s but when %s here", p.Name, q.Admits, b.Type, p.Admits)
			}
		}
	}
	if _, ok := k.Param(k.Size); !ok && k.Size != "" {
		return fmt.Errorf("size %q is not one of its parameters", k.Size)
	}
	return nil
}

// CheckRows checks every registered row as Register does (a test runs it
// over the built-in rows).
func CheckRows() error {
	ks := Kinds()
	for i, k := range ks {
		if err := checkRow(k, ks[:i]); err != nil {
			return fmt.Errorf("%s: %w", k.Type, err)
		}
	}
	return nil
}

// Types lists the registered type names in registry order.
func Types() []Type { return kinds.Keys(builtinKinds) }

// TypeList is Types joined with commas, for messages.
func TypeList() string { return kinds.KeyList(builtinKinds) }

// AllParams lists every parameter of every registered type once, in
// registry order: the parameter columns of results.csv. Types that share a
// parameter name define it alike (CheckRows).
func AllParams() []Param {
	return registry.Unique(Kinds(), func(k *Kind) []Param { return k.Params }, func(p Param) string { return p.Name })
}

// AllOptions lists every option of every registered type once, in registry
// order.
func AllOptions() []Option {
	return registry.Unique(Kinds(), func(k *Kind) []Option { return k.Options }, func(o Option) string { return o.Name })
}

// ParamByName finds a parameter's definition among the registered types.
func ParamByName(name string) (Param, bool) {
	// The first type that has it, as AllParams lists it, without building
	// that list: validation asks once per column.
	for _, k := range Kinds() {
		for _, p := range k.Params {
			if p.Name == name {
				return p, true
			}
		}
	}
	return replicaParam(name)
}

// TypesWith lists the types that take a parameter or option of this name.
func TypesWith(name string) []Type {
	return registry.With(Kinds(), func(k *Kind) bool {
		_, p := k.Param(name)
		_, o := k.Option(name)
		return p || o
	})
}
