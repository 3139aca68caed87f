package limiter

// PerClientTokenBucket gives every client its own token bucket (initially
// full). With equal shares each of n clients gets rate/n and burst/n; with
// weighted shares client i gets weight_i/sum(weights) of both. Shares are
// static: what a quiet client does not use is lost.
type PerClientTokenBucket struct {
	refillPerMS []float64
	burst       []float64
	tokens      []float64
	lastMS      []float64
}

// NewPerClientTokenBucket splits rate (requests/s) and burst by weights
// (one per client; all equal for equal shares).
func NewPerClientTokenBucket(rateRPS, burst float64, weights []float64) *PerClientTokenBucket {
	n := len(weights)
	total := 0.0
	for _, w := range weights {
		total += w
	}
	b := &PerClientTokenBucket{
		refillPerMS: make([]float64, n),
		burst:       make([]float64, n),
		tokens:      make([]float64, n),
		lastMS:      make([]float64, n),
	}
	for i, w := range weights {
		share := w / total
		b.refillPerMS[i] = rateRPS * share / 1000
		b.burst[i] = burst * share
		b.tokens[i] = b.burst[i]
	}
	return b
}

// Offer runs the client's own bucket.
func (b *PerClientTokenBucket) Offer(t float64, client int32) (float64, bool) {
	tok := min(b.burst[client], b.tokens[client]+(t-b.lastMS[client])*b.refillPerMS[client])
	b.lastMS[client] = t
	if tok < 1 {
		b.tokens[client] = tok
		return 0, false
	}
	b.tokens[client] = tok - 1
	return t, true
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
	return sharedBucketKind(TypePerClient, "one token bucket per client, rate and burst split by equal or weighted shares",
		func(rateRPS, burst float64, weights []float64) Gate {
			return NewPerClientTokenBucket(rateRPS, burst, weights)
		})
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
		Curve:   tokenBucketCurve,
		Nominal: rateNominal,
	}
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
