package limiter_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// Decisions at the edges: window membership and bucket contents decided
// in exact arithmetic on the float64 values, checked against math/big
// models that share no code with the gates.

// ms parses a time as a trace's CSV gives it.
func ms(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return v
}

func TestGatesAtTheEdges(t *testing.T) {
	t.Parallel()
	cases := []gateCase{
		{
			// 233.09999999999997 < 7 * 33.3 (the float64 values), though
			// 233.09999999999997/33.3 rounds to 7: both are in window 6.
			name:   "fixed window: an arrival a hair below 7*w is in window 6",
			spec:   limiter.Spec{Type: limiter.TypeFixedWindow},
			params: limiter.Params{limiter.ParamLimit: 1, limiter.ParamWindow: 33.3},
			events: []event{admit(200), reject(ms("233.09999999999997"))},
		},
		{
			// 166.49999999999997 < 5 * 33.3: the first is in window 4, so at
			// 177.6 (window 5, 11.1 ms in) the estimate is 1 * (1 - 11.1/33.3).
			name:   "sliding counter: an arrival a hair below 5*w is in window 4",
			spec:   limiter.Spec{Type: limiter.TypeSlidingCounter},
			params: limiter.Params{limiter.ParamLimit: 1, limiter.ParamWindow: 33.3},
			events: []event{admit(ms("166.49999999999997")), admit(177.6)},
		},
		{
			// Each client gets 100/3 rps and 1 token: at 30 ms client 0 has
			// refilled exactly 30 * 100/3000 = 1 token.
			name:    "per-client bucket: exactly one token after a third of the rate for 30 ms",
			spec:    limiter.Spec{Type: limiter.TypePerClient},
			params:  limiter.Params{limiter.ParamRate: 100, limiter.ParamBurst: 3},
			weights: []float64{1, 1, 1},
			events:  []event{admitFrom(0, 0), admitFrom(1, 0), admitFrom(2, 0), admitFrom(0, 30)},
		},
		{
			name:    "hierarchical bucket: a client within its share is admitted",
			spec:    limiter.Spec{Type: limiter.TypeHierarchical},
			params:  limiter.Params{limiter.ParamRate: 100, limiter.ParamBurst: 3},
			weights: []float64{1, 1, 1},
			events:  []event{admitFrom(0, 0), admitFrom(1, 0), admitFrom(2, 0), admitFrom(0, 30)},
		},
		{
			// Rate 20 and burst 3 split in two: 0.01 token/ms and 1.5
			// each. At 100 ms client 0 takes its own token (G 3 -> 2,
			// C_0 = 0.5) and client 1 holds 0.5 (one token taken at 50 ms
			// from exactly 1), so G - 1 = 1 = C_0 + C_1: it may borrow.
			name:    "hierarchical bucket: the sum of the client buckets is exact",
			spec:    limiter.Spec{Type: limiter.TypeHierarchical},
			params:  limiter.Params{limiter.ParamRate: 20, limiter.ParamBurst: 3},
			weights: []float64{1, 1},
			events: []event{
				admitFrom(1, 0), rejectFrom(1, 5), rejectFrom(1, 10), rejectFrom(1, 40),
				admitFrom(1, 50), admitFrom(0, 100), admitFrom(1, 100),
			},
		},
	}
	for i := range cases {
		t.Run(cases[i].name, cases[i].run)
	}
}

func rat(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }

// exactWindow is floor(t/w) in exact arithmetic (t >= 0, w > 0).
func exactWindow(t, w float64) int64 {
	q := new(big.Rat).Quo(rat(t), rat(w))
	return new(big.Int).Quo(q.Num(), q.Denom()).Int64()
}

// edgeTimes is a sorted list of n arrival times, each at or one ulp
// either side of k*p (rounded) for a random k and one of the periods.
func edgeTimes(rng *rand.Rand, n int, periods ...float64) []float64 {
	ts := make([]float64, n)
	for i := range ts {
		p := periods[rng.IntN(len(periods))]
		at := float64(rng.IntN(40)) * p
		switch rng.IntN(3) {
		case 0:
			at = math.Nextafter(at, math.Inf(-1))
		case 1:
			at = math.Nextafter(at, math.Inf(1))
		}
		ts[i] = max(at, 0)
	}
	slices.Sort(ts)
	return ts
}

// fractionalWindow is a window length that is not a whole number of ms.
func fractionalWindow(rng *rand.Rand) float64 {
	switch rng.IntN(5) {
	case 0:
		return 33.3
	case 1:
		return float64(1+rng.IntN(9999)) / 10 // a decimal, as configs have them
	case 2:
		return 1000.0 / float64(3+rng.IntN(30))
	case 3:
		return 2.5 // dyadic: k*w is exact, ties are exact
	}
	return 0.5 + rng.Float64()*500
}

// rationalBucket is one client's token bucket in exact arithmetic.
type rationalBucket struct {
	rate, burst, tokens, last *big.Rat
}

func newRatBucket(rate, burst *big.Rat) *rationalBucket {
	return &rationalBucket{rate: rate, burst: burst, tokens: new(big.Rat).Set(burst), last: new(big.Rat)}
}

// refill moves the bucket to t and reports whether it holds a token.
func (b *rationalBucket) refill(t float64) bool {
	at := rat(t)
	add := new(big.Rat).Sub(at, b.last)
	add.Mul(add, b.rate)
	b.tokens.Add(b.tokens, add)
	if b.tokens.Cmp(b.burst) > 0 {
		b.tokens.Set(b.burst)
	}
	b.last = at
	return b.tokens.Cmp(big.NewRat(1, 1)) >= 0
}

func (b *rationalBucket) take() { b.tokens.Sub(b.tokens, big.NewRat(1, 1)) }

// equalShares builds n exact buckets of rate/n (per ms) and burst/n.
func equalShares(rateRPS, burst float64, n int) []*rationalBucket {
	rate := new(big.Rat).Quo(rat(rateRPS), big.NewRat(int64(1000*n), 1))
	b := new(big.Rat).Quo(rat(burst), big.NewRat(int64(n), 1))
	out := make([]*rationalBucket, n)
	for i := range out {
		out[i] = newRatBucket(rate, b)
	}
	return out
}

// TestEdgesProperty runs random traces whose times sit at and one ulp
// around window edges k*w (fractional w) and refill edges (the time of one
// client's token), through the fixed window, the sliding counter and the
// equal-share buckets, and checks each against its exact model:
//
//   - the fixed window admits exactly when fewer than limit arrivals were
//     admitted in the arrival's window, membership decided in exact
//     arithmetic, so no window ever holds more than limit;
//   - the sliding counter never admits more than limit in an aligned window;
//   - the per-client bucket admits exactly the arrivals whose client holds
//     at least one token (rate/n, burst/n, exact), and the hierarchical
//     bucket admits every one of them.
func TestEdgesProperty(t *testing.T) {
	t.Parallel()
	const traces = 10_000
	sawTie := 0
	for run := range traces {
		rng := rand.New(rand.NewPCG(15, uint64(run)))
		w := fractionalWindow(rng)
		n := 1 + rng.IntN(20)
		var rate float64
		switch rng.IntN(3) {
		case 0:
			rate = float64(1+rng.IntN(1000)) * float64(n) / 10 // whole or tenth rps per client
		case 1:
			rate = 1000 * float64(n) / w // one token per client per window
		default:
			rate = float64(1 + rng.IntN(1000))
		}
		burst := float64(n * (1 + rng.IntN(3)))
		token := 1000 * float64(n) / rate // the time of one client's token
		ts := edgeTimes(rng, 10+rng.IntN(50), w, token, 2*w)
		clients := make([]int32, len(ts))
		for i := range clients {
			clients[i] = int32(rng.IntN(n))
		}
		limit := 1 + rng.IntN(4)

		fixed := limiter.NewFixedWindow(limit, w)
		counter := limiter.NewSlidingWindowCounter(limit, w)
		weights := slices.Repeat([]float64{1}, n)
		perClient := limiter.NewPerClientTokenBucket(rate, burst, weights)
		htb := limiter.NewHierarchicalTokenBucket(rate, burst, weights)
		model := equalShares(rate, burst, n)
		fixedCount, counterCount := map[int64]int{}, map[int64]int{}
		for i, at := range ts {
			k := exactWindow(at, w)
			_, ok := fixed.Offer(at, 0)
			if want := fixedCount[k] < limit; ok != want {
				t.Fatalf("run %d: fixed window (limit %d, %v ms) at %v (exact window %d, %d admitted in it): ok = %v, want %v",
					run, limit, w, at, k, fixedCount[k], ok, want)
			}
			if ok {
				fixedCount[k]++
			}
			if _, ok := counter.Offer(at, 0); ok {
				if counterCount[k]++; counterCount[k] > limit {
					t.Fatalf("run %d: sliding counter (limit %d, %v ms) admitted %d in exact window %d (at %v)", run, limit, w, counterCount[k], k, at)
				}
			}

			c := clients[i]
			has := model[c].refill(at)
			if has && model[c].tokens.Cmp(big.NewRat(1, 1)) == 0 {
				sawTie++
			}
			_, ok = perClient.Offer(at, c)
			if ok != has {
				t.Fatalf("run %d: per-client bucket (%v rps, burst %v, %d clients) at %v client %d: ok = %v, but it holds %s tokens",
					run, rate, burst, n, at, c, ok, model[c].tokens.FloatString(20))
			}
			if _, ok := htb.Offer(at, c); has && !ok {
				t.Fatalf("run %d: hierarchical bucket (%v rps, burst %v, %d clients) refused client %d at %v holding %s tokens in its share",
					run, rate, burst, n, c, at, model[c].tokens.FloatString(20))
			}
			if has {
				model[c].take()
			}
		}
	}
	if sawTie < 100 {
		t.Errorf("only %d arrivals found exactly one token: the edges were not exercised", sawTie)
	}
}

// hierarchicalModel is the hierarchical bucket in exact arithmetic: a global
// bucket and one bucket per client (rate*w/W, burst*w/W, W the float64
// sum of the weights); own-share admissions take from both, borrowing
// only when G - 1 >= sum(C_i).
type hierarchicalModel struct {
	global  *rationalBucket
	clients []*rationalBucket
}

func newHTBModel(rateRPS, burst float64, weights []float64) *hierarchicalModel {
	total := 0.0
	for _, w := range weights {
		total += w
	}
	m := &hierarchicalModel{global: newRatBucket(new(big.Rat).Quo(rat(rateRPS), big.NewRat(1000, 1)), rat(burst))}
	for _, w := range weights {
		share := new(big.Rat).Quo(rat(w), rat(total))
		rate := new(big.Rat).Mul(rat(rateRPS), share)
		rate.Quo(rate, big.NewRat(1000, 1))
		m.clients = append(m.clients, newRatBucket(rate, new(big.Rat).Mul(rat(burst), share)))
	}
	return m
}

// offer decides at t; tie reports a borrowing decision with G - 1 exactly
// equal to sum(C_i).
func (m *hierarchicalModel) offer(t float64, c int32) (ok, tie bool) {
	m.global.refill(t)
	for _, b := range m.clients {
		b.refill(t)
	}
	one := big.NewRat(1, 1)
	if m.clients[c].tokens.Cmp(one) >= 0 {
		m.clients[c].take()
		m.global.take()
		return true, false
	}
	sum := new(big.Rat)
	for _, b := range m.clients {
		sum.Add(sum, b.tokens)
	}
	switch new(big.Rat).Sub(m.global.tokens, one).Cmp(sum) {
	case 0:
		m.global.take()
		return true, true
	case 1:
		m.global.take()
		return true, false
	}
	return false, false
}

// TestHierarchicalTokenBucketIsExact compares every decision of the
// hierarchical bucket with its exact model on edge traces, ties between
// the global surplus and the sum of the client buckets included, and every
// decision of the per-client bucket with the same weights with its exact
// client buckets.
func TestHierarchicalTokenBucketIsExact(t *testing.T) {
	t.Parallel()
	ties := 0
	for run := range 2000 {
		rng := rand.New(rand.NewPCG(16, uint64(run)))
		n := 1 + rng.IntN(8)
		weights := make([]float64, n)
		for i := range weights {
			switch run % 3 {
			case 0:
				weights[i] = 1
			case 1:
				weights[i] = float64(1 + rng.IntN(4))
			default:
				weights[i] = 0.5 + float64(rng.IntN(40))/10 // decimal weights: their float64 sum may round
			}
		}
		rate := []float64{20, 100, float64(1 + rng.IntN(500)), 1 + rng.Float64()*300}[rng.IntN(4)]
		burst := float64(n * (1 + rng.IntN(4)))
		w := fractionalWindow(rng)
		ts := edgeTimes(rng, 20+rng.IntN(60), w, 1000/rate, 5)
		g := limiter.NewHierarchicalTokenBucket(rate, burst, weights)
		m := newHTBModel(rate, burst, weights)
		pc := limiter.NewPerClientTokenBucket(rate, burst, weights)
		own := newHTBModel(rate, burst, weights).clients
		for i, at := range ts {
			c := int32(rng.IntN(n))
			if rng.IntN(3) == 0 {
				c = 0 // one busy client, so the others' shares are lent
			}
			want, tie := m.offer(at, c)
			if _, ok := g.Offer(at, c); ok != want {
				t.Fatalf("run %d (%v rps, burst %v, weights %v): arrival %d at %v from client %d: ok = %v, want %v",
					run, rate, burst, weights, i, at, c, ok, want)
			}
			if tie {
				ties++
			}
			has := own[c].refill(at)
			if _, ok := pc.Offer(at, c); ok != has {
				t.Fatalf("run %d (%v rps, burst %v, weights %v): per-client bucket, arrival %d at %v from client %d: ok = %v, but it holds %s tokens",
					run, rate, burst, weights, i, at, c, ok, own[c].tokens.FloatString(20))
			}
			if has {
				own[c].take()
			}
		}
	}
	if ties < 20 {
		t.Errorf("only %d borrowing decisions found G - 1 exactly at the sum of the client buckets: ties were not exercised", ties)
	}
}
