package limiter

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/field"
)

// XTimeRatePerKey is one golang.org/x/time/rate Limiter per key (XTimeRate,
// exact to the nanosecond), as Traefik's rateLimit middleware keeps one per
// source (pkg/middlewares/ratelimiter: rate.NewLimiter(rate, burst) for a
// source it has not seen, Reserve, then Cancel and 429 past maxDelay). A
// key's limiter is made full at its first request and forgotten when the
// key has been idle: Traefik keeps the limiters in a ttlmap whose entries
// expire at floor(last use in Unix seconds) + ttl, whole seconds, every
// request (also a refused one) setting the expiry again; a request of an
// expired key gets a new, full limiter. idle_s is that ttl (0: never
// forgotten); Traefik sets it to 2 s for rates of at least 1/s, else
// 1 + int(1/rate) s. The lab's time is read as Unix time (a shadow replay's
// is), so a run that starts at 0 reads its seconds from 0.
//
// Per key in reserve mode with max_wait_ms > 0, requests of different keys
// wait independently and leave out of arrival order, which the lab's FIFO
// server cannot take over several clients: refused, as nginx's per-key
// delays are. The idle reset can give a key a full bucket before the
// refill would, so the gate states no arrival curve.
type XTimeRatePerKey struct {
	_         cacheline.Pad // a sweep's points run side by side (package cacheline)
	rate      float64
	burst     int
	reserve   bool
	maxWaitMS float64
	idleS     int64
	keys      []XTimeRate
	live      []bool
	expiry    []int64 // Unix seconds
	_         cacheline.Pad
}

// NewXTimeRatePerKey builds the gate; keys are made as they come.
func NewXTimeRatePerKey(rateRPS float64, burst int, reserve bool, maxWaitMS float64, idleS int64) *XTimeRatePerKey {
	return &XTimeRatePerKey{rate: rateRPS, burst: burst, reserve: reserve, maxWaitMS: maxWaitMS, idleS: idleS}
}

// key is the client's limiter at t: a new, full one for a key not seen or
// expired; the expiry is set again.
func (g *XTimeRatePerKey) key(t float64, k int32) *XTimeRate {
	if int(k) >= len(g.live) {
		n := max(int(k)+1, 2*len(g.live))
		g.keys = append(g.keys, make([]XTimeRate, n-len(g.keys))...)
		g.live = append(g.live, make([]bool, n-len(g.live))...)
		g.expiry = append(g.expiry, make([]int64, n-len(g.expiry))...)
	}
	sec := int64(math.Floor(t / 1000))
	if !g.live[k] || g.idleS > 0 && g.expiry[k] <= sec {
		g.keys[k] = *NewXTimeRate(g.rate, g.burst, g.reserve, g.maxWaitMS)
		g.live[k] = true
	}
	g.expiry[k] = sec + g.idleS
	return &g.keys[k]
}

// Offer is the key's limiter's decision.
func (g *XTimeRatePerKey) Offer(t float64, client int32) (float64, bool) {
	return g.key(t, client).Offer(t, 0)
}

// NextAdmitMS is the key's limiter's answer, or the start of the second
// its entry expires at (a new, full limiter then), whichever is first.
func (g *XTimeRatePerKey) NextAdmitMS(t float64, client int32) float64 {
	if g.burst < 1 {
		return math.Inf(1)
	}
	if int(client) >= len(g.live) || !g.live[client] {
		return t
	}
	sec := int64(math.Floor(t / 1000))
	if g.idleS > 0 && g.expiry[client] <= sec {
		return t
	}
	next := g.keys[client].NextAdmitMS(t, 0)
	if g.idleS > 0 {
		next = min(next, max(t, float64(g.expiry[client])*1000))
	}
	return next
}

// TypeXTimeRatePerKey is the per-key x/time/rate gate's type name.
const TypeXTimeRatePerKey Type = "x-time-rate-per-key"

// ParamIdle is how long a key may be idle before its limiter is forgotten.
const ParamIdle = "idle_s"

func xTimeRatePerKeyKind() *Kind {
	return &Kind{
		Type:       TypeXTimeRatePerKey,
		RetryAfter: "the key's limiter's own (ReserveN, DelayFrom, Cancel, to the ns), or the second its idle entry expires, whichever is first",
		Model:      "one golang.org/x/time/rate Limiter per client (Traefik's rateLimit per source): made full at the client's first request, forgotten after idle_s whole seconds idle",
		Params: []Param{
			{Name: ParamRate, Admits: AdmitsLarger, Label: "Rate", Unit: "req/s", Units: "requests/s", Min: 0, Max: MaxRateRPS,
				Doc: "rate.Limit of each key's limiter: tokens per second"},
			{Name: ParamBurst, Admits: AdmitsLarger, Label: "Burst", Unit: "requests", Integer: true, Min: 0, Max: MaxSize,
				Doc: "each key's burst: bucket size and starting tokens (Traefik: burst below 1 is 1)"},
			{Name: ParamMaxWait, Admits: AdmitsLarger, Label: "Max wait", Unit: "ms", Min: 0, Max: MaxWindowMS, Default: 100,
				Doc: "reserve mode: the longest DelayFrom a request accepts before CancelAt (Traefik's maxDelay, 1/(2 × whole rate), 500 ms below 1/s)"},
			{Name: ParamIdle, Admits: AdmitsNone, Label: "Idle", Unit: "s", Integer: true, Min: 0, Max: 86_400, Optional: true,
				Doc: "a key idle this many whole seconds starts over with a full limiter (Traefik's ttl: 2 s at rates of 1/s and more, else 1 + int(1/rate)); 0: never"},
		},
		Options: []Option{xrateModeOption},
		Size:    ParamBurst,
		Stage:   true,
		Example: Params{ParamRate: 5, ParamBurst: 5, ParamMaxWait: 0, ParamIdle: 2}, // per key: 20 clients, about 100 requests/s
		New: func(s *Spec, p Params, env Env) (Gate, error) {
			mode := s.Option(OptionXTimeRateMode)
			if mode != "" && mode != XTimeRateAllow && mode != XTimeRateReserve {
				return nil, fmt.Errorf("x-time-rate-per-key: mode %q", mode)
			}
			reserve := mode == XTimeRateReserve
			if reserve && p[ParamMaxWait] > 0 && len(env.Weights) > 1 {
				return nil, fmt.Errorf("x-time-rate-per-key in reserve mode with max_wait_ms %g releases requests of different keys out of arrival order, which the lab's FIFO server cannot take: set max_wait_ms 0 or mode allow", p[ParamMaxWait])
			}
			return NewXTimeRatePerKey(p[ParamRate], int(p[ParamBurst]), reserve, p[ParamMaxWait], int64(p[ParamIdle])), nil
		},
		Keyed:        func(*Spec) bool { return true },
		CheckClients: checkPerKeyWaits,
		DelayBoundMS: func(s *Spec, p Params) float64 {
			if s.Option(xrateModeOption.Name) != XTimeRateReserve {
				return 0
			}
			return p[ParamMaxWait]
		},
		Nominal: rateNominal,
	}
}

// checkPerKeyWaits refuses per-key waits over several clients.
func checkPerKeyWaits(s *Spec, path string, weights []float64) field.List {
	var errs field.List
	if len(weights) < 2 || s.Option(OptionXTimeRateMode) != XTimeRateReserve {
		return nil
	}
	for _, p := range s.Points() {
		if p[ParamMaxWait] > 0 {
			errs.Add(field.Join(path, ParamMaxWait), "reserve mode with max_wait_ms %g over %d clients releases requests of different keys out of arrival order, which the lab's FIFO server cannot take: set max_wait_ms 0 or mode \"allow\"",
				p[ParamMaxWait], len(weights))
			return errs
		}
	}
	return nil
}
