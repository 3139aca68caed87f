package limiter

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/field"
)

// A limiter given `instances` runs as that many instances of its gate
// behind a balancer, the way a gateway's replicas each enforce the one
// limit they were configured with: {"type": "x-time-rate", "rate_rps": 10,
// "burst": 10, "instances": 3, "balancer": "round-robin", "sharing":
// "local"}. The balancer sends each request to one instance; the sharing
// model says what each instance enforces:
//
//   - local: every instance enforces the full limit on what it sees
//     (Traefik's and Kong's local policies, APISIX's local counters): N
//     instances admit up to N times the limit;
//   - divided: each instance enforces limit/N: the parameters that admit
//     more when larger (a rate, a burst, a limit, a queue) divided by N, a
//     rate as a float, a count rounded down but not below its smallest
//     value (Divide; the point's note says which rounded).
//
// instances is a parameter like a gate's own (swept by a list, a results
// column, part of a setting's name) but of every non-chain gate, and
// balancer and sharing are options of every one; they exist in a spec
// only when it gives instances (Replicated), so a config without them
// reads, normalizes and runs as before. Instances take a gate that
// releases at the arrival (a policer): a shaper's instances would release
// out of order.

// The replication's parameter and options (keys of a limiter object).
const (
	ParamInstances = "instances"
	OptionBalancer = "balancer"
	OptionSharing  = "sharing"
)

// Balancers.
const (
	BalancerRoundRobin    = "round-robin"
	BalancerRandom        = "random"
	BalancerLeastInflight = "least-inflight"
	BalancerHash          = "hash"
)

// Sharing models.
const (
	SharingLocal   = "local"
	SharingDivided = "divided"
	SharingCentral = "central"
)

// The central store's parameters and option (central.go).
const (
	ParamStoreRTT       = "store_rtt_ms"
	ParamStoreCapacity  = "store_capacity_rps"
	ParamOutageStart    = "outage_start_ms"
	ParamOutageEnd      = "outage_end_ms"
	OptionStoreDown     = "store_down"
	StoreDownFailOpen   = "fail-open"
	StoreDownFailClosed = "fail-closed"
)

// A scaling event: the instances become scale_to at scale_at_ms
// (autoscaling out, or in: a replica that fails leaves the balancer).
const (
	ParamScaleAt = "scale_at_ms"
	ParamScaleTo = "scale_to"
)

// IsScenario reports whether a replica parameter is a scenario, not a
// choice: what happens to the deployment (a scaling event), which the
// answer's rule judges a setting under (experiments/decide), not a
// setting of its own.
func IsScenario(name string) bool { return name == ParamScaleAt || name == ParamScaleTo }

// MaxInstances bounds instances.
const MaxInstances = 1000

// ParamBalancerSeed seeds the random balancer.
const ParamBalancerSeed = "balancer_seed"

// ReplicaParams are the parameters of a replicated limiter beyond its
// gate's: swept like them, results columns in the runs that give
// instances. A parameter of one sharing model (replicaParamFor) is
// filled with its default under that model only.
func ReplicaParams() []Param { return slices.Clip(replicaParams()) }

// replicaParams are ReplicaParams, made once: validation looks them up by
// name for every column of a sweep's outputs.
var replicaParams = sync.OnceValue(func() []Param {
	return append([]Param{
		{Name: ParamInstances, Admits: AdmitsLarger, Label: "Instances", Unit: "instances", Integer: true, Min: 1, Max: MaxInstances,
			Doc: "instances of the gate behind a balancer, each with its own state (a gateway's replicas)"},
		{Name: ParamBalancerSeed, Admits: AdmitsNone, Label: "Balancer seed", Unit: "", Integer: true, Min: 0, Max: math.MaxInt32, Optional: true,
			Doc: "the seed of the random balancer's PCG (balancer random only)"},
		{Name: ParamScaleAt, Admits: AdmitsNone, Label: "Scale at", Unit: "ms", Min: 0, Max: MaxWindowMS, Optional: true,
			Doc: "a scaling event: at this time the instances become scale_to (a scenario of the answer, not a choice)"},
		{Name: ParamScaleTo, Admits: AdmitsNone, Label: "Scale to", Unit: "instances", Integer: true, Min: 0, Max: MaxInstances, Optional: true,
			Doc: "the instances after scale_at_ms (fewer: replicas fail or scale in, the balancer stops sending them requests; more: new ones start with fresh state; 0: no event)"},
		leaseParams()[0], leaseParams()[1],
		{Name: ParamStoreRTT, Admits: AdmitsNone, Label: "Store round trip", Unit: "ms", Min: 0, Max: 60_000, Default: 1,
			Doc: "sharing central: the round trip from an instance to the shared store and back, added to every decision"},
		{Name: ParamStoreCapacity, Admits: AdmitsNone, Label: "Store capacity", Unit: "req/s", Units: "requests/s", Min: 0, Max: MaxRateRPS, Optional: true,
			Doc: "sharing central: decisions per second the store makes, one at a time in arrival order (0: no limit)"},
		{Name: ParamOutageStart, Admits: AdmitsNone, Label: "Outage start", Unit: "ms", Min: 0, Max: MaxWindowMS, Optional: true,
			Doc: "sharing central: the store is down from this time (store time) ...; sharing lease: the lease server"},
		{Name: ParamOutageEnd, Admits: AdmitsNone, Label: "Outage end", Unit: "ms", Min: 0, Max: MaxWindowMS, Optional: true,
			Doc: "... to this one (equal to the start: no outage); store_down says what the instances do meanwhile"},
	}, asyncParams()...)
})

// replicaParamFor is the sharing model a replica parameter belongs to
// ("" for every model; the random balancer's seed is filled by the
// balancer); replicaParamIn says whether the model sharing takes it (an
// outage is central's store's or lease's server's).
func replicaParamFor(name string) string {
	switch name {
	case ParamStoreRTT, ParamStoreCapacity, ParamOutageStart, ParamOutageEnd, OptionStoreDown:
		return SharingCentral
	case ParamLeaseMS, ParamRefreshMS, OptionLeaseAlgorithm, OptionLeaseExpired:
		return SharingLease
	case ParamSyncWait, ParamBatchLimit, ParamOwner:
		return SharingAsync
	}
	return ""
}

func replicaParamIn(name, sharing string) bool {
	f := replicaParamFor(name)
	return f == "" || f == sharing || sharing == SharingLease && (name == ParamOutageStart || name == ParamOutageEnd)
}

// ReplicaOptions are the options of a replicated limiter, the first
// choice the default.
func ReplicaOptions() []Option {
	return []Option{
		{Name: OptionBalancer, Label: "Balancer", Choices: []string{BalancerRoundRobin, BalancerRandom, BalancerLeastInflight, BalancerHash},
			Doc: "which instance takes a request: in turn, at random (seeded by balancer_seed), the one with the fewest admitted requests in flight, or by the client's key on a consistent-hash ring"},
		{Name: OptionSharing, Label: "Sharing", Choices: []string{SharingLocal, SharingDivided, SharingCentral, SharingLease, SharingAsync},
			Doc: "what each instance enforces: local, the whole limit; divided, the limit / instances (a count rounded down); central, one gate in a shared store every decision asks; lease, a share of the rate leased by a server and refreshed (Doorman; token-bucket only); async, Gubernator's GLOBAL (decide on a cached copy, hits to the key's owner every sync_wait_ms; the gubernator gate)"},
		{Name: OptionStoreDown, Label: "Store down", Choices: []string{StoreDownFailOpen, StoreDownFailClosed},
			Doc: "sharing central: while the store is down, admit every request (fail-open) or refuse it (fail-closed), answered after one round trip"},
		leaseOptions()[0], leaseOptions()[1],
	}
}

// replicaParam finds a replica parameter by name.
func replicaParam(name string) (Param, bool) {
	ps := ReplicaParams()
	i := slices.IndexFunc(ps, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return Param{}, false
	}
	return ps[i], true
}

// replicaOption finds a replica option by name.
func replicaOption(name string) (Option, bool) {
	os := ReplicaOptions()
	i := slices.IndexFunc(os, func(o Option) bool { return o.Name == name })
	if i < 0 {
		return Option{}, false
	}
	return os[i], true
}

// isReplicaKey reports whether key is a replica parameter or option.
func isReplicaKey(key string) bool {
	_, p := replicaParam(key)
	_, o := replicaOption(key)
	return p || o
}

// Replicated reports whether the spec runs as instances (it gives
// instances).
func (s *Spec) Replicated() bool { return len(s.Params[ParamInstances]) > 0 }

// replicaParamsUsed lists the replica parameters the spec's points vary
// over: those it gives, in table order.
func (s *Spec) replicaParamsUsed() []string {
	if !s.Replicated() {
		return nil
	}
	var out []string
	for _, p := range ReplicaParams() {
		if len(s.Params[p.Name]) > 0 {
			out = append(out, p.Name)
		}
	}
	return out
}

// normalizeReplicas fills the replica options' defaults and the
// parameters the sharing model and balancer read.
func (s *Spec) normalizeReplicas() {
	if !s.Replicated() {
		return
	}
	if s.Options[OptionSharing] == "" {
		s.SetOption(OptionSharing, SharingLocal)
	}
	sharing := s.Options[OptionSharing]
	for _, o := range ReplicaOptions() {
		if s.Options[o.Name] == "" && replicaParamIn(o.Name, sharing) {
			s.SetOption(o.Name, o.Choices[0])
		}
	}
	for _, p := range ReplicaParams() {
		if f := replicaParamFor(p.Name); f != "" && f == sharing && len(s.Params[p.Name]) == 0 {
			s.SetValues(p.Name, Values{p.Default})
		}
	}
	if s.Options[OptionBalancer] == BalancerRandom && len(s.Params[ParamBalancerSeed]) == 0 {
		s.SetValues(ParamBalancerSeed, Values{1})
	}
}

// validateReplicas checks the replica parameters and options (path: the
// spec's own).
func (s *Spec) validateReplicas(path string, k *Kind) field.List {
	var errs field.List
	if !s.Replicated() {
		for _, p := range ReplicaParams() {
			if len(s.Params[p.Name]) > 0 {
				errs.Add(field.Join(path, p.Name), "needs instances (a limiter of one instance takes no %s)", p.Name)
			}
		}
		for _, o := range ReplicaOptions() {
			if s.Options[o.Name] != "" {
				errs.Add(field.Join(path, o.Name), "needs instances (a limiter of one instance takes no %s)", o.Name)
			}
		}
		return errs
	}
	if k.Shaper || k.Waits || k.ReadsServer {
		errs.Add(field.Join(path, ParamInstances), "%s cannot run as instances: instances take a gate that releases at the arrival (a policer) and does not read the server", k.Type)
	} else if k.DelayBoundMS != nil && len(errs) == 0 {
		for _, p := range s.Points() {
			if d := k.DelayBoundMS(s, withDefaults(k, p)); d > 0 {
				errs.Add(field.Join(path, ParamInstances), "%s holds requests up to %g ms at %s: instances take a gate that releases at the arrival (give it no wait)", k.Type, d, FormatParams(s.Type, p))
				break
			}
		}
	}
	for _, p := range ReplicaParams() {
		checkValues(&errs, field.Join(path, p.Name), &p, s.Params[p.Name])
	}
	if len(s.Params[ParamBalancerSeed]) > 0 && s.Options[OptionBalancer] != "" && s.Options[OptionBalancer] != BalancerRandom {
		errs.Add(field.Join(path, ParamBalancerSeed), "is the random balancer's; balancer is %q", s.Options[OptionBalancer])
	}
	for _, o := range ReplicaOptions() {
		if v := s.Options[o.Name]; v != "" && !slices.Contains(o.Choices, v) {
			errs.Add(field.Join(path, o.Name), "must be %s", choiceList(o.Choices))
		}
	}
	sharing := s.Options[OptionSharing]
	for _, name := range append(s.replicaParamsUsed(), OptionStoreDown, OptionLeaseAlgorithm, OptionLeaseExpired) {
		if f := replicaParamFor(name); sharing != "" && !replicaParamIn(name, sharing) && (len(s.Params[name]) > 0 || s.Options[name] != "") {
			errs.Add(field.Join(path, name), "belongs to sharing %q; sharing is %q", f, sharing)
		}
	}
	if sharing == SharingLease && !k.Leases {
		errs.Add(field.Join(path, OptionSharing), "sharing lease retunes a token bucket's rate to each instance's share: it takes %s, not %s", leaseTypeList(), k.Type)
	}
	errs = append(errs, s.validateAsync(path)...)
	if sharing == SharingCentral || sharing == SharingLease {
		starts, ends := s.Params[ParamOutageStart], s.Params[ParamOutageEnd]
		for _, a := range starts {
			for _, b := range ends {
				if b < a {
					errs.Add(field.Join(path, ParamOutageEnd), "must be at least outage_start_ms (%g < %g)", b, a)
				}
			}
		}
	}
	return errs
}

// Divide is the parameters one instance of a divided limiter enforces:
// each rate (req/s) and count (requests) of the kind that admits more when
// larger divided by n, a rate as a float, a count rounded down but to at
// least 1 (a burst of 1 stays 1), and 0 stays 0 (a limit of 0 refuses
// every request on every instance); waits and windows stay. rounded
// names the whole ones the division rounded (the point's note).
func Divide(k *Kind, p Params, n int) (out Params, rounded []string) {
	out = Params{}
	for name, v := range p {
		out[name] = v
	}
	for _, q := range k.Params {
		v, ok := p[q.Name]
		if !ok || v == 0 || q.Admits != AdmitsLarger || q.Unit != rateParam.Unit && q.Unit != burstParam.Unit {
			continue
		}
		d := v / float64(n)
		if q.Integer {
			d = max(math.Floor(d), q.Min, 1)
			if d*float64(n) != v {
				rounded = append(rounded, q.Name)
			}
		}
		out[q.Name] = max(d, q.Min)
	}
	return out, rounded
}

// DivideNote says what dividing a limiter's point rounded ("" when
// nothing, or the spec is not divided).
func DivideNote(s *Spec, p Params) string {
	k := s.Kind()
	if k == nil || !s.Replicated() || s.Options[OptionSharing] != SharingDivided {
		return ""
	}
	n := int(p.Get(ParamInstances))
	each, rounded := Divide(k, p, max(n, 1))
	if len(rounded) == 0 {
		return ""
	}
	note := "divided among " + num(float64(n)) + " instances, rounded down (at least the smallest value):"
	for _, name := range rounded {
		note += " " + name + " " + num(p.Get(name)) + " → " + num(each[name])
	}
	return note
}

// newReplicated builds the instances of a replicated spec's point.
func newReplicated(s *Spec, k *Kind, p Params, env Env) (Gate, error) {
	n := int(p.Get(ParamInstances))
	if n < 1 {
		return nil, fmt.Errorf("%s: instances %g: at least 1", s.Label(), p.Get(ParamInstances))
	}
	each := p
	if s.Options[OptionSharing] == SharingDivided {
		each, _ = Divide(k, p, n)
	}
	r := &InstanceSet{gates: make([]Gate, n), balancer: s.Options[OptionBalancer]}
	if s.Options[OptionSharing] == SharingLease {
		return newLeased(s, k, p, env, r)
	}
	if s.Options[OptionSharing] == SharingCentral {
		g, err := k.New(s, p, env)
		if err != nil {
			return nil, err
		}
		r.store = newStore(g, p, s.Options[OptionStoreDown] == StoreDownFailOpen)
		r.gates = r.gates[:0]
		for range n {
			r.gates = append(r.gates, nil) // the store decides
		}
	}
	for i := range r.gates {
		if r.store != nil {
			break
		}
		g, err := k.New(s, each, env)
		if err != nil {
			return nil, err
		}
		r.gates[i] = g
	}
	r.active, r.scaleAtMS, r.scaleTo = n, math.Inf(1), n
	if to := int(p.Get(ParamScaleTo)); to > 0 && to != n {
		r.scaleAtMS, r.scaleTo = p.Get(ParamScaleAt), to
		for len(r.gates) < to { // the instances that start at the event
			if r.store != nil {
				r.gates = append(r.gates, nil)
				continue
			}
			g, err := k.New(s, each, env)
			if err != nil {
				return nil, err
			}
			r.gates = append(r.gates, g)
		}
	}
	r.startBalancer(uint64(p.Get(ParamBalancerSeed)), len(env.Weights))
	if s.Options[OptionSharing] == SharingAsync {
		a := newAsyncSet(r, p)
		if r.balancer == BalancerLeastInflight {
			return &observedAsync{a}, nil
		}
		return a, nil
	}
	if r.balancer == BalancerLeastInflight {
		return &observedInstances{r}, nil
	}
	return r, nil
}

func isReplicaParam(key string) bool  { _, ok := replicaParam(key); return ok }
func isReplicaOption(key string) bool { _, ok := replicaOption(key); return ok }

// Single is the spec of one gate of the configured settings: s without
// its instances, balancer and sharing (s itself when it has none).
func (s *Spec) Single() *Spec {
	if !s.Replicated() {
		return s
	}
	out := *s
	out.Params, out.Options = map[string]Values{}, map[string]string{}
	for name, vs := range s.Params {
		if !isReplicaParam(name) {
			out.Params[name] = vs
		}
	}
	for name, v := range s.Options {
		if !isReplicaOption(name) {
			out.Options[name] = v
		}
	}
	return &out
}

// replicatedCurve is the arrival curve of a replicated point's releases:
// N instances' curves under local and divided (each instance's own
// settings), the one gate's under central (its decisions, shifted by the
// round trip), and none under central with a fail-open outage (what
// passes while the store is down obeys no curve).
func replicatedCurve(s *Spec, k *Kind, p Params, clients int) (calculus.Curve, bool) {
	n := max(p.Get(ParamInstances), p.Get(ParamScaleTo), 1) // the most instances at once
	one := k.Curve(p).Times(s.keys(clients))
	switch s.Options[OptionSharing] {
	case SharingDivided:
		each, _ := Divide(k, p, int(n))
		return k.Curve(each).Times(s.keys(clients) * n), true
	case SharingAsync: // the instances' cached copies admit past any one gate's curve
		return calculus.Curve{}, false
	case SharingCentral:
		if p.Get(ParamOutageEnd) > p.Get(ParamOutageStart) && s.Options[OptionStoreDown] == StoreDownFailOpen {
			return calculus.Curve{}, false
		}
		return one, true
	case SharingLease:
		return leaseCurve(s, k, p, n)
	}
	return one.Times(n), true
}

// storeDelayBoundMS bounds the time a central limiter holds a request:
// its gate's bound and the round trip, unbounded when the store has a
// capacity (its queue has no bound).
func storeDelayBoundMS(s *Spec, k *Kind, p Params) (float64, bool) {
	if p.Get(ParamStoreCapacity) > 0 {
		return 0, false
	}
	gate := 0.0
	if k.DelayBoundMS != nil {
		gate = k.DelayBoundMS(s, p)
	}
	return gate + p.Get(ParamStoreRTT), true
}

// WithReplicasOf gives s the instances, balancer and sharing of from (and
// their parameters), replacing its own: a rerun of a replicated point's
// deployed setting runs as the point's instances do.
func (s *Spec) WithReplicasOf(from *Spec) {
	for _, p := range ReplicaParams() {
		delete(s.Params, p.Name)
		if vs := from.Params[p.Name]; len(vs) > 0 {
			s.SetValues(p.Name, slices.Clone(vs))
		}
	}
	for _, o := range ReplicaOptions() {
		delete(s.Options, o.Name)
		if v := from.Options[o.Name]; v != "" {
			s.SetOption(o.Name, v)
		}
	}
}
