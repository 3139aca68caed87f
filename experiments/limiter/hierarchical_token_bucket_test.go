package limiter_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// hierarchicalRun is one random scenario for the work-conserving limiter: clients
// with random weights and random (often very unequal) demands.
type hierarchicalRun struct {
	rateRPS, burst float64
	weights        []float64
	ts             []float64
	cs             []int32
}

func randomHTBRun(rng *rand.Rand) hierarchicalRun {
	n := 1 + rng.IntN(12)
	r := hierarchicalRun{rateRPS: 5 + rng.Float64()*500, burst: float64(1 + rng.IntN(40)), weights: make([]float64, n)}
	for i := range r.weights {
		r.weights[i] = 1
		if rng.IntN(2) == 0 {
			r.weights[i] = 0.5 + rng.Float64()*4
		}
	}
	// Each client is quiet, near its share, or flooding, so buckets fill,
	// empty and lend.
	type src struct{ next, mean float64 }
	srcs := make([]src, n)
	for i := range srcs {
		share := r.rateRPS / float64(n)
		srcs[i].mean = 1000 / (share * []float64{0.2, 1, 8}[rng.IntN(3)])
		srcs[i].next = rng.ExpFloat64() * srcs[i].mean
	}
	for len(r.ts) < 600 {
		c := 0
		for i := range srcs {
			if srcs[i].next < srcs[c].next {
				c = i
			}
		}
		r.ts = append(r.ts, srcs[c].next)
		r.cs = append(r.cs, int32(c))
		if rng.IntN(6) != 0 { // else a tie with the next arrival of the client
			srcs[c].next += rng.ExpFloat64() * srcs[c].mean
		}
	}
	return r
}

// The aggregate never exceeds the global arrival curve burst + rate*d, in
// any closed window, whatever the clients do: every admission, own-share
// or borrowed, takes a global token.
func TestHierarchicalTokenBucketStaysUnderTheGlobalCurve(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 1))
	for run := range 300 {
		r := randomHTBRun(rng)
		g := limiter.NewHierarchicalTokenBucket(r.rateRPS, r.burst, r.weights)
		var rel []float64
		for i, at := range r.ts {
			if release, ok := g.Offer(at, r.cs[i]); ok {
				if release != at {
					t.Fatalf("run %d: released at %g for an arrival at %g: a policer releases at once", run, release, at)
				}
				rel = append(rel, release)
			}
		}
		checkCurve(t, run, "hierarchical-token-bucket", rel, r.rateRPS, r.burst)
	}
}

// A client within its guaranteed share is never refused: every request it
// makes that its own bucket (rate*w/W, burst*w/W) would admit is admitted,
// however hard the others push, and the reservations never exceed the
// global bucket (the invariant G >= sum(C_i)).
func TestHierarchicalTokenBucketGuaranteesShares(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 2))
	for run := range 300 {
		r := randomHTBRun(rng)
		g := limiter.NewHierarchicalTokenBucket(r.rateRPS, r.burst, r.weights)
		own := newShares(r.rateRPS, r.burst, r.weights)
		for i, at := range r.ts {
			c := r.cs[i]
			_, ok := g.Offer(at, c)
			if own.has(c, at) {
				if !ok {
					t.Fatalf("run %d: arrival %d (client %d at %g) refused although its own share had a token", run, i, c, at)
				}
				own.take(c)
			}
			if sum := own.sum(at); math.Abs(g.Reserved()-sum) > 1e-6 {
				t.Fatalf("run %d: after arrival %d reservations are %g, the client buckets hold %g", run, i, g.Reserved(), sum)
			}
			if g.Reserved() > g.Tokens()+1e-9 {
				t.Fatalf("run %d: after arrival %d reservations %g exceed the global bucket %g", run, i, g.Reserved(), g.Tokens())
			}
		}
	}
}

// shares mirrors the client buckets of the model in exact arithmetic:
// rate*w/W and burst*w/W (W the float64 sum of the weights), initially
// full, a token taken only by an own-share admission. tokens, last, rate
// and burst are the buckets' values rounded, for sum.
type shares struct {
	buckets                   []*rationalBucket
	tokens, last, rate, burst []float64
}

func newShares(rateRPS, burst float64, weights []float64) *shares {
	s := &shares{buckets: newHTBModel(rateRPS, burst, weights).clients}
	for _, b := range s.buckets {
		r, _ := b.rate.Float64()
		f, _ := b.burst.Float64()
		s.rate, s.burst = append(s.rate, r), append(s.burst, f)
		s.tokens, s.last = append(s.tokens, f), append(s.last, 0)
	}
	return s
}

// has refills client c's bucket to t and reports whether it holds a token.
func (s *shares) has(c int32, t float64) bool {
	ok := s.buckets[c].refill(t)
	s.tokens[c], _ = s.buckets[c].tokens.Float64()
	s.last[c] = t
	return ok
}

func (s *shares) take(c int32) {
	s.buckets[c].take()
	s.tokens[c], _ = s.buckets[c].tokens.Float64()
}

// sum is the content of all client buckets at t, by brute force (in
// float64: it is compared within a tolerance).
func (s *shares) sum(t float64) float64 {
	total := 0.0
	for c := range s.buckets {
		total += math.Min(s.burst[c], s.tokens[c]+(t-s.last[c])*s.rate[c])
	}
	return total
}

// Work conservation: with one client quiet, a flooding client gets (almost)
// the whole rate, where the equal-share bucket strands the quiet client's
// half.
func TestHierarchicalTokenBucketLendsUnusedShare(t *testing.T) {
	t.Parallel()
	weights := []float64{1, 1}
	htb := limiter.NewHierarchicalTokenBucket(100, 10, weights)
	static := limiter.NewPerClientTokenBucket(100, 10, weights)
	var nHTB, nStatic int
	const seconds = 20
	for k := range seconds * 1000 { // client 0 offers 1000/s, client 1 nothing
		at := float64(k)
		if _, ok := htb.Offer(at, 0); ok {
			nHTB++
		}
		if _, ok := static.Offer(at, 0); ok {
			nStatic++
		}
	}
	// The whole rate over 20 s (the last arrival is at 19.999 s) plus the
	// global burst, less the quiet client's burst share of 5, which stays
	// reserved for it, and less under one token each of the busy client's
	// fractional reservation and the unlent global remainder.
	if want := 100*seconds + 10 - 5; nHTB < want-3 || nHTB > want {
		t.Errorf("work-conserving admitted %d, want %d-%d (the whole rate, less the quiet client's reserved burst)", nHTB, want-3, want)
	}
	if want := 50*seconds + 5; nStatic < want-1 || nStatic > want {
		t.Errorf("equal-share admitted %d, want %d (half the rate and burst)", nStatic, want)
	}
}

// With every client saturated there is no surplus: the limiter admits the
// same as the per-client buckets, each client its (weighted) share.
func TestHierarchicalTokenBucketSaturatedMatchesShares(t *testing.T) {
	t.Parallel()
	weights := []float64{1, 2, 3, 4}
	htb := limiter.NewHierarchicalTokenBucket(100, 20, weights)
	static := limiter.NewPerClientTokenBucket(100, 20, weights)
	got := make([]int, len(weights))
	for k := range 40_000 { // 10 s, each client 1000/s
		at := float64(k) / 4
		c := int32(k % 4)
		_, a := htb.Offer(at, c)
		_, b := static.Offer(at, c)
		if a != b {
			t.Fatalf("arrival %d (client %d at %g): work-conserving %v, per-client %v", k, c, at, a, b)
		}
		if a {
			got[c]++
		}
	}
	for i, w := range weights {
		want := 100*w/10*10 + 20*w/10 // rate share over 10 s plus the burst share
		if math.Abs(float64(got[i])-want) > 1 {
			t.Errorf("client %d (weight %g) admitted %d, want %g", i, w, got[i], want)
		}
	}
}

func TestHierarchicalTokenBucketDecisionsDoNotAllocate(t *testing.T) {
	weights := make([]float64, 1000)
	for i := range weights {
		weights[i] = 1
	}
	g := limiter.NewHierarchicalTokenBucket(100, 100, weights)
	k := 0
	allocs := testing.AllocsPerRun(100_000, func() {
		g.Offer(float64(k)*0.3, int32(k*7919%len(weights)))
		k++
	})
	if allocs != 0 {
		t.Errorf("%g allocations per decision, want 0", allocs)
	}
}
