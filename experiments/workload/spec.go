package workload

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ratelab/ratelab/experiments/field"
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

// Part types.
const (
	DemandCurve = "demand-curve"
	Constant    = "constant"
	Poisson     = "poisson"
	Bursts      = "bursts"
	Clients     = "clients"
	FlashCrowd  = "flash-crowd"
	Trace       = "trace"
)

// Arrival processes for multi-client parts.
const (
	Uniform      = "uniform"
	PoissonArr   = "poisson"
	Synchronized = "synchronized"
)

// Spec is the workload section of a config: the arrival window and the
// parts whose arrivals are merged into one list.
type Spec struct {
	DurationMS float64 `json:"duration_ms"`
	Parts      []Part  `json:"parts"`
}

// Part is one generator. Type selects which of the fields apply; the config
// decoder refuses fields that do not belong to the type.
type Part struct {
	Type string `json:"type"`

	// Who sends: a single client, or Clients clients named "<group>-1".."<group>-N".
	Client  string  `json:"client,omitempty"`
	Group   string  `json:"group,omitempty"`
	Clients int     `json:"clients,omitempty"`
	Weight  float64 `json:"weight,omitempty"`

	// demand-curve: segments repeated from t = 0, the last one cut at the window's end.
	Segments []Segment `json:"segments,omitempty"`

	// constant, poisson, clients: rate (per client for "clients") between start and end.
	RateRPS float64  `json:"rate_rps,omitempty"`
	StartMS float64  `json:"start_ms,omitempty"`
	EndMS   *float64 `json:"end_ms,omitempty"`
	Arrival string   `json:"arrival,omitempty"` // clients, flash-crowd: uniform | poisson | synchronized

	// bursts
	Bursts []Burst `json:"bursts,omitempty"`

	// flash-crowd: base rate, multiplied between start and start+duration, linear ramps inside.
	BaseRPS    float64 `json:"base_rps,omitempty"`
	Multiplier float64 `json:"multiplier,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
	RampMS     float64 `json:"ramp_ms,omitempty"`

	// trace: "t_ms,client" CSV text, replayed as is (sorted by time, ties in file order).
	CSV string `json:"csv,omitempty"`
}

// Segment is one piece of a demand curve.
type Segment struct {
	RateRPS    float64 `json:"rate_rps"`
	DurationMS float64 `json:"duration_ms"`
}

// Burst is count requests at at_ms, spread evenly over spread_ms.
type Burst struct {
	AtMS     float64 `json:"at_ms"`
	Count    int     `json:"count"`
	SpreadMS float64 `json:"spread_ms,omitempty"`
}

// fieldsOf lists the JSON fields each part type accepts, besides "type".
var fieldsOf = map[string][]string{
	DemandCurve: {"client", "group", "weight", "segments"},
	Constant:    {"client", "group", "weight", "rate_rps", "start_ms", "end_ms"},
	Poisson:     {"client", "group", "weight", "rate_rps", "start_ms", "end_ms"},
	Bursts:      {"client", "group", "clients", "weight", "bursts"},
	Clients:     {"group", "clients", "weight", "rate_rps", "start_ms", "end_ms", "arrival"},
	FlashCrowd:  {"client", "group", "clients", "weight", "base_rps", "multiplier", "start_ms", "duration_ms", "ramp_ms", "arrival"},
	Trace:       {"group", "weight", "csv"},
}

// PartTypes lists the part types in a stable order.
func PartTypes() []string {
	return []string{DemandCurve, Constant, Poisson, Bursts, Clients, FlashCrowd, Trace}
}

// CheckFields refuses keys of a raw part object that its type does not take.
func CheckFields(path string, raw json.RawMessage) field.List {
	var errs field.List
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		errs.Add(path, "must be an object: %v", err)
		return errs
	}
	var typ string
	if t, ok := keys["type"]; !ok {
		errs.Add(field.Join(path, "type"), "is required (one of %v)", PartTypes())
		return errs
	} else if err := json.Unmarshal(t, &typ); err != nil {
		errs.Add(field.Join(path, "type"), "must be a string")
		return errs
	}
	allowed, ok := fieldsOf[typ]
	if !ok {
		errs.Add(field.Join(path, "type"), "unknown part type %q (one of %v)", typ, PartTypes())
		return errs
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if k != "type" && !slices.Contains(allowed, k) {
			errs.Add(field.Join(path, k), "is not a field of a %q part (fields: %v)", typ, allowed)
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
		switch {
		case p.Type == Trace:
			events, _ := ParseTrace(p.CSV)
			names := map[string]bool{}
			for _, e := range events {
				names[e.Client] = true
			}
			n += len(names)
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
	switch p.Type {
	case DemandCurve:
		if len(p.Segments) == 0 {
			errs.Add(field.Join(path, "segments"), "needs at least one segment")
		}
		if len(p.Segments) > 10_000 {
			errs.Add(field.Join(path, "segments"), "at most 10000 segments")
		}
		total := 0.0
		for i, sg := range p.Segments {
			sp := field.Index(field.Join(path, "segments"), i)
			checkRate(&errs, field.Join(sp, "rate_rps"), sg.RateRPS, true)
			if !finite(sg.DurationMS) || sg.DurationMS <= 0 || sg.DurationMS > MaxDurationMS {
				errs.Add(field.Join(sp, "duration_ms"), "must be more than 0 and at most %d ms", MaxDurationMS)
			}
			total += sg.DurationMS
		}
		if total > 0 && total < 1 {
			errs.Add(field.Join(path, "segments"), "one cycle must last at least 1 ms")
		} else if starts := math.Ceil(durationMS/total) * float64(len(p.Segments)); total > 0 && starts > MaxSegmentStarts {
			// Each start costs a step even at rate 0, so many short
			// segments over a long run would keep the generator busy
			// for hours without emitting anything.
			errs.Add(field.Join(path, "segments"), "%.0f segment starts over the run; the limit is %d (fewer or longer segments)", starts, MaxSegmentStarts)
		}
	case Constant, Poisson:
		checkRate(&errs, field.Join(path, "rate_rps"), p.RateRPS, false)
	case Clients:
		checkRate(&errs, field.Join(path, "rate_rps"), p.RateRPS, false)
		if p.Clients < 1 {
			errs.Add(field.Join(path, "clients"), "must be at least 1")
		}
		if p.Group == "" {
			errs.Add(field.Join(path, "group"), "is required: clients are named <group>-1 .. <group>-N")
		}
		errs = append(errs, checkArrival(field.Join(path, "arrival"), p.Arrival)...)
	case Bursts:
		if len(p.Bursts) == 0 {
			errs.Add(field.Join(path, "bursts"), "needs at least one burst")
		}
		if p.Clients > 0 && p.Group == "" {
			errs.Add(field.Join(path, "group"), "is required with clients: they are named <group>-1 .. <group>-N")
		}
		total := 0
		for i, b := range p.Bursts {
			bp := field.Index(field.Join(path, "bursts"), i)
			checkTime(&errs, field.Join(bp, "at_ms"), b.AtMS)
			if b.Count < 1 || b.Count > MaxBurstCount {
				errs.Add(field.Join(bp, "count"), "must be between 1 and %d", MaxBurstCount)
			}
			if !finite(b.SpreadMS) || b.SpreadMS < 0 || b.SpreadMS > MaxDurationMS {
				errs.Add(field.Join(bp, "spread_ms"), "must be between 0 and %d ms", MaxDurationMS)
			}
			total += b.Count
		}
		if total > MaxBurstCount {
			errs.Add(field.Join(path, "bursts"), "at most %d requests in all", MaxBurstCount)
		}
	case FlashCrowd:
		checkRate(&errs, field.Join(path, "base_rps"), p.BaseRPS, false)
		if !finite(p.Multiplier) || p.Multiplier < 1 || p.Multiplier > 1000 {
			errs.Add(field.Join(path, "multiplier"), "must be between 1 and 1000")
		} else {
			checkRate(&errs, field.Join(path, "multiplier"), p.BaseRPS*p.Multiplier, false)
		}
		if !finite(p.DurationMS) || p.DurationMS <= 0 || p.DurationMS > MaxDurationMS {
			errs.Add(field.Join(path, "duration_ms"), "must be more than 0 and at most %d ms", MaxDurationMS)
		}
		if !finite(p.RampMS) || p.RampMS < 0 || 2*p.RampMS > p.DurationMS {
			errs.Add(field.Join(path, "ramp_ms"), "must be between 0 and half of duration_ms")
		}
		if p.Clients > 0 && p.Group == "" {
			errs.Add(field.Join(path, "group"), "is required with clients: they are named <group>-1 .. <group>-N")
		}
		errs = append(errs, checkArrival(field.Join(path, "arrival"), p.Arrival)...)
		// Poisson thinning draws candidates at the peak rate over the
		// whole run, however short the crowd.
		if draws := p.BaseRPS * p.Multiplier * durationMS / 1000; (p.Arrival == "" || p.Arrival == PoissonArr) && draws > MaxThinningDraws {
			errs.Add(field.Join(path, "multiplier"), "draws about %.0f candidate arrivals at the peak rate over the run; the limit is %d (a lower peak, a shorter run or arrival \"uniform\")", draws, MaxThinningDraws)
		}
	case Trace:
		if p.CSV == "" {
			errs.Add(field.Join(path, "csv"), "is empty: give the trace as \"t_ms,client\" lines")
		} else if events, err := ParseTrace(p.CSV); err != nil {
			errs.Add(field.Join(path, "csv"), "%v", err)
		} else if finite(durationMS) && durationMS > 0 {
			for _, e := range events {
				if e.T >= durationMS {
					errs.Add(field.Join(path, "csv"), "line %d: t_ms %g is at or after the end of the run (duration_ms %g)", e.Line, e.T, durationMS)
					break
				}
			}
		}
	default:
		errs.Add(field.Join(path, "type"), "unknown part type %q (one of %v)", p.Type, PartTypes())
	}
	return errs
}

func checkArrival(path, a string) field.List {
	var errs field.List
	switch a {
	case "", Uniform, PoissonArr, Synchronized:
	default:
		errs.Add(path, "must be %q, %q or %q", Uniform, PoissonArr, Synchronized)
	}
	return errs
}

// Expected estimates how many arrivals the spec produces (exact for
// deterministic parts, the mean for random ones) without generating them, so
// a run that would not fit the machine is refused before it starts.
func (s *Spec) Expected() float64 {
	w := s.DurationMS
	n := 0.0
	for _, p := range s.Parts {
		start, end := p.span(w)
		switch p.Type {
		case DemandCurve:
			// Whole cycles, then the segments of the cut last one. A
			// segment started at s emits at s, s + 1000/rate, ... while
			// t < end: at most rate*d/1000 + 2 (one for the start, one
			// for the accumulated rounding).
			segment := func(rate, d float64) float64 {
				if rate <= 0 {
					return 0
				}
				return rate*d/1000 + 2
			}
			cycle, count := 0.0, 0.0
			for _, sg := range p.Segments {
				cycle += sg.DurationMS
				count += segment(sg.RateRPS, sg.DurationMS)
			}
			if cycle > 0 {
				full := math.Floor(w / cycle)
				n += full * count
				rest := w - full*cycle
				for _, sg := range p.Segments {
					if rest <= 0 {
						break
					}
					d := math.Min(sg.DurationMS, rest)
					n += segment(sg.RateRPS, d)
					rest -= d
				}
			}
		case Constant, Poisson:
			n += p.RateRPS * (end - start) / 1000
		case Clients:
			n += float64(p.Clients) * p.RateRPS * (end - start) / 1000
		case Bursts:
			for _, b := range p.Bursts {
				n += float64(b.Count)
			}
		case FlashCrowd:
			n += p.BaseRPS*w/1000 + p.BaseRPS*(p.Multiplier-1)*p.DurationMS/1000
		case Trace:
			n += float64(countLines(p.CSV))
		}
	}
	return n
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
	switch p.Type {
	case DemandCurve:
		return fmt.Sprintf("demand curve of %d segments", len(p.Segments))
	case Constant, Poisson:
		return fmt.Sprintf("%s %g rps", p.Type, p.RateRPS)
	case Clients:
		return fmt.Sprintf("%d %s clients × %g rps (%s)", p.Clients, p.Group, p.RateRPS, orDefault(p.Arrival, Uniform))
	case Bursts:
		return fmt.Sprintf("%d bursts", len(p.Bursts))
	case FlashCrowd:
		return fmt.Sprintf("flash crowd %g rps × %g for %g ms", p.BaseRPS, p.Multiplier, p.DurationMS)
	case Trace:
		return "trace replay"
	}
	return p.Type
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
