package limiter

import (
	"math"
	"math/big"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
)

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
// Every bucket is decided in exact arithmetic on the float64 values, as in
// PerClientTokenBucket: a bucket is kept as the time it was last full and
// the tokens taken since, so its content is a linear function of t with
// no rounding (see shareSign). The own-share test is the per-client
// bucket's, so the client buckets hold exactly what the equal-share (or
// weighted) per-client bucket would on the same arrivals, and a client
// that bucket would admit is admitted. It does not consult G: with shares
// that sum exactly to rate and burst (equal shares, or weights whose
// float64 sum is exact) the invariant makes G >= C_i >= 1.
//
// The borrowing test compares G - 1 with sum(C_i) exactly, without
// visiting every client. Scaled by 1000*W (W the sum of the weights),
//
//	sum(C_i) = 1000*burst*sum(w_i) - 1000*W*K + rate*(t*P - Q)
//
// where K, P and Q sum the tokens taken, w_i and w_i*a_i over the clients
// whose bucket is not full. The limiter keeps K exactly and P and Q as
// double-float sums with a bound on their error, and a min-heap of the
// times at which the buckets fill up takes clients out of the sums when
// their refill stops. A float64 filter with a proved error bound decides;
// a value within the bound (a tie, as when whole-millisecond arrivals meet
// a whole number of tokens) is decided by summing every client's bucket
// in math/big. A decision costs O(log n) for n clients, O(n) on a tie, and
// allocates nothing once the exact path has made its scratch numbers.
type HierarchicalTokenBucket struct {
	_                     cacheline.Pad // a sweep's points run side by side (package cacheline)
	rateRPS, burst, total float64       // total is W, the float64 sum of the weights

	// the global bucket: full at gAnchor, gTaken tokens taken since
	gAnchor, gTaken, lastMS float64

	// client buckets, kept as in PerClientTokenBucket
	weight, anchor, taken []float64
	enough                []bool
	perToken              []float64 // ms to refill one token, for fullAt
	fullAt                []float64 // when a bucket in the heap fills up (rounded)
	pos                   []int32   // heap position, -1 when full
	heap                  []int32   // clients whose bucket is not full, by fullAt

	// sums over the clients in the heap
	partTaken float64         // K: tokens taken, a whole number
	partW     doubleDoubleSum // P: weights
	partWA    doubleDoubleSum // Q: weight times anchor
	fullShare float64         // the sum of the burst shares, for Reserved
	corr      *big.Float      // 1000*burst*(W - sum(w_i)) when not 0
	corrErr   float64         // a bound on |corr|

	exact *exactScratch // made on the first tie
	_     cacheline.Pad
}

// doubleDoubleSum is a running sum kept as the unevaluated pair hi + lo; err bounds
// its distance from the exact sum of what was added.
type doubleDoubleSum struct{ hi, lo, err float64 }

func (s *doubleDoubleSum) add(x float64) {
	hi, e := twoSum(s.hi, x)
	lo := s.lo + e
	s.err += unit * math.Abs(lo)
	s.hi, s.lo = twoSum(hi, lo)
}

func (s *doubleDoubleSum) addProd(a, b float64) {
	p, e := twoProd(a, b)
	s.add(p)
	s.add(e)
}

func (s *doubleDoubleSum) value() float64 { return s.hi + s.lo }

// exactPrec is enough bits for every sum and product of the exact path to
// be exact: a difference of float64 values spans at most 2100 bits, and
// the path multiplies it by two float64 values and sums over the clients.
const exactPrec = 4096

// p holds products: big.Float's Mul allocates when its result is an operand.
type exactScratch struct{ acc, x, y, p big.Float }

// NewHierarchicalTokenBucket returns a limiter of rate (requests/s) and
// burst in all, split between clients by weights (one per client; all
// equal for equal shares). All buckets start full.
func NewHierarchicalTokenBucket(rateRPS, burst float64, weights []float64) *HierarchicalTokenBucket {
	n := len(weights)
	total, enough := shares(burst, weights)
	b := &HierarchicalTokenBucket{
		rateRPS: rateRPS, burst: burst, total: total,
		weight:   append([]float64(nil), weights...),
		anchor:   make([]float64, n),
		taken:    make([]float64, n),
		enough:   enough,
		perToken: make([]float64, n),
		fullAt:   make([]float64, n),
		pos:      make([]int32, n),
		heap:     make([]int32, 0, n),
	}
	sum := new(big.Float).SetPrec(exactPrec)
	for i, w := range weights {
		b.perToken[i] = 1000 * total / (rateRPS * w)
		b.pos[i] = -1
		b.fullShare += burst * w / total
		sum.Add(sum, new(big.Float).SetFloat64(w))
	}
	if d := new(big.Float).SetPrec(exactPrec).SetFloat64(total); d.Cmp(sum) != 0 {
		d.Sub(d, sum)
		d.Mul(d, new(big.Float).SetFloat64(burst))
		d.Mul(d, new(big.Float).SetFloat64(1000))
		b.corr = d
		c, _ := d.Float64()
		b.corrErr = 2 * math.Abs(c)
	}
	return b
}

// Offer admits from the client's own share, else from the global surplus.
func (b *HierarchicalTokenBucket) Offer(t float64, client int32) (float64, bool) {
	b.lastMS = t
	for len(b.heap) > 0 && b.fullAt[b.heap[0]] <= t {
		b.remove(b.heap[0])
	}
	if b.gTaken > 0 && shareSign(t, b.gAnchor, b.rateRPS, 1, 0, b.gTaken, 1) >= 0 {
		b.gTaken = 0 // the global bucket is full again
	}
	if b.gTaken == 0 {
		b.gAnchor = t
	}
	c := client
	k := b.taken[c]
	own := b.enough[c]
	if k > 0 {
		var full bool
		own, full = shareTest(t, b.anchor[c], b.rateRPS, b.weight[c], b.burst, k, b.total)
		if full {
			k = 0 // filled up again: start over from full
		}
	}
	if own {
		switch {
		case k == 0: // a full bucket: it enters the sums
			if b.pos[c] >= 0 {
				b.remove(c) // it filled up before its rounded fill time
			}
			b.anchor[c], b.taken[c] = t, 1
			b.insert(c)
		case b.pos[c] < 0: // its rounded fill time passed a hair early
			b.taken[c] = k + 1
			b.insert(c)
		default:
			b.taken[c] = k + 1
			b.partTaken++
			b.fullAt[c] = b.anchor[c] + (k+1)*b.perToken[c]
			b.down(int(b.pos[c]))
		}
		b.gTaken++
		return t, true
	}
	if b.surplus(t) {
		b.gTaken++
		return t, true
	}
	return 0, false
}

// surplus reports whether G - 1 >= sum(C_i) at t, exactly.
func (b *HierarchicalTokenBucket) surplus(t float64) bool {
	return b.surplusWith(t, b.partTaken, &b.partW, &b.partWA)
}

// surplusWith is surplus with the sums K, P and Q over the clients whose
// bucket is not full at t given.
func (b *HierarchicalTokenBucket) surplusWith(t, partTaken float64, partW, partWA *doubleDoubleSum) bool {
	// x approximates 1000*W*(G - 1 - sum(C_i)) =
	//   corr - 1000*W*(gTaken + 1 - K) + rate*(W*(t - gAnchor) - (t*P - Q)).
	// Its error: t1 and t2 carry two roundings each, t*P - Q three and
	// the errors of P and Q, the last three operations one each, all
	// within 8u of the terms' magnitudes; a heap whose rounded fill times
	// sort a client on the wrong side of t adds at most rate*w_i*5u*t per
	// client, 8u*rate*W*t in all; corr is left out within corrErr.
	D := 1000 * b.total
	p, q := partW.value(), partWA.value()
	t1 := (b.gTaken + 1 - partTaken) * D
	t2 := b.total * (t - b.gAnchor)
	x := b.rateRPS*(t2-(t*p-q)) - t1
	errB := 8*unit*(math.Abs(t1)+b.rateRPS*(math.Abs(t2)+t*math.Abs(p)+math.Abs(q)+b.total*t)) +
		b.rateRPS*(t*partW.err+partWA.err) + b.corrErr + tiny
	switch {
	case x > errB:
		return true
	case x < -errB:
		return false
	}
	return b.exactSurplus(t) >= 0
}

// exactSurplus is the sign of G - 1 - sum(C_i) at t in exact arithmetic,
// from every client's bucket.
func (b *HierarchicalTokenBucket) exactSurplus(t float64) int {
	if b.exact == nil {
		b.exact = new(exactScratch)
		b.exact.acc.SetPrec(exactPrec)
		b.exact.x.SetPrec(exactPrec)
		b.exact.y.SetPrec(exactPrec)
		b.exact.p.SetPrec(exactPrec)
	}
	acc, x, y, p := &b.exact.acc, &b.exact.x, &b.exact.y, &b.exact.p
	acc.SetInt64(0)
	taken := 0.0
	for i, k := range b.taken {
		if k == 0 || shareSign(t, b.anchor[i], b.rateRPS, b.weight[i], 0, k, b.total) >= 0 {
			continue // full
		}
		taken += k
		x.SetFloat64(t)
		x.Sub(x, y.SetFloat64(b.anchor[i]))
		x.Set(p.Mul(x, y.SetFloat64(b.weight[i])))
		acc.Add(acc, x)
	}
	// corr - 1000*W*(gTaken + 1 - K) + rate*(W*(t - gAnchor) - sum(w_i*(t - a_i)))
	x.SetFloat64(t)
	x.Sub(x, y.SetFloat64(b.gAnchor))
	x.Set(p.Mul(x, y.SetFloat64(b.total)))
	x.Sub(x, acc)
	x.Set(p.Mul(x, y.SetFloat64(b.rateRPS)))
	y.SetFloat64(b.total)
	y.Set(p.Mul(y, acc.SetInt64(1000)))
	y.Set(p.Mul(y, acc.SetFloat64(b.gTaken+1-taken)))
	x.Sub(x, y)
	if b.corr != nil {
		x.Add(x, b.corr)
	}
	return x.Sign()
}

// NextAdmitMS is the first time at which client's request would pass
// (Advisor), from its own share or by borrowing, decided exactly as Offer
// decides. Its own bucket only fills, so the own test turns true once, at
// o. The borrowing test G - 1 >= sum(C_i) is not monotone: while the
// global bucket fills, G - sum(C_i) grows (at rate*(W - P)/(1000*W), P the
// weight of the clients still filling), and once G is full it shrinks as
// the clients fill; so it is true on one interval at most, and if it is
// true anywhere before o it is true at min(o, the time G is full), where
// it peaks. The answer is the first time it is true before that peak,
// else o. The monotonicity needs client rates that sum to the global rate
// (equal shares, or weights whose float64 sum is exact), as the invariant
// does. A borrowing probe costs O(1) before the first client fills up and
// O(n) after, and allocates nothing; only where surplus's filter cannot
// decide (a tie: the boundary falls on a float64 exactly) every bucket is
// summed in math/big (O(n)), whose additions allocate, as Offer's do.
func (b *HierarchicalTokenBucket) NextAdmitMS(t float64, client int32) float64 {
	c := client
	own := math.Inf(1)
	switch k := b.taken[c]; {
	case k == 0 && b.enough[c]:
		return t
	case k > 0:
		own = shareNextAdmit(t, b.anchor[c], b.rateRPS, b.weight[c], b.burst, k, b.total)
		if own == t {
			return t
		}
	}
	peak := t
	if b.gTaken > 0 {
		peak = firstAdmit(t, b.gAnchor+b.gTaken*1000/b.rateRPS, func(x float64) bool {
			return shareSign(x, b.gAnchor, b.rateRPS, 1, 0, b.gTaken, 1) >= 0
		})
	}
	peak = min(peak, own)
	if math.IsInf(peak, 1) || !b.surplusAt(peak) {
		return own
	}
	// a guess from the sums: where G - 1 - sum(C_i) reaches 0 if no
	// client fills up first
	guess := peak
	p, q := b.partW.value(), b.partWA.value()
	if slope := b.rateRPS * (b.total - p); slope > 0 {
		v := b.rateRPS*(b.total*(t-b.gAnchor)-(t*p-q)) - (b.gTaken+1-b.partTaken)*1000*b.total
		guess = t - v/slope
	}
	return firstAdmitBelow(t, guess, peak, b.surplusAt)
}

// surplusAt is surplus at x >= the last decision, exactly, leaving the
// limiter as it was: the global bucket as Offer would see it at x, and the
// sums over the clients still filling at x (the kept ones while no client
// fills up before x, else summed again over the heap: O(n)), decided by
// surplus's filter and, near the boundary, by every bucket in math/big.
func (b *HierarchicalTokenBucket) surplusAt(x float64) bool {
	gTaken, gAnchor := b.gTaken, b.gAnchor
	if b.gTaken > 0 && shareSign(x, b.gAnchor, b.rateRPS, 1, 0, b.gTaken, 1) >= 0 {
		b.gTaken = 0 // full at x
	}
	if b.gTaken == 0 {
		b.gAnchor = x
	}
	var ok bool
	if len(b.heap) == 0 || x < b.fullAt[b.heap[0]] {
		ok = b.surplus(x)
	} else {
		var k float64
		var pw, pwa doubleDoubleSum
		for _, c := range b.heap {
			if b.fullAt[c] > x {
				k += b.taken[c]
				pw.add(b.weight[c])
				pwa.addProd(b.weight[c], b.anchor[c])
			}
		}
		ok = b.surplusWith(x, k, &pw, &pwa)
	}
	b.gTaken, b.gAnchor = gTaken, gAnchor
	return ok
}

// Reserved is the sum of the client buckets after the last decision
// (rounded).
func (b *HierarchicalTokenBucket) Reserved() float64 {
	t := b.lastMS
	return b.fullShare - b.partTaken + b.rateRPS*(t*b.partW.value()-b.partWA.value())/(1000*b.total)
}

// Tokens is the global bucket's content after the last decision (rounded).
func (b *HierarchicalTokenBucket) Tokens() float64 {
	if b.gTaken == 0 {
		return b.burst
	}
	return min(b.burst, b.burst-b.gTaken+(b.lastMS-b.gAnchor)*b.rateRPS/1000)
}

// insert adds client c, whose bucket is not full, to the sums and the heap.
func (b *HierarchicalTokenBucket) insert(c int32) {
	w, a, k := b.weight[c], b.anchor[c], b.taken[c]
	b.partTaken += k
	b.partW.add(w)
	b.partWA.addProd(w, a)
	b.fullAt[c] = a + k*b.perToken[c]
	b.push(c)
}

// remove takes client c out of the sums and the heap; an empty heap
// resets the sums to exact zeros, so no rounding outlives a busy period.
func (b *HierarchicalTokenBucket) remove(c int32) {
	w, a := b.weight[c], b.anchor[c]
	b.partTaken -= b.taken[c]
	b.partW.add(-w)
	b.partWA.addProd(-w, a)
	i, last := int(b.pos[c]), len(b.heap)-1
	b.swap(i, last)
	b.pos[c] = -1
	b.heap = b.heap[:last]
	if i < last {
		b.down(i)
		b.up(i)
	}
	if last == 0 {
		b.partTaken, b.partW, b.partWA = 0, doubleDoubleSum{}, doubleDoubleSum{}
	}
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
	b.up(i)
}

func (b *HierarchicalTokenBucket) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !b.less(i, p) {
			break
		}
		b.swap(i, p)
		i = p
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
	k := sharedBucketKind(TypeHierarchical, "work-conserving per-client buckets: guaranteed shares, unused share lent to busy clients under a global (rate_rps, burst) bucket",
		func(rateRPS, burst float64, weights []float64) Gate {
			return NewHierarchicalTokenBucket(rateRPS, burst, weights)
		})
	k.RetryAfter = "when the client's own bucket holds a whole token again, or earlier when the global bucket's surplus lets it borrow"
	// A client may borrow all the others leave, so its own curve is the
	// global bucket's, and so is the others' together.
	k.FlowCurves = func(_ *Spec, p Params, weights []float64) (own, cross []calculus.Curve) {
		g := tokenBucketCurve(p)
		for range weights {
			own, cross = append(own, g), append(cross, g)
		}
		return own, cross
	}
	return k
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*HierarchicalTokenBucket) releaseAt(y float64, _ int32) float64 { return y }
