package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
)

// Gubernator is one instance of Gubernator v2.13.0
// (github.com/gubernator-io/gubernator/v2) deciding one rate limit key
// (every client's requests count against the one key) with Hits 1 a
// request: its algorithms.go's tokenBucket and leakyBucket, worked from
// the source and checked request by request against the library
// (gubernator_library_test.go):
//
//   - Time is Gubernator's: whole milliseconds, an arrival at t ms reads
//     as floor(t) (epochMillis of the clock: CreatedAt and the cache's
//     MillisecondNow), from the run's t = 0 (only differences count).
//   - The cache item expires when ExpireAt < now (lrucache.go's
//     IsExpired): a window is still live at exactly its reset time; an
//     expired item is removed and a new one made by the request.
//   - TOKEN_BUCKET: a new item holds limit - hits, expires at CreatedAt +
//     duration (hits > limit: OVER_LIMIT, remaining limit); an existing
//     one answers its stored Status, OVER_LIMIT when remaining is 0 (and
//     stores that status), takes the hits when they fit, and when they do
//     not answers OVER_LIMIT, draining remaining to 0 under
//     DRAIN_OVER_LIMIT. Nothing refills before the item expires.
//   - LEAKY_BUCKET (burst = limit, Gubernator's default for Burst 0): a
//     float remaining that leaks in int64(elapsed / rate) steps only (rate
//     = duration / limit ms), capped at the burst, compared as
//     int64(remaining); a hit moves the item's expiry to CreatedAt +
//     duration; the reset time is CreatedAt + (limit -
//     int64(remaining))·int64(rate).
//
// Gubernator's behaviours the gate takes: DRAIN_OVER_LIMIT (option
// drain_over_limit); GLOBAL is the async sharing model (async.go), where
// the key's owner applies the hits the other instances forward with
// DRAIN_OVER_LIMIT at the first forwarded hit's CreatedAt. Left out:
// RESET_REMAINING, DURATION_IS_GREGORIAN, a Burst other than the limit, a
// limit or duration that changes between requests, the LRU's size bound.
type Gubernator struct {
	_         cacheline.Pad // a sweep's points run side by side (package cacheline)
	algorithm string
	limit     int64
	duration  int64 // ms
	drain     bool
	item      gubernatorItem
	_         cacheline.Pad
}

// gubernatorItem is the cache item of the key: its CacheItem's ExpireAt and
// its TokenBucketItem or LeakyBucketItem.
type gubernatorItem struct {
	live     bool
	expireAt int64
	// TokenBucketItem
	status    gubernatorStatus
	remaining int64
	// LeakyBucketItem
	leakyRemaining float64
	updatedAt      int64
	burst          int64
}

// gubernatorStatus is Gubernator's Status: UNDER_LIMIT (0) or OVER_LIMIT.
type gubernatorStatus uint8

const (
	gubernatorUnder gubernatorStatus = iota
	gubernatorOver
)

// gubernatorResp is the RateLimitResp fields the model reads.
type gubernatorResp struct {
	status    gubernatorStatus
	limit     int64
	remaining int64
	resetTime int64
}

// The gubernator gate's type, parameters, options and their choices.
const (
	TypeGubernator                    = Type("gubernator")
	ParamDuration                     = "duration_ms"
	OptionGubernatorAlgorithm         = "algorithm"
	OptionDrainOverLimit              = "drain_over_limit"
	GubernatorTokenBucket             = "token-bucket"
	GubernatorLeakyBucket             = "leaky-bucket"
	GubernatorDrainNo                 = "no"
	GubernatorDrainYes                = "yes"
	gubernatorMaxDurationMS   float64 = MaxWindowMS
)

// NewGubernator is one instance's gate: limit hits per duration ms by
// algorithm (GubernatorTokenBucket or GubernatorLeakyBucket), draining
// the remaining count on an over-limit request when drain is set.
func NewGubernator(algorithm string, limit, durationMS int64, drain bool) *Gubernator {
	return &Gubernator{algorithm: algorithm, limit: limit, duration: durationMS, drain: drain}
}

// gubernatorMS is Gubernator's clock in whole ms for the lab's t ms.
func gubernatorMS(t float64) int64 { return xrateNS(t) / 1e6 }

// Offer is GetRateLimits with Hits 1 at t on the instance that owns the
// key.
func (g *Gubernator) Offer(t float64, _ int32) (float64, bool) {
	now := gubernatorMS(t)
	return t, g.apply(now, now, 1, g.drain).status == gubernatorUnder
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*Gubernator) releaseAt(y float64, _ int32) float64 { return y }

// apply is the worker's GetRateLimit of a request with hits at createdAt,
// the cache read at now.
func (g *Gubernator) apply(now, createdAt, hits int64, drain bool) gubernatorResp {
	if g.limit == 0 { // every request over the limit (and no division by 0)
		return gubernatorResp{status: gubernatorOver}
	}
	if g.item.live && g.item.expireAt < now { // LRUCache.GetItem: IsExpired
		g.item.live = false
	}
	if g.algorithm == GubernatorLeakyBucket {
		return g.leaky(createdAt, hits, drain)
	}
	return g.token(createdAt, hits, drain)
}

// token is tokenBucket.
func (g *Gubernator) token(createdAt, hits int64, drain bool) gubernatorResp {
	it := &g.item
	if !it.live { // tokenBucketNewItem
		*it = gubernatorItem{live: true, expireAt: createdAt + g.duration, remaining: g.limit - hits}
		rl := gubernatorResp{status: gubernatorUnder, limit: g.limit, remaining: it.remaining, resetTime: it.expireAt}
		if hits > g.limit {
			rl.status, rl.remaining, it.remaining = gubernatorOver, g.limit, g.limit
		}
		return rl
	}
	rl := gubernatorResp{status: it.status, limit: g.limit, remaining: it.remaining, resetTime: it.expireAt}
	switch {
	case hits == 0:
	case rl.remaining == 0:
		rl.status = gubernatorOver
		it.status = rl.status
	case it.remaining == hits:
		it.remaining, rl.remaining = 0, 0
	case hits > it.remaining:
		rl.status = gubernatorOver
		if drain {
			it.remaining, rl.remaining = 0, 0
		}
	default:
		it.remaining -= hits
		rl.remaining = it.remaining
	}
	return rl
}

// leaky is leakyBucket.
func (g *Gubernator) leaky(createdAt, hits int64, drain bool) gubernatorResp {
	it := &g.item
	rate := float64(g.duration) / float64(g.limit)
	burst := g.limit
	if !it.live { // leakyBucketNewItem
		*it = gubernatorItem{live: true, expireAt: createdAt + g.duration, leakyRemaining: float64(burst - hits), updatedAt: createdAt, burst: burst}
		rl := gubernatorResp{status: gubernatorUnder, limit: g.limit, remaining: burst - hits, resetTime: createdAt + (g.limit-(burst-hits))*int64(rate)}
		if hits > burst {
			rl.status, rl.remaining = gubernatorOver, 0
			rl.resetTime = createdAt + g.limit*int64(rate)
			it.leakyRemaining = 0
		}
		return rl
	}
	if it.burst != burst { // an item from the owner's broadcast holds Burst = Limit: the same
		if burst > int64(it.leakyRemaining) {
			it.leakyRemaining = float64(burst)
		}
		it.burst = burst
	}
	if hits != 0 {
		it.expireAt = createdAt + g.duration // UpdateExpiration
	}
	leak := float64(createdAt-it.updatedAt) / rate
	if int64(leak) > 0 {
		it.leakyRemaining += leak
		it.updatedAt = createdAt
	}
	if int64(it.leakyRemaining) > it.burst {
		it.leakyRemaining = float64(it.burst)
	}
	rl := gubernatorResp{status: gubernatorUnder, limit: g.limit, remaining: int64(it.leakyRemaining),
		resetTime: createdAt + (g.limit-int64(it.leakyRemaining))*int64(rate)}
	switch {
	case int64(it.leakyRemaining) == 0 && hits > 0:
		rl.status = gubernatorOver
	case int64(it.leakyRemaining) == hits:
		it.leakyRemaining = 0
		rl.remaining = 0
		rl.resetTime = createdAt + (rl.limit-rl.remaining)*int64(rate)
	case hits > int64(it.leakyRemaining):
		rl.status = gubernatorOver
		if drain {
			it.leakyRemaining, rl.remaining = 0, 0
		}
	case hits == 0:
	default:
		it.leakyRemaining -= float64(hits)
		rl.remaining = int64(it.leakyRemaining)
		rl.resetTime = createdAt + (rl.limit-rl.remaining)*int64(rate)
	}
	return rl
}

// takeBroadcast is UpdatePeerGlobals on a peer that does not own the key:
// the owner's answer rl replaces the cached item, as of now.
func (g *Gubernator) takeBroadcast(rl gubernatorResp, now int64) {
	it := gubernatorItem{live: true, expireAt: rl.resetTime}
	if g.algorithm == GubernatorLeakyBucket {
		it.leakyRemaining, it.burst, it.updatedAt = float64(rl.remaining), rl.limit, now
	} else {
		it.status, it.remaining = rl.status, rl.remaining
	}
	g.item = it
}

// Remaining is what the cached item has left (0 without one).
func (g *Gubernator) Remaining() float64 {
	if !g.item.live {
		return 0
	}
	if g.algorithm == GubernatorLeakyBucket {
		return g.item.leakyRemaining
	}
	return float64(g.item.remaining)
}

func gubernatorKind() *Kind {
	return &Kind{
		Type: TypeGubernator,
		Model: "Gubernator v2.13.0 (limit per duration_ms, one key): its TOKEN_BUCKET (a window of limit hits from the key's first hit, " +
			"live through its reset time) or LEAKY_BUCKET (burst = limit, leaking in whole steps) in whole ms, DRAIN_OVER_LIMIT on request; " +
			"as instances with sharing async, its GLOBAL behaviour; policer",
		Params: []Param{
			limitParam,
			{Name: ParamDuration, Admits: AdmitsSmaller, Label: "Duration", Unit: "ms", Integer: true, Min: 1, Max: gubernatorMaxDurationMS, Default: 1000,
				Doc: "RateLimitReq.Duration: the window (token bucket) or the time to leak limit hits (leaky bucket), whole ms"},
		},
		Options: []Option{
			{Name: OptionGubernatorAlgorithm, Label: "Algorithm", Choices: []string{GubernatorTokenBucket, GubernatorLeakyBucket},
				Doc: "RateLimitReq.Algorithm: TOKEN_BUCKET or LEAKY_BUCKET"},
			{Name: OptionDrainOverLimit, Label: "Drain over limit", Choices: []string{GubernatorDrainNo, GubernatorDrainYes},
				Doc: "Behavior DRAIN_OVER_LIMIT on the clients' requests: an over-limit request drains the remaining count"},
		},
		Size:       ParamLimit,
		Stage:      true,
		RetryAfter: "the first whole ms a request would pass: after the token bucket window's reset time, or once a whole hit has leaked",
		Example:    Params{ParamLimit: 100, ParamDuration: 1000},
		New: func(s *Spec, p Params, _ Env) (Gate, error) {
			return NewGubernator(s.Options[OptionGubernatorAlgorithm], int64(p[ParamLimit]), int64(p[ParamDuration]),
				s.Options[OptionDrainOverLimit] == GubernatorDrainYes), nil
		},
		Curve:   gubernatorCurve,
		Nominal: func(p Params, windowMS float64) float64 { return p[ParamLimit] * windowMS / p[ParamDuration] },
	}
}

// gubernatorCurve bounds one instance's admissions under either
// algorithm (the curve reads no options), limit L per duration D ms, in a
// closed window of d ms, which spans at most floor(d)+1 whole ms. Token
// bucket: a window is live D+1 whole ms and the next starts after it, so
// d meets at most floor(d/(D+1))+2 windows of L: at most L(d/D + 2).
// Leaky bucket: what remains stays below L+1 (the cap applies only when
// int64(remaining) > L) and at most (floor(d)+1)·L/D leaks in: at most
// L + 1 + (floor(d)+1)·L/D, below L(d/D + 2) + L/D for L >= 1. Both lie
// under 2L + L/D + d·L/D.
func gubernatorCurve(p Params) calculus.Curve {
	limit, duration := p[ParamLimit], p[ParamDuration]
	if limit == 0 {
		return calculus.Affine(0, 0)
	}
	if duration <= 0 {
		return calculus.Affine(0, limit)
	}
	return calculus.Affine(limit/duration, 2*limit+limit/duration)
}

// NextAdmitMS is the first time at which a request would pass with
// nothing else arriving (Advisor): the first whole ms after a token
// bucket window's reset time, or at which a leaky bucket has leaked a
// whole hit. Gubernator itself answers with its reset time.
func (g *Gubernator) NextAdmitMS(t float64, _ int32) float64 {
	if g.limit == 0 {
		return math.Inf(1)
	}
	guess := float64(g.item.expireAt + 1)
	if g.algorithm == GubernatorLeakyBucket {
		guess = min(guess, float64(g.item.updatedAt)+math.Ceil(float64(g.duration)/float64(g.limit)))
	}
	return firstAdmit(t, max(guess, t), func(x float64) bool {
		c := *g
		now := gubernatorMS(x)
		return c.apply(now, now, 1, c.drain).status == gubernatorUnder
	})
}
