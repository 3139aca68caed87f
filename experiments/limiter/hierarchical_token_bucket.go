package limiter

// HierarchicalTokenBucket is a work-conserving per-client limiter: a global
// token bucket (rate, burst) caps the aggregate, and one token bucket per
// client (rate and burst split by equal or weighted shares, as in
// PerClientTokenBucket) holds that client's guaranteed share. Every bucket
// starts full and refills continuously.
//
// The model, in the manner of a hierarchical token bucket whose parent's
// rate is the sum of its children's assured rates:
//
//   - The tokens in the client buckets are reservations on the global
//     bucket. With G the global bucket's content and C_i client i's, the
//     limiter keeps G >= sum(C_i) at all times.
//   - A request from client i with C_i >= 1 takes one token from its own
//     bucket and one from the global bucket: the client is inside its
//     guaranteed share, and the invariant guarantees G >= C_i >= 1, so a
//     client within its share is never refused, however hard the others push.
//   - A request from a client whose own bucket holds less than one token
//     borrows: it takes one global token, and only when the global bucket
//     holds at least one token beyond every client's reservation
//     (G - 1 >= sum(C_i)). The surplus comes from capacity that quiet
//     clients leave unused: when a client's bucket is full its refill stops,
//     while the global bucket keeps filling, so the unused share of idle
//     clients becomes borrowable instead of being lost.
//   - Otherwise the request is rejected (a policer: releases are at t).
//
// The invariant holds because both levels refill at the same total rate
// (the client rates sum to the global rate) with the same total capacity
// (the client bursts sum to the global burst), own-share admissions take a
// token from both levels, and borrowing takes only surplus.
//
// Every admission takes a global token, so the output obeys the global
// arrival curve alpha(d) = burst + rate*d however the clients behave. When
// every client is busy, no client bucket is ever full, the surplus stays
// below one token and the limiter behaves like the equal-share (or
// weighted) per-client bucket; when some are quiet, busy clients share what
// they leave. Lending is first come, first served: borrowers with equal
// demand get equal parts of the surplus; unequal borrowers get it in
// proportion to their excess demand (not max-min fair).
//
// sum(C_i) is kept exactly, without visiting every client: non-full client
// buckets grow linearly, so their sum is a value plus a rate times the
// elapsed time, and a min-heap of the times at which they become full moves
// them to the full set when their refill stops. A decision costs O(log n)
// for n clients and allocates nothing.
type HierarchicalTokenBucket struct {
	// global bucket
	refillPerMS, burst, tokens, lastMS float64

	// client buckets; tok and last are valid while the client is not full
	cRefill, cBurst, cTok, cLast, fullAt []float64
	pos                                  []int32 // heap position, -1 when full
	heap                                 []int32 // non-full clients by fullAt

	// sum of client buckets = fullSum + partSum at aggMS
	burstSum float64 // sum of cBurst, for an exact reset when all are full
	fullSum  float64 // sum of cBurst over full clients
	partSum  float64 // sum of tokens over non-full clients, at aggMS
	partRate float64 // sum of cRefill over non-full clients
	aggMS    float64
}

// NewHierarchicalTokenBucket returns a limiter of rate (requests/s) and
// burst in all, split between clients by weights (one per client; all
// equal for equal shares). All buckets start full.
func NewHierarchicalTokenBucket(rateRPS, burst float64, weights []float64) *HierarchicalTokenBucket {
	n := len(weights)
	total := 0.0
	for _, w := range weights {
		total += w
	}
	b := &HierarchicalTokenBucket{
		refillPerMS: rateRPS / 1000,
		burst:       burst,
		tokens:      burst,
		cRefill:     make([]float64, n),
		cBurst:      make([]float64, n),
		cTok:        make([]float64, n),
		cLast:       make([]float64, n),
		fullAt:      make([]float64, n),
		pos:         make([]int32, n),
		heap:        make([]int32, 0, n),
	}
	for i, w := range weights {
		share := w / total
		b.cRefill[i] = rateRPS * share / 1000
		b.cBurst[i] = burst * share
		b.cTok[i] = b.cBurst[i]
		b.pos[i] = -1
		b.burstSum += b.cBurst[i]
	}
	b.fullSum = b.burstSum
	return b
}

// Offer admits from the client's own share, else from the global surplus.
func (b *HierarchicalTokenBucket) Offer(t float64, client int32) (float64, bool) {
	b.advance(t)
	b.tokens = min(b.burst, b.tokens+(t-b.lastMS)*b.refillPerMS)
	b.lastMS = t
	if b.tokens < 1 {
		return 0, false
	}
	if b.own(client, t) >= 1 {
		b.take(client, t)
		b.tokens--
		return t, true
	}
	if b.tokens-1 >= b.fullSum+b.partSum {
		b.tokens--
		return t, true
	}
	return 0, false
}

// Reserved is the sum of the client buckets after the last decision.
func (b *HierarchicalTokenBucket) Reserved() float64 { return b.fullSum + b.partSum }

// Tokens is the global bucket's content after the last decision.
func (b *HierarchicalTokenBucket) Tokens() float64 { return b.tokens }

// own is client c's bucket at t (after advance(t)).
func (b *HierarchicalTokenBucket) own(c int32, t float64) float64 {
	if b.pos[c] < 0 {
		return b.cBurst[c]
	}
	return min(b.cBurst[c], b.cTok[c]+(t-b.cLast[c])*b.cRefill[c])
}

// advance moves the aggregate to t, turning clients whose bucket filled up
// by t into full ones, in order of the time they filled.
func (b *HierarchicalTokenBucket) advance(t float64) {
	for len(b.heap) > 0 {
		c := b.heap[0]
		ft := b.fullAt[c]
		if ft > t {
			break
		}
		if ft > b.aggMS {
			b.partSum += b.partRate * (ft - b.aggMS)
			b.aggMS = ft
		}
		b.partSum -= b.cBurst[c]
		b.partRate -= b.cRefill[c]
		b.fullSum += b.cBurst[c]
		b.pop()
	}
	if len(b.heap) == 0 {
		// Every client is full: reset the sums exactly, so rounding
		// never accumulates across busy periods.
		b.partSum, b.partRate, b.fullSum = 0, 0, b.burstSum
	} else if t > b.aggMS {
		b.partSum += b.partRate * (t - b.aggMS)
	}
	b.aggMS = t
}

// take removes one token from client c's bucket at t (after advance(t)).
func (b *HierarchicalTokenBucket) take(c int32, t float64) {
	if b.pos[c] < 0 {
		b.fullSum -= b.cBurst[c]
		b.cTok[c] = b.cBurst[c] - 1
		b.cLast[c] = t
		b.partSum += b.cTok[c]
		b.partRate += b.cRefill[c]
		b.fullAt[c] = t + 1/b.cRefill[c]
		b.push(c)
		return
	}
	b.cTok[c] = b.own(c, t) - 1
	b.cLast[c] = t
	b.partSum--
	b.fullAt[c] = t + (b.cBurst[c]-b.cTok[c])/b.cRefill[c]
	b.down(int(b.pos[c]))
}

// less orders the heap by fill time, then client index (a total order).
func (b *HierarchicalTokenBucket) less(i, j int) bool {
	ci, cj := b.heap[i], b.heap[j]
	if b.fullAt[ci] != b.fullAt[cj] {
		return b.fullAt[ci] < b.fullAt[cj]
	}
	return ci < cj
}

func (b *HierarchicalTokenBucket) swap(i, j int) {
	b.heap[i], b.heap[j] = b.heap[j], b.heap[i]
	b.pos[b.heap[i]] = int32(i)
	b.pos[b.heap[j]] = int32(j)
}

func (b *HierarchicalTokenBucket) push(c int32) {
	b.heap = append(b.heap, c) // within the capacity n: no allocation
	i := len(b.heap) - 1
	b.pos[c] = int32(i)
	for i > 0 {
		p := (i - 1) / 2
		if !b.less(i, p) {
			break
		}
		b.swap(i, p)
		i = p
	}
}

func (b *HierarchicalTokenBucket) pop() {
	last := len(b.heap) - 1
	b.swap(0, last)
	b.pos[b.heap[last]] = -1
	b.heap = b.heap[:last]
	if last > 0 {
		b.down(0)
	}
}

func (b *HierarchicalTokenBucket) down(i int) {
	n := len(b.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && b.less(r, l) {
			m = r
		}
		if !b.less(m, i) {
			return
		}
		b.swap(i, m)
		i = m
	}
}

// TypeHierarchical is the work-conserving per-client bucket's type name.
const TypeHierarchical Type = "hierarchical-token-bucket"

func hierarchicalTokenBucketKind() *Kind {
	return sharedBucketKind(TypeHierarchical, "work-conserving per-client buckets: guaranteed shares, unused share lent to busy clients under a global (rate_rps, burst) bucket",
		func(rateRPS, burst float64, weights []float64) Gate {
			return NewHierarchicalTokenBucket(rateRPS, burst, weights)
		})
}
