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
