package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
)

// TokenBucket is a token bucket of size burst, initially full, refilled
// continuously at rate tokens per second. A request takes one token and
// passes at once; with less than one token it is rejected (a policer).
//
// Its output obeys the arrival curve alpha(d) = burst + rate*d: in any
// window of length d it releases at most burst + rate*d/1000 requests.
type TokenBucket struct {
	_           cacheline.Pad // a sweep's points run side by side (package cacheline)
	refillPerMS float64
	burst       float64
	tokens      float64
	lastMS      float64
	_           cacheline.Pad
}

// NewTokenBucket returns a full bucket; rate in requests/s.
func NewTokenBucket(rateRPS, burst float64) *TokenBucket {
	return &TokenBucket{refillPerMS: rateRPS / 1000, burst: burst, tokens: burst}
}

// Offer refills for the time since the last arrival, then takes a token.
func (b *TokenBucket) Offer(t float64, _ int32) (float64, bool) {
	b.tokens = min(b.burst, b.tokens+(t-b.lastMS)*b.refillPerMS)
	b.lastMS = t
	if b.tokens < 1 {
		return 0, false
	}
	b.tokens--
	return t, true
}

// NextAdmitMS is when the bucket holds a whole token again (Advisor): the
// first float64 time at which Offer's own refill reaches one token.
func (b *TokenBucket) NextAdmitMS(t float64, _ int32) float64 {
	if b.tokens >= 1 {
		return t
	}
	if b.refillPerMS <= 0 || b.burst < 1 {
		return math.Inf(1)
	}
	return firstAdmit(t, b.lastMS+(1-b.tokens)/b.refillPerMS, func(x float64) bool {
		return b.tokens+(x-b.lastMS)*b.refillPerMS >= 1
	})
}

// Tokens is the bucket's content after the last decision.
func (b *TokenBucket) Tokens() float64 { return b.tokens }

// TypeTokenBucket is the token bucket's type name.
const TypeTokenBucket Type = "token-bucket"

func tokenBucketKind() *Kind {
	return &Kind{
		Type:    TypeTokenBucket,
		Model:   "token bucket (rate_rps, burst), starts full; policer",
		Params:  []Param{rateParam, burstParam},
		Size:    ParamBurst,
		Stage:   true,
		Example: Params{ParamRate: 100, ParamBurst: 100},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewTokenBucket(p[ParamRate], p[ParamBurst]), nil
		},
		Curve:      tokenBucketCurve,
		Nominal:    rateNominal,
		RetryAfter: "when the bucket holds a whole token again",
		Leases:     true,
	}
}

// tokenBucketCurve is a token bucket's arrival curve, b + r*d.
func tokenBucketCurve(p Params) calculus.Curve {
	return calculus.Affine(calculus.PerMS(p[ParamRate]), p[ParamBurst])
}

// rateNominal is what a rate promises about a window: rate × window.
func rateNominal(p Params, windowMS float64) float64 { return p[ParamRate] * windowMS / 1000 }

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*TokenBucket) releaseAt(y float64, _ int32) float64 { return y }
