package limiter

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
	rateRPS, burst, total float64
	weight                []float64
	enough                []bool    // the burst share holds a whole token
	anchor                []float64 // when the bucket was last full
	taken                 []float64 // tokens taken since (a whole number)
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
