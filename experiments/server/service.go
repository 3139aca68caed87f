package server

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ratelab/ratelab/experiments/field"
)

// The service-time distributions (the option "service"). The service time
// is a property of the request, not of the point: a load's requests draw
// theirs once (Draw), from the config's seed on a PCG stream of their own
// (ServiceStream, apart from every arrival generator's, so a distribution
// never moves an arrival), and every point of the sweep serves the same
// request for the same time, so limiters are compared on the same work.
//
// Request i draws one uniform u_i in (0, 1) (the midpoint of one of 2^53
// equal steps, so no request takes 0 ms) and takes the distribution's
// quantile at u_i (inverse transform): a request keeps its rank in every
// distribution of the sweep (a slow request under one lognormal is slow
// under another). Fixed draws nothing.
//
// What a distribution changes in the model:
//   - capacity (RateRPS), the door's bound (capacity × deadline) and
//     utilization use the mean, which normalization writes into service_ms
//     (lognormal, bimodal, empirical: service_ms is derived, a given value
//     is replaced; exponential: service_ms is the mean it is drawn around);
//   - occupancy "busy-ceil" divides the backlog of work by the mean:
//     ceil((busyUntil - t) / mean), the seed lab's formula read as "the
//     remaining work in requests of mean size" (exact for fixed service);
//   - expiry "at-dequeue" uses the request's own service time (a worker
//     discards a request whose wait plus its service would pass the
//     deadline);
//   - the network-calculus bounds use the distribution's maximum (MaxMS):
//     a FIFO server whose every request takes at most S is the
//     rate-latency server R = c/S, T = S; exponential and lognormal have
//     no maximum, hence no bound.
const (
	OptService = "service"

	ServiceFixed       = "fixed"
	ServiceExponential = "exponential"
	ServiceLognormal   = "lognormal"
	ServiceBimodal     = "bimodal"
	ServiceEmpirical   = "empirical"
)

// ServiceStream is the PCG stream (beside the config's seed) of the
// requests' service draws; the arrival generators use streams part<<32|k.
const ServiceStream uint64 = 0x5345_5256_4943_4500 // "SERVICE\0"

// z99 is the standard normal quantile at 0.99.
const z99 = 2.3263478740408408

// Number is a numeric server setting of one service distribution: the
// form's inputs and the help iterate Numbers, validation checks them.
type Number struct {
	Name    string // JSON key in the server section
	Label   string
	Unit    string // "ms", or "" for a share
	Service string // the distribution that reads it
	Doc     string
	get     func(*Spec) *float64
}

// Get is the setting's value in s (0 when left out).
func (n Number) Get(s *Spec) float64 { return *n.get(s) }

// Set sets the setting's value in s.
func (n Number) Set(s *Spec, v float64) { *n.get(s) = v }

// Numbers lists the numeric settings of the service distributions.
func Numbers() []Number {
	return []Number{
		{"service_p50_ms", "Service p50", "ms", ServiceLognormal, "lognormal: the median service time", func(s *Spec) *float64 { return &s.ServiceP50MS }},
		{"service_p99_ms", "Service p99", "ms", ServiceLognormal, "lognormal: the 99th percentile of the service time (at least the p50)", func(s *Spec) *float64 { return &s.ServiceP99MS }},
		{"service_slow_share", "Slow share", "", ServiceBimodal, "bimodal: the share of slow requests, from 0 to 1", func(s *Spec) *float64 { return &s.ServiceSlowShare }},
		{"service_fast_ms", "Fast service", "ms", ServiceBimodal, "bimodal: the service time of a fast request", func(s *Spec) *float64 { return &s.ServiceFastMS }},
		{"service_slow_ms", "Slow service", "ms", ServiceBimodal, "bimodal: the service time of a slow request (at least the fast one)", func(s *Spec) *float64 { return &s.ServiceSlowMS }},
	}
}

// serviceChoices are the words of the option "service".
func serviceChoices() []Choice {
	return []Choice{
		{ServiceFixed, "every request takes service_ms"},
		{ServiceExponential, "exponential with mean service_ms"},
		{ServiceLognormal, "lognormal given its median service_p50_ms and its 99th percentile service_p99_ms; no maximum, so no network-calculus bound"},
		{ServiceBimodal, "a share service_slow_share of requests takes service_slow_ms, the others service_fast_ms"},
		{ServiceEmpirical, "a trace's own service times: each request of a trace part takes the service_ms column of its line; other requests draw from the column's values"},
	}
}

// FixedService reports whether every request takes service_ms.
func (s *Spec) FixedService() bool { return s.Option(OptService) == ServiceFixed }

// lognormal's parameters: ln of the median and the shape.
func (s *Spec) lognormal() (mu, sigma float64) {
	return math.Log(s.ServiceP50MS), math.Log(s.ServiceP99MS/s.ServiceP50MS) / z99
}

// lognormalQuantile is the quantile at u of the lognormal (mu, sigma).
func lognormalQuantile(mu, sigma, u float64) float64 {
	return math.Exp(mu + sigma*math.Sqrt2*math.Erfinv(2*u-1))
}

// SetColumn gives the spec the statistics of the trace's service column
// (every load's column values pooled: their mean and maximum), which the
// empirical distribution's mean and maximum are; the config sets it when it
// normalizes.
func (s *Spec) SetColumn(meanMS, maxMS float64) {
	s.columnMeanMS, s.columnMaxMS = meanMS, maxMS
	s.resolveMean()
}

// MeanMS is the mean service time (NaN when the settings are invalid).
func (s *Spec) MeanMS() float64 {
	switch s.Option(OptService) {
	case ServiceLognormal:
		mu, sigma := s.lognormal()
		return math.Exp(mu + sigma*sigma/2)
	case ServiceBimodal:
		return (1-s.ServiceSlowShare)*s.ServiceFastMS + s.ServiceSlowShare*s.ServiceSlowMS
	case ServiceEmpirical:
		if s.columnMeanMS > 0 {
			return s.columnMeanMS
		}
		return s.ServiceMS
	}
	return s.ServiceMS
}

// MaxMS is the longest service time a request can take, and false when the
// distribution has no maximum (exponential, lognormal).
func (s *Spec) MaxMS() (float64, bool) {
	switch s.Option(OptService) {
	case ServiceExponential, ServiceLognormal:
		return math.Inf(1), false
	case ServiceBimodal:
		if s.ServiceSlowShare == 0 {
			return s.ServiceFastMS, true
		}
		return max(s.ServiceFastMS, s.ServiceSlowMS), true
	case ServiceEmpirical:
		return s.columnMaxMS, s.columnMaxMS > 0
	}
	return s.ServiceMS, true
}

// resolveMean writes the mean of a distribution given by other settings
// into service_ms (when the settings are valid enough to have one).
func (s *Spec) resolveMean() {
	switch s.Option(OptService) {
	case ServiceLognormal, ServiceBimodal, ServiceEmpirical:
		if m := s.MeanMS(); m > 0 && !math.IsInf(m, 0) {
			s.ServiceMS = m
		}
	}
}

// Quantile is the service time at rank u in (0, 1) (the inverse of the
// distribution function); empirical reads the sorted column values.
func (s *Spec) Quantile(u float64, column []float64) float64 {
	switch s.Option(OptService) {
	case ServiceExponential:
		return -s.ServiceMS * math.Log1p(-u)
	case ServiceLognormal:
		mu, sigma := s.lognormal()
		return lognormalQuantile(mu, sigma, u)
	case ServiceBimodal:
		if u >= 1-s.ServiceSlowShare {
			return s.ServiceSlowMS
		}
		return s.ServiceFastMS
	case ServiceEmpirical:
		if len(column) == 0 {
			return s.ServiceMS
		}
		return column[min(int(u*float64(len(column))), len(column)-1)]
	}
	return s.ServiceMS
}

// Draw gives n requests their service times (nil when the service is
// fixed): request i takes the quantile at the i-th uniform of the seed's
// service stream, or under empirical its own value given[i] when the trace
// gives one (given is nil or NaN where a request has none).
func (s *Spec) Draw(seed uint64, n int, given []float64) []float64 {
	p := s.Sampler(seed, ServiceStream, given)
	if p == nil {
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = p.Next()
		if p.empirical && given != nil && !math.IsNaN(given[i]) {
			out[i] = given[i]
		}
	}
	return out
}

// Sampler draws service times one request at a time from a PCG stream:
// Draw's, or another for requests made while a point runs (closed-loop
// users draw theirs in the order they make them).
type Sampler struct {
	s         Spec
	rng       *rand.Rand
	column    []float64 // empirical: the sorted given values
	empirical bool
	// lognormal: its parameters, worked out once rather than per draw
	// (the same values Quantile computes, so the same draws).
	lognormal bool
	mu, sigma float64
}

// Sampler returns a sampler of the spec's distribution on (seed, stream);
// nil when the service is fixed. Under empirical it draws from the values
// of given (NaN: none). Draws are capped at MaxServiceMS.
func (s *Spec) Sampler(seed, stream uint64, given []float64) *Sampler {
	if s.FixedService() {
		return nil
	}
	p := &Sampler{s: *s, rng: rand.New(rand.NewPCG(seed, stream)), empirical: s.Option(OptService) == ServiceEmpirical}
	if s.Option(OptService) == ServiceLognormal {
		p.lognormal = true
		p.mu, p.sigma = s.lognormal()
	}
	if p.empirical {
		for _, v := range given {
			if !math.IsNaN(v) {
				p.column = append(p.column, v)
			}
		}
		slices.Sort(p.column)
	}
	return p
}

// Next is the next request's service time.
func (p *Sampler) Next() float64 {
	u := (float64(p.rng.Uint64()>>11) + 0.5) / (1 << 53) // in (0, 1): no zero service
	if p.lognormal {
		return min(lognormalQuantile(p.mu, p.sigma, u), MaxServiceMS)
	}
	return min(p.s.Quantile(u, p.column), MaxServiceMS)
}

// validateService checks the distribution's settings.
func (s *Spec) validateService(path string) field.List {
	var errs field.List
	d := s.Option(OptService)
	for _, n := range Numbers() {
		v := n.Get(s)
		p := field.Join(path, n.Name)
		if v == 0 && n.Service != d {
			continue
		}
		if n.Service != d {
			errs.Add(p, "is a setting of service %q (service is %q): leave it out", n.Service, d)
			continue
		}
		if n.Unit == "" {
			if math.IsNaN(v) || v < 0 || v > 1 {
				errs.Add(p, "must be between 0 and 1")
			}
		} else if v == 0 {
			errs.Add(p, "is required for service %q: more than 0 and at most %d ms", d, MaxServiceMS)
		} else if math.IsNaN(v) || v < 0 || v > MaxServiceMS {
			errs.Add(p, "must be more than 0 and at most %d ms", MaxServiceMS)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	switch d {
	case ServiceLognormal:
		if s.ServiceP99MS < s.ServiceP50MS {
			errs.Add(field.Join(path, "service_p99_ms"), "must be at least service_p50_ms (%g ms)", s.ServiceP50MS)
		} else if m := s.MeanMS(); !(m <= MaxServiceMS) {
			errs.Add(field.Join(path, "service_p99_ms"), "is too far above service_p50_ms: the mean service time would pass %d ms", MaxServiceMS)
		}
	case ServiceBimodal:
		if s.ServiceSlowMS < s.ServiceFastMS {
			errs.Add(field.Join(path, "service_slow_ms"), "must be at least service_fast_ms (%g ms)", s.ServiceFastMS)
		}
	}
	return errs
}

// SameService reports whether s and o draw the same service times.
func (s *Spec) SameService(o *Spec) bool {
	if s.Option(OptService) != o.Option(OptService) || s.ServiceMS != o.ServiceMS {
		return false
	}
	for _, n := range Numbers() {
		if n.Get(s) != n.Get(o) {
			return false
		}
	}
	return true
}
