package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/field"
)

// PerClientTokenBucket gives every client its own token bucket (initially
// full). With equal shares each of n clients gets rate/n and burst/n; with
// weighted shares client i gets rate*w_i/W and burst*w_i/W, W the sum of
// the weights. Shares are static: what a quiet client does not use is lost.
//
// Every decision is exact on the float64 values: a client holding at least
// one token is admitted, one holding less is not, with no rounding in the
// shares or the refill (see shareSign). A bucket is kept as the time it was
// last full and the number of tokens taken since.
type PerClientTokenBucket struct {
	_                     cacheline.Pad // a sweep's points run side by side (package cacheline)
	rateRPS, burst, total float64
	weight                []float64
	enough                []bool    // the burst share holds a whole token
	anchor                []float64 // when the bucket was last full
	taken                 []float64 // tokens taken since (a whole number)
	_                     cacheline.Pad
}

// NewPerClientTokenBucket splits rate (requests/s) and burst by weights
// (one per client; all equal for equal shares).
func NewPerClientTokenBucket(rateRPS, burst float64, weights []float64) *PerClientTokenBucket {
	total, enough := shares(burst, weights)
	return &PerClientTokenBucket{
		rateRPS: rateRPS, burst: burst, total: total,
		weight: append([]float64(nil), weights...), enough: enough,
		anchor: make([]float64, len(weights)),
		taken:  make([]float64, len(weights)),
	}
}

// Offer runs the client's own bucket.
func (b *PerClientTokenBucket) Offer(t float64, client int32) (float64, bool) {
	k := b.taken[client]
	if k == 0 { // full since it was last seen: it holds its burst share
		if !b.enough[client] {
			return 0, false
		}
		b.anchor[client], b.taken[client] = t, 1
		return t, true
	}
	ok, full := shareTest(t, b.anchor[client], b.rateRPS, b.weight[client], b.burst, k, b.total)
	switch {
	case !ok:
		return 0, false
	case full: // filled up again: start over from full
		b.anchor[client], b.taken[client] = t, 1
	default:
		b.taken[client] = k + 1
	}
	return t, true
}

// NextAdmitMS is when client's own bucket holds a whole token again
// (Advisor), decided exactly as Offer decides: the first float64 time at
// which the content burst*w/W - k + (x - a)*rate*w/(1000*W) reaches 1;
// +Inf for a client whose share never holds a token.
func (b *PerClientTokenBucket) NextAdmitMS(t float64, client int32) float64 {
	k := b.taken[client]
	if k == 0 {
		if b.enough[client] {
			return t
		}
		return math.Inf(1)
	}
	return shareNextAdmit(t, b.anchor[client], b.rateRPS, b.weight[client], b.burst, k, b.total)
}

// shareNextAdmit is the first float64 time from t at which a share of
// weight w of W (anchored at a, k tokens taken) of a bucket of rate and
// burst holds a whole token again: burst*w/W - k + (x - a)*rate*w/(1000*W)
// reaches 1, decided by shareSign as Offer decides.
func shareNextAdmit(t, a, rate, w, burst, k, W float64) float64 {
	guess := a + 1000*((k+1)*W-burst*w)/(rate*w)
	return firstAdmit(t, guess, func(x float64) bool {
		return shareSign(x, a, rate, w, burst, k+1, W) >= 0
	})
}

// TypePerClient is the per-client token bucket's type name.
const TypePerClient Type = "per-client-token-bucket"

// Shares of a per-client limiter.
const (
	SharesEqual    = "equal"
	SharesWeighted = "weighted"
)

// sharesOption splits a per-client limiter's rate and burst.
var sharesOption = Option{Name: "shares", Label: "Shares", Choices: []string{SharesEqual, SharesWeighted},
	Doc: "equal: every client the same; weighted: by the workload's client weights"}

func perClientTokenBucketKind() *Kind {
	k := sharedBucketKind(TypePerClient, "one token bucket per client, rate and burst split by equal or weighted shares",
		func(rateRPS, burst float64, weights []float64) Gate {
			return NewPerClientTokenBucket(rateRPS, burst, weights)
		})
	k.RetryAfter = "when the client's own bucket holds a whole token again"
	return k
}

// sharedBucketKind is the row of a gate that splits a (rate_rps, burst)
// bucket between the clients by its shares option. The client buckets'
// rates and bursts sum to (r, b) (and a work-conserving gate takes a global
// token for every admission), so the aggregate obeys b + r*d.
func sharedBucketKind(typ Type, model string, newGate func(rateRPS, burst float64, weights []float64) Gate) *Kind {
	return &Kind{
		Type:      typ,
		Model:     model,
		Params:    []Param{rateParam, burstParam},
		Options:   []Option{sharesOption},
		Size:      ParamBurst,
		Stage:     true,
		PerClient: true,
		Example:   Params{ParamRate: 100, ParamBurst: 100},
		New: func(s *Spec, p Params, env Env) (Gate, error) {
			return newGate(p[ParamRate], p[ParamBurst], shareWeights(s, env.Weights)), nil
		},
		CheckClients: checkShares,
		Curve:        tokenBucketCurve,
		FlowCurves:   shareCurves,
		Nominal:      rateNominal,
	}
}

// checkShares refuses a burst that, split over the clients by the spec's
// shares, leaves some client less than one token: that client could never
// be admitted, a configuration mistake rather than a result.
func checkShares(s *Spec, path string, weights []float64) field.List {
	var errs field.List
	bursts := s.ValuesOf(ParamBurst)
	if len(bursts) == 0 || len(weights) == 0 {
		return nil
	}
	total, least := 0.0, math.Inf(1)
	for _, w := range shareWeights(s, weights) {
		total += w
		least = min(least, w)
	}
	for i, b := range bursts {
		if share := b * least / total; share < 1 {
			p := field.Join(path, ParamBurst)
			if len(bursts) > 1 {
				p = field.Index(p, i)
			}
			errs.Add(p, "%g split over %d clients (%s shares) leaves a client %.3g tokens: it could never be admitted; give burst at least %.0f",
				b, len(weights), s.Option(sharesOption.Name), share, math.Ceil(total/least))
		}
	}
	return errs
}

// shareCurves are the client buckets' curves: client i's own bucket
// (burst*w_i/W, rate*w_i/W), and the others' buckets together (the rest
// of burst and rate).
func shareCurves(s *Spec, p Params, weights []float64) (own, cross []calculus.Curve) {
	ws := shareWeights(s, weights)
	total := 0.0
	for _, w := range ws {
		total += w
	}
	r, b := calculus.PerMS(p[ParamRate]), p[ParamBurst]
	for _, w := range ws {
		rest := total - w
		own = append(own, calculus.Affine(r*w/total, b*w/total))
		cross = append(cross, calculus.Affine(r*rest/total, b*rest/total))
	}
	return own, cross
}

// shareWeights are the clients' weights under the spec's shares: the
// workload's weights when weighted, else all 1.
func shareWeights(s *Spec, weights []float64) []float64 {
	if s.Option(sharesOption.Name) == SharesWeighted {
		return weights
	}
	w := make([]float64, len(weights))
	for i := range w {
		w[i] = 1
	}
	return w
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*PerClientTokenBucket) releaseAt(y float64, _ int32) float64 { return y }
