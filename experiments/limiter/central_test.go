package limiter_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// central is a spec of n instances sharing a central store of typ.
func central(typ limiter.Type, n, rttMS, capacityRPS float64, params limiter.Params) *limiter.Spec {
	s := replicated(typ, n, limiter.BalancerRoundRobin, limiter.SharingCentral, params)
	s.SetValues(limiter.ParamStoreRTT, limiter.Values{rttMS})
	s.SetValues(limiter.ParamStoreCapacity, limiter.Values{capacityRPS})
	return s
}

// Central instances with no outage never admit more in any rolling window
// than the single gate: without a store capacity they admit exactly its
// requests (its decisions on times shifted by half the round trip), and
// with one, never above its curve b + r·w.
func TestCentralNeverAdmitsMoreThanOneGate(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(29, 2))
	runs := 100
	if testing.Short() {
		runs = 25
	}
	for run := range runs {
		n := 1 + rng.IntN(5)
		b := float64(1 + rng.IntN(10))
		r := 1 + rng.Float64()*50
		rtt := float64(rng.IntN(5))
		params := limiter.Params{limiter.ParamRate: r, limiter.ParamBurst: b}
		single := replicated(limiter.TypeTokenBucket, 1, limiter.BalancerRoundRobin, limiter.SharingLocal, params).Single()
		one, _ := limiter.New(single, single.Points()[0], []float64{1}, nil)
		free := central(limiter.TypeTokenBucket, float64(n), rtt, 0, params)
		g, _ := limiter.New(free, free.Points()[0], []float64{1}, nil)
		busy := central(limiter.TypeTokenBucket, float64(n), rtt, r*float64(1+rng.IntN(4)), params)
		q, _ := limiter.New(busy, busy.Points()[0], []float64{1}, nil)
		var want, got, queued []float64
		tm := 0.0
		for k := range 1500 {
			tm += rng.ExpFloat64() * 1000 / (r * (1 + 3*rng.Float64()))
			_, okOne := one.Offer(tm, 0)
			if okOne {
				want = append(want, tm)
			}
			release, ok := g.Offer(tm, 0)
			if ok != okOne || ok && release != tm+rtt {
				t.Fatalf("run %d, request %d at %g: central admits %v at %g, the single gate %v at %g", run, k, tm, ok, release, okOne, tm+rtt)
			}
			if ok {
				got = append(got, release)
			}
			if release, ok := q.Offer(tm, 0); ok {
				if n := len(queued); n > 0 && release < queued[n-1] {
					t.Fatalf("run %d: release %g before %g", run, release, queued[n-1])
				}
				queued = append(queued, release)
			}
		}
		for _, w := range []float64{0, 10, 100, 1000} {
			if a, b := mostInWindow(got, w), mostInWindow(want, w); a > b {
				t.Fatalf("run %d: central admitted %d in a window of %g ms, the single gate %d", run, a, w, b)
			}
			if most := mostInWindow(queued, w); float64(most) > b+r*w/1000+1e-9 {
				t.Fatalf("run %d: central with a store capacity admitted %d in %g ms, above b + r·w = %g", run, most, w, b+r*w/1000)
			}
		}
	}
}

// The store's outage: fail-open admits after a round trip, fail-closed
// refuses; the store's gate does not move meanwhile; a decision waits
// its turn at the store's capacity.
func TestCentralStoreTable(t *testing.T) {
	t.Parallel()
	params := limiter.Params{limiter.ParamRate: 1, limiter.ParamBurst: 1}
	for _, c := range []struct {
		down     string
		capacity float64
		times    []float64
		want     []float64 // release, -1 refused
	}{
		// rtt 4: decided at t+2, back at t+4; down over [10, 20) of store
		// time, the bucket's one token taken at 2 and whole again at 1002.
		{limiter.StoreDownFailOpen, 0, []float64{0, 1, 8, 9, 17, 18, 1000}, []float64{4, -1, 12, 13, 21, -1, 1004}},
		{limiter.StoreDownFailClosed, 0, []float64{0, 1, 8, 9, 17, 18, 1000}, []float64{4, -1, -1, -1, -1, -1, 1004}},
		// capacity 100/s: 10 ms a decision, in order.
		{limiter.StoreDownFailClosed, 100, []float64{0, 0, 0}, []float64{14, -1, -1}},
	} {
		s := central(limiter.TypeTokenBucket, 2, 4, c.capacity, params)
		s.SetValues(limiter.ParamOutageStart, limiter.Values{10})
		s.SetValues(limiter.ParamOutageEnd, limiter.Values{20})
		s.SetOption(limiter.OptionStoreDown, c.down)
		g, err := limiter.New(s, s.Points()[0], []float64{1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, at := range c.times {
			release, ok := g.Offer(at, 0)
			if !ok {
				release = -1
			}
			if release != c.want[i] {
				t.Errorf("%s capacity %g: request %d at %g released at %g, want %g", c.down, c.capacity, i, at, release, c.want[i])
			}
		}
	}
}

// Central instances of redis-rate decide as redis_rate's Allow, its real
// Lua script, run in miniredis with the clock at each request's store
// time (the arrival plus half the round trip): every decision equal.
func TestCentralRedisRateMatchesLibrary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	lim := redis_rate.NewLimiter(rdb)
	decisions, rejects := 0, 0
	for run := range 20 {
		rng := rand.New(rand.NewPCG(41, uint64(run)))
		limit, burst, periodMS := redisParams(rng)
		burst = max(burst, 1)
		rtt := float64(rng.IntN(6))
		s := central(limiter.TypeRedisRate, float64(1+rng.IntN(4)), rtt, 0, limiter.Params{limiter.ParamLimit: float64(limit), limiter.ParamBurst: float64(burst), "period_ms": periodMS})
		g, err := limiter.New(s, s.Points()[0], []float64{1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("central-%d", run)
		l := redis_rate.Limit{Rate: limit, Burst: burst, Period: time.Duration(math.Round(periodMS * 1e6))}
		for i, at := range redisTimes(rng, limit, periodMS) {
			_, ok := g.Offer(at, int32(i%3))
			m.SetTime(redisEpoch.Add(time.Duration(math.Round((at + rtt/2) * 1e6))))
			res, err := lim.Allow(ctx, key, l)
			if err != nil {
				t.Fatal(err)
			}
			if want := res.Allowed > 0; ok != want {
				t.Fatalf("list %d (%v, rtt %g), arrival %d at %g ms: central ok=%v, redis_rate allowed %d", run, l, rtt, i, at, ok, res.Allowed)
			}
			decisions++
			if !ok {
				rejects++
			}
		}
	}
	if rejects == 0 || rejects == decisions {
		t.Fatalf("%d refused of %d: the comparison never exercised both answers", rejects, decisions)
	}
}
