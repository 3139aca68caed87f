package limiter_test

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

func TestGCRATable(t *testing.T) {
	t.Parallel()
	gcra := limiter.Spec{Type: limiter.TypeGCRA}
	for _, c := range []gateCase{
		{
			// T = 100 ms, tau = 200 ms (burst 3): three back to back, then
			// one per T; a refusal leaves TAT alone.
			name: "burst 3", spec: gcra,
			params: limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 3},
			events: []event{admit(0), admit(0), admit(0), reject(0), reject(99), admit(100), reject(150), admit(200), admit(1000), admit(1000), admit(1000), reject(1000)},
		},
		{
			// Burst 1 (tau = 0): arrivals exactly T apart all conform.
			name: "burst 1", spec: gcra,
			params: limiter.Params{limiter.ParamRate: 4, limiter.ParamBurst: 1},
			events: []event{admit(0), reject(249.999), admit(250), admit(500), reject(600), admit(750)},
		},
	} {
		t.Run(c.name, c.run)
	}
}

// exactGCRA is the textbook virtual scheduling algorithm in exact rational
// arithmetic: conform when t >= TAT - tau, then TAT = max(t, TAT) + T.
type exactGCRA struct {
	interval, tau, tat *big.Rat
}

func newExactGCRA(rateRPS, burst float64) *exactGCRA {
	interval := new(big.Rat).Quo(big.NewRat(1000, 1), new(big.Rat).SetFloat64(rateRPS))
	tau := new(big.Rat).Mul(interval, new(big.Rat).SetFloat64(burst-1))
	return &exactGCRA{interval: interval, tau: tau}
}

// offer reports the decision and how far t lies from the boundary TAT-tau,
// in ms.
func (g *exactGCRA) offer(t float64) (bool, float64) {
	at := new(big.Rat).SetFloat64(t)
	if g.tat == nil {
		g.tat = new(big.Rat).Set(at)
	}
	edge := new(big.Rat).Sub(g.tat, g.tau)
	margin, _ := new(big.Rat).Sub(at, edge).Float64()
	if at.Cmp(edge) < 0 {
		return false, margin
	}
	if at.Cmp(g.tat) > 0 {
		g.tat.Set(at)
	}
	g.tat.Add(g.tat, g.interval)
	return true, margin
}

// TestGCRAIsTheTextbookGCRA compares every decision with the exact GCRA.
// They may differ only where t lies within a few ulps of TAT - tau (the
// gate rounds base + k*T once); after such a tie the two states differ by
// an emission interval, so the list stops there.
func TestGCRAIsTheTextbookGCRA(t *testing.T) {
	t.Parallel()
	decisions, rejects, ties := 0, 0, 0
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(50, uint64(run)))
		r, b := randomRate(rng), float64(1+rng.IntN(20))
		if run%4 == 0 { // intervals exact in binary, arrivals on their grid
			r = []float64{1, 2, 4, 8, 16, 31.25, 62.5, 125, 250, 500, 1000}[rng.IntN(11)]
		}
		ours := limiter.NewGCRA(r, b)
		exact := newExactGCRA(r, b)
		times := randomTimes(rng, 50+rng.IntN(250))
		if run%4 == 0 {
			for i := range times {
				times[i] = float64(int(times[i]*r/1000)) * 1000 / r
			}
		}
		for i, at := range times {
			_, ok := ours.Offer(at, 0)
			want, margin := exact.offer(at)
			decisions++
			if !ok {
				rejects++
			}
			if ok == want {
				continue
			}
			if abs(margin) > 1e-9*max(1, at) {
				t.Fatalf("run %d (rate %g burst %g), arrival %d at %g: ok=%v, exact GCRA ok=%v, %g ms from its boundary",
					run, r, b, i, at, ok, want, margin)
			}
			ties++
			break
		}
	}
	if rejects == 0 || rejects == decisions {
		t.Fatalf("%d rejects of %d decisions", rejects, decisions)
	}
	t.Logf("%d lists, %d decisions (%d refused); %d lists met a rounding tie at the boundary", propertyRuns, decisions, rejects, ties)
}

func abs(x float64) float64 { return max(x, -x) }

// TestGCRAEqualsTokenBucketWhenExact: GCRA(T, (b-1)T) and the token bucket
// (1000/T, b) are the same policer. On dyadic rates and arrivals on a
// 1/64 s grid both compute exactly, and every decision agrees.
func TestGCRAEqualsTokenBucketWhenExact(t *testing.T) {
	t.Parallel()
	rates := []float64{1, 2, 4, 8, 16, 31.25, 62.5, 125, 250, 500, 1000, 2000}
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(51, uint64(run)))
		r, b := rates[rng.IntN(len(rates))], float64(1+rng.IntN(10))
		g, tb := limiter.NewGCRA(r, b), limiter.NewTokenBucket(r, b)
		tick := 0
		for i := range 50 + rng.IntN(250) {
			if rng.IntN(3) != 0 {
				tick += rng.IntN(8)
			}
			at := float64(tick) * 15.625
			_, ok := g.Offer(at, 0)
			_, want := tb.Offer(at, 0)
			if ok != want {
				t.Fatalf("run %d (rate %g burst %g), arrival %d at %g: GCRA ok=%v, token bucket ok=%v", run, r, b, i, at, ok, want)
			}
		}
	}
}

// TestGCRAStaysUnderItsArrivalCurve: never more than burst + rate*d in a
// closed window of d ms.
func TestGCRAStaysUnderItsArrivalCurve(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(52, uint64(run)))
		r, b := randomRate(rng), float64(1+rng.IntN(20))
		g := newGate(t, limiter.TypeGCRA, limiter.Params{limiter.ParamRate: r, limiter.ParamBurst: b}, nil, "", nil)
		rs := offerAll(t, g, randomTimes(rng, 50+rng.IntN(250)), nil, nil)
		for _, x := range rs {
			if x.release != x.t {
				t.Fatalf("run %d: a policer delayed a request from %g to %g", run, x.t, x.release)
			}
		}
		checkCurve(t, run, "gcra", releaseTimes(rs), r, b)
	}
}
