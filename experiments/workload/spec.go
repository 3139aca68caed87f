package workload

import (
	"encoding/json"
	"maps"
	"math"
	"slices"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/lists"
)

// Limits that keep one run inside the machine.
const (
	MaxDurationMS = 86_400_000 // one day of simulated time
	MaxRateRPS    = 1_000_000
	MaxClients    = 100_000
	MaxBurstCount = 10_000_000
	// MaxSegmentStarts bounds the demand-curve segments started over a run
	// (cycles × segments a cycle).
	MaxSegmentStarts = 200_000_000
	// MaxThinningDraws bounds the candidates a Poisson flash crowd draws
	// (peak rate × duration of the run).
	MaxThinningDraws = 500_000_000
)

// DefaultClient names the caller of single-client parts that name none.
const DefaultClient = "client"

// Spec is the workload section of a config: the arrival window and the
// parts whose arrivals are merged into one list.
type Spec struct {
	DurationMS float64 `json:"duration_ms"`
	Parts      []Part  `json:"parts"`
	// Pacing is how paced parts space their arrivals (a rule of the
	// config, experiments.Rules): PacingAdded (left out) or
	// PacingMultiplied.
	Pacing string `json:"pacing,omitempty"`
}

// Pacing rules: how a paced part at spacing d = 1000/rate_rps places its
// arrivals from start s.
const (
	// PacingAdded adds d again and again: t = s, s+d, (s+d)+d, ... (the lab
	// spec's rule; accumulated rounding sometimes adds an arrival just
	// before the end).
	PacingAdded = "added"
	// PacingMultiplied places arrival k at s + k × d (the seed lab's Post 1).
	PacingMultiplied = "multiplied"
)

// Part is one generator. Type selects the part's row in the registry
// (Kinds): the fields that apply and what the part produces. The config
// decoder refuses fields that do not belong to the type.
type Part struct {
	Type PartType `json:"type"`

	// Who sends: a single client, or Clients clients named "<group>-1".."<group>-N".
	Client  string  `json:"client,omitempty"`
	Group   string  `json:"group,omitempty"`
	Clients int     `json:"clients,omitempty"`
	Weight  float64 `json:"weight,omitempty"`

	Segments []Segment `json:"segments,omitempty"` // demand-curve

	// A rate between start and end (nil: the end of the window), and how
	// the requests are spaced.
	RateRPS float64  `json:"rate_rps,omitempty"`
	StartMS float64  `json:"start_ms,omitempty"`
	EndMS   *float64 `json:"end_ms,omitempty"`
	Arrival Arrival  `json:"arrival,omitempty"`

	Bursts []Burst `json:"bursts,omitempty"` // bursts

	// flash-crowd
	BaseRPS    float64 `json:"base_rps,omitempty"`
	Multiplier float64 `json:"multiplier,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
	RampMS     float64 `json:"ramp_ms,omitempty"`

	CSV  string `json:"csv,omitempty"`  // trace, given in the config
	File string `json:"file,omitempty"` // trace, a file by name (TraceOpener)

	// users (closed loop)
	Users   int     `json:"users,omitempty"`
	ThinkMS float64 `json:"think_ms,omitempty"`
	Think   string  `json:"think,omitempty"`

	// How the part's clients treat their requests (behaviour.go).
	Behaviour

	// Lists are the values of the part's swept fields (those whose row
	// says Sweep), by JSON key; the field itself holds the first value.
	Lists lists.Lists `json:"-"`
}

// MarshalJSON writes the part with its swept fields as lists.
func (p Part) MarshalJSON() ([]byte, error) {
	type plain Part
	b, err := json.Marshal(plain(p))
	if err != nil || len(p.Lists) == 0 {
		return b, err
	}
	return lists.Marshal(p, b, p.Lists)
}

// Validate checks one part on its own (the checks Spec.Validate runs on
// each part); path is the part's path, durationMS the arrival window.
func (p *Part) Validate(path string, durationMS float64) field.List {
	return p.validate(path, durationMS)
}

// Kind is the part's registry row (nil for an unknown type).
func (p *Part) Kind() *Kind {
	k, _ := LookupKind(p.Type)
	return k
}

// CheckFields refuses keys of a raw part object that its type does not take.
func CheckFields(path string, raw json.RawMessage) field.List {
	keys, k, errs := kinds.Object(builtinKinds, path, raw, "part type")
	if errs != nil {
		return errs
	}
	allowed := k.FieldNames()
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		if key != "type" && !slices.Contains(allowed, key) {
			errs.Add(field.Join(path, key), "is not a field of a %q part (fields: %v)", k.Type, allowed)
		}
	}
	return errs
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Validate checks the spec; path is the spec's own path in the config.
func (s *Spec) Validate(path string) field.List {
	var errs field.List
	if !finite(s.DurationMS) || s.DurationMS <= 0 || s.DurationMS > MaxDurationMS {
		errs.Add(field.Join(path, "duration_ms"), "must be more than 0 and at most %d (one day)", MaxDurationMS)
	}
	if len(s.Parts) == 0 {
		errs.Add(field.Join(path, "parts"), "needs at least one part")
	}
	for i := range s.Parts {
		errs = append(errs, s.Parts[i].validate(field.Index(field.Join(path, "parts"), i), s.DurationMS)...)
	}
	if len(errs) == 0 {
		if s.clientsBound() > MaxClients {
			errs.Add(field.Join(path, "parts"), "declare more than %d clients in all, the limit", MaxClients)
		} else {
			errs = append(errs, s.checkUsersOwnClients(path)...)
		}
	}
	return errs
}

// clientsBound is an upper bound on the clients the parts declare (parts
// that name the same clients count them twice), so that a run with millions
// of them is refused before its client table is built.
func (s *Spec) clientsBound() int {
	n := 0
	for i := range s.Parts {
		p := &s.Parts[i]
		switch k := p.Kind(); {
		case k != nil && k.CountClients != nil:
			n += k.CountClients(p)
		case p.Clients > 0:
			n += p.Clients
		default:
			n++
		}
		if n > MaxClients {
			break // the count only has to pass the limit
		}
	}
	return n
}

func checkRate(errs *field.List, path string, v float64, zeroOK bool) {
	switch {
	case !finite(v) || v < 0 || v > MaxRateRPS:
		errs.Add(path, "must be a rate between 0 and %d requests/s", MaxRateRPS)
	case v == 0 && !zeroOK:
		errs.Add(path, "must be more than 0 requests/s")
	}
}

func checkTime(errs *field.List, path string, v float64) {
	if !finite(v) || v < 0 || v > MaxDurationMS {
		errs.Add(path, "must be a time between 0 and %d ms", MaxDurationMS)
	}
}

// checkGroupWithClients requires a group name when a part numbers its
// clients.
func checkGroupWithClients(errs *field.List, path string, p *Part) {
	if p.Clients > 0 && p.Group == "" {
		errs.Add(field.Join(path, "group"), "is required with clients: they are named <group>-1 .. <group>-N")
	}
}

// validate runs the checks every part gets, then its type's own.
func (p *Part) validate(path string, durationMS float64) field.List {
	var errs field.List
	if p.Weight != 0 && (!finite(p.Weight) || p.Weight <= 0 || p.Weight > 1e6) {
		errs.Add(field.Join(path, "weight"), "must be more than 0 and at most 1000000")
	}
	if p.Clients < 0 || p.Clients > MaxClients {
		errs.Add(field.Join(path, "clients"), "must be between 1 and %d", MaxClients)
	}
	if len(p.Client) > 200 || len(p.Group) > 200 {
		errs.Add(field.Join(path, "client"), "names are at most 200 characters")
	}
	if p.Client != "" && p.Clients > 0 {
		errs.Add(field.Join(path, "clients"), "give either client (one name) or clients (a count), not both")
	}
	checkTime(&errs, field.Join(path, "start_ms"), p.StartMS)
	if p.EndMS != nil {
		checkTime(&errs, field.Join(path, "end_ms"), *p.EndMS)
		if *p.EndMS < p.StartMS {
			errs.Add(field.Join(path, "end_ms"), "must not be before start_ms")
		}
	}
	k := p.Kind()
	if k == nil {
		errs.Add(field.Join(path, "type"), "unknown part type %q (one of %v)", p.Type, PartTypes())
		return errs
	}
	if k.Has(timeoutField.Name) {
		errs = append(errs, p.Behaviour.Validate(path)...)
	}
	if k.Validate != nil {
		errs = append(errs, k.Validate(p, path, durationMS)...)
	}
	return errs
}

// Expected estimates how many arrivals the spec produces (exact for
// deterministic parts, the mean for random ones) without generating them, so
// a run that would not fit the machine is refused before it starts.
func (s *Spec) Expected() float64 {
	n := 0.0
	for i := range s.Parts {
		p := &s.Parts[i]
		if k := p.Kind(); k != nil && k.Expected != nil {
			n += k.Expected(p, s.DurationMS)
		}
	}
	return n
}

// LevelRPS is the load's configured rate: the sum of its parts' levels
// (Kind.Level); ok false when a part has none (a trace, bursts, a flash
// crowd, users) or the load has no part.
func (s *Spec) LevelRPS() (level float64, ok bool) {
	for i := range s.Parts {
		p := &s.Parts[i]
		k := p.Kind()
		if k == nil || k.Level == nil {
			return 0, false
		}
		level += k.Level(p, s.DurationMS)
	}
	return level, len(s.Parts) > 0
}

// spanLevel is a rate over the part's [start, end) as a mean over the
// window [0, w): the rate itself when the span is the whole window.
func (p *Part) spanLevel(rate, w float64) float64 {
	start, end := p.span(w)
	if start <= 0 && end >= w {
		return rate
	}
	if !(w > 0) {
		return 0
	}
	return rate * (end - start) / w
}

// span is the part's [start, end) inside the window [0, w); empty (start ==
// end) when the part starts at or after the end of the window, so that
// Expected never counts a negative number of arrivals for it.
func (p *Part) span(w float64) (start, end float64) {
	start, end = p.StartMS, w
	if p.EndMS != nil && *p.EndMS < end {
		end = *p.EndMS
	}
	return min(start, end), end
}

// String describes the part in a few words, for summaries.
func (p *Part) String() string {
	if k := p.Kind(); k != nil && k.Describe != nil {
		return k.Describe(p)
	}
	return string(p.Type)
}
