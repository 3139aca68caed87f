package limiter_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// envoyGate builds an envoy-ratelimit gate through the registry (its
// defaults: unit_s 1, no second descriptor, clock start 2026-01-01).
func envoyGate(t *testing.T, p limiter.Params, options map[string]string, clients int) *limiter.EnvoyRatelimit {
	t.Helper()
	s := &limiter.Spec{Type: limiter.TypeEnvoyRatelimit}
	for name, v := range p {
		s.SetValues(name, limiter.Values{v})
	}
	for name, v := range options {
		s.SetOption(name, v)
	}
	s.Normalize()
	if errs := s.Validate("limiter"); len(errs) > 0 {
		t.Fatal(errs)
	}
	g, err := limiter.New(s, s.Points()[0], make([]float64, clients), nil)
	if err != nil {
		t.Fatal(err)
	}
	return g.(*limiter.EnvoyRatelimit)
}

// envoyproxy/ratelimit at f2fb157, request by request: the counts Redis
// holds after each request and the service's answer. Source lines in
// each row's note.
func TestEnvoyRatelimitTable(t *testing.T) {
	t.Parallel()
	type request struct {
		at     float64
		client int32
		ok     bool
		counts []uint64 // each descriptor's key after the request
	}
	for _, c := range []struct {
		name     string
		p        limiter.Params
		options  map[string]string
		requests []request
	}{
		// INCRBY key 1 then compare after > limit (fixed_cache_impl.go:
		// 184-185, base_limiter.go:104): the 4th and 5th are refused and
		// still counted (#427); the key of the next second starts at 0
		// (cache_key.go:81-82: (now/1)*1).
		{"over-limit hits are counted", limiter.Params{limiter.ParamRequestsPerUnit: 3}, nil, []request{
			{0, 0, true, []uint64{1}}, {100, 0, true, []uint64{2}}, {200, 0, true, []uint64{3}},
			{300, 0, false, []uint64{4}}, {999.999, 0, false, []uint64{5}}, {1000, 0, true, []uint64{1}},
		}},
		// The window is now/60*60 of Unix seconds: a clock start 30 s past
		// a minute puts the boundary at t = 30 s (base_limiter.go:51,
		// UnixNow in whole seconds).
		{"windows aligned to the epoch", limiter.Params{limiter.ParamRequestsPerUnit: 2, limiter.ParamUnit: 60, limiter.ParamClockStart: 1767225630}, nil, []request{
			{0, 0, true, []uint64{1}}, {1, 0, true, []uint64{2}}, {2, 0, false, []uint64{3}},
			{29_999.999, 0, false, []uint64{4}}, {30_000, 0, true, []uint64{1}},
		}},
		// Two descriptors on one request (2/s and 3/min): the request the
		// per-second limit refuses at 200 still INCRBYs the per-minute key
		// (the pipeline increments every key, 160-187), so the minute is
		// spent at 3 hits with 2 admitted; at 1000 the second's key is new
		// but the minute's says 4 > 3: refused (service/ratelimit.go:
		// 251-254, one OVER_LIMIT is the answer).
		{"a refused request spends the other descriptor", limiter.Params{limiter.ParamRequestsPerUnit: 2, limiter.ParamRequestsPerUnit2: 3}, nil, []request{
			{0, 0, true, []uint64{1, 1}}, {100, 0, true, []uint64{2, 2}}, {200, 0, false, []uint64{3, 3}},
			{1000, 0, false, []uint64{1, 4}}, {1100, 0, false, []uint64{2, 5}},
		}},
		// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: GET first (117-158);
		// at 200 the second's key would exceed (2+1 > 2), the minute's not,
		// so only the second's is incremented (getHitsAddend 61-71); at
		// 1000 the minute has its third hit; at 1100 the minute would
		// exceed and the second's key is left alone.
		{"stop increment when over limit", limiter.Params{limiter.ParamRequestsPerUnit: 2, limiter.ParamRequestsPerUnit2: 3}, map[string]string{limiter.OptionEnvoyStop: "true"}, []request{
			{0, 0, true, []uint64{1, 1}}, {100, 0, true, []uint64{2, 2}}, {200, 0, false, []uint64{3, 2}},
			{1000, 0, true, []uint64{1, 3}}, {1100, 0, false, []uint64{1, 4}},
		}},
		// With one descriptor the flag changes nothing: the key that would
		// exceed is the one near the limit, and it is incremented (67-69).
		{"stop with one descriptor", limiter.Params{limiter.ParamRequestsPerUnit: 1}, map[string]string{limiter.OptionEnvoyStop: "true"}, []request{
			{0, 0, true, []uint64{1}}, {1, 0, false, []uint64{2}}, {2, 0, false, []uint64{3}},
		}},
		// descriptor client: the client's key is the entry's value
		// (cache_key.go:66-79), a counter per client.
		{"a counter per client", limiter.Params{limiter.ParamRequestsPerUnit: 1}, map[string]string{limiter.OptionEnvoyDescriptor: "client"}, []request{
			{0, 0, true, []uint64{1}}, {1, 1, true, []uint64{1}}, {2, 0, false, []uint64{2}}, {3, 1, false, []uint64{2}},
		}},
		// requests_per_unit 0: after 1 > 0, every request OVER_LIMIT.
		{"limit 0", limiter.Params{limiter.ParamRequestsPerUnit: 0}, nil, []request{
			{0, 0, false, []uint64{1}}, {5000, 0, false, []uint64{1}},
		}},
	} {
		g := envoyGate(t, c.p, c.options, 2)
		for i, r := range c.requests {
			release, ok := g.Offer(r.at, r.client)
			if ok != r.ok || ok && release != r.at {
				t.Errorf("%s: request %d at %g: ok=%v release %g, want ok=%v", c.name, i, r.at, ok, release, r.ok)
			}
			for d, want := range r.counts {
				if got := g.Count(d, r.client, r.at); got != want {
					t.Errorf("%s: request %d at %g: descriptor %d's key holds %d, want %d", c.name, i, r.at, d, got, want)
				}
			}
		}
	}
}

// The service's counters (base_limiter.go:99-188), NEAR_LIMIT_RATIO 0.8:
// near threshold floor(float32(limit)·0.8).
func TestEnvoyRatelimitStats(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		limit, requests float64
		want            limiter.EnvoyRatelimitStats
	}{
		// threshold 8: hits 9 and 10 near (176-188: before >= 8), 11 and
		// 12 over with before >= limit (165-166).
		{10, 12, limiter.EnvoyRatelimitStats{TotalHits: 12, OverLimit: 2, NearLimit: 2, WithinLimit: 10}},
		// threshold floor(float32(3)·0.8) = floor(2.4000001) = 2: hit 3 near.
		{3, 5, limiter.EnvoyRatelimitStats{TotalHits: 5, OverLimit: 2, NearLimit: 1, WithinLimit: 3}},
		// limit 1, threshold 0: hit 1 near (after 1 > 0, before 0 >= 0).
		{1, 2, limiter.EnvoyRatelimitStats{TotalHits: 2, OverLimit: 1, NearLimit: 1, WithinLimit: 1}},
	} {
		g := envoyGate(t, limiter.Params{limiter.ParamRequestsPerUnit: c.limit}, nil, 1)
		for i := range int(c.requests) {
			g.Offer(float64(i), 0)
		}
		if got := g.Stats(0); got != c.want {
			t.Errorf("limit %g, %g hits: %+v, want %+v", c.limit, c.requests, got, c.want)
		}
	}
}

// The Retry-After: the end of the window of each descriptor at its limit.
func TestEnvoyRatelimitNextAdmit(t *testing.T) {
	t.Parallel()
	// 1 a second and 3 a minute. The time is the first float64 ms whose
	// ns (rounded, as the service's clock reads it) is in the next window:
	// 999.9999995 is 1e9 ns.
	g := envoyGate(t, limiter.Params{limiter.ParamRequestsPerUnit: 1, limiter.ParamRequestsPerUnit2: 3, limiter.ParamUnit2: 60}, nil, 1)
	for _, c := range []struct {
		at   float64
		ok   bool
		next float64 // NextAdmitMS after the request
	}{
		{0, true, 999.9999995},           // the second's key full
		{100, false, 999.9999995},        // still; the refusal spent the minute's 2nd hit
		{1000, true, 59999.999999499996}, // the minute's 3rd: full until its end
		{1500, false, 59999.999999499996},
	} {
		if _, ok := g.Offer(c.at, 0); ok != c.ok {
			t.Fatalf("request at %g: ok=%v, want %v", c.at, ok, c.ok)
		}
		if got := g.NextAdmitMS(c.at, 0); got != c.next {
			t.Errorf("after the request at %g: next admit %g, want %g", c.at, got, c.next)
		}
	}
	zero := envoyGate(t, limiter.Params{limiter.ParamRequestsPerUnit: 0}, nil, 1)
	zero.Offer(0, 0)
	if got := zero.NextAdmitMS(0, 0); !math.IsInf(got, 1) {
		t.Errorf("limit 0: next admit %g, want +Inf", got)
	}
}

// The key's expiry (EXPIRE key divider after every INCRBY,
// fixed_cache_impl.go:37, 168) never falls inside the key's window: the
// count of a live window is never lost to it.
func TestEnvoyRatelimitKeyExpiry(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(29, 427))
	for run := range 50 {
		unit := []float64{1, 60, 3600}[run%3]
		g := envoyGate(t, limiter.Params{limiter.ParamRequestsPerUnit: float64(1 + rng.IntN(20)), limiter.ParamUnit: unit,
			limiter.ParamClockStart: float64(limiter.RedisClockStartDefault + rng.IntN(86400))}, nil, 1)
		at := 0.0
		for range 400 {
			at += rng.ExpFloat64() * unit * 1000 / 30
			g.Offer(at, 0)
			expires, end, ok := g.KeyExpiresMS(0, 0)
			if !ok || expires < end || math.Abs(expires-(at+unit*1000)) > 1e-6 {
				t.Fatalf("run %d, unit %g s: after the request at %g the key expires at %g, its window ends at %g", run, unit, at, expires, end)
			}
		}
	}
}

// The gate is the commands DoLimit sends, replayed in miniredis with its
// clock moved to each request (GET when stopping increments, INCRBY and
// EXPIRE, keys named by the window start): the same answers and counts,
// the keys' expiry as Redis keeps it.
func TestEnvoyRatelimitIsItsRedisCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	rng := rand.New(rand.NewPCG(8, 427))
	refused, decisions := 0, 0
	for run := range 12 {
		m.FlushAll()
		limits := []uint64{uint64(1 + rng.IntN(8)), uint64(2 + rng.IntN(20))}
		units := []int64{1, 60}
		stop := run%2 == 1
		start := int64(limiter.RedisClockStartDefault + rng.IntN(3600))
		g := limiter.NewEnvoyRatelimit(limits[0], units[0], limits[1], units[1], stop, 1, start)
		now := time.Unix(start, 0)
		m.SetTime(now)
		at := 0.0
		for i := range 300 {
			at += rng.ExpFloat64() * 1000 / float64(2*limits[0])
			next := time.Unix(start, 0).Add(time.Duration(math.Round(at * 1e6)))
			m.FastForward(next.Sub(now)) // expire what Redis would have by then
			now = next
			m.SetTime(now)
			keys := make([]string, 2)
			for d := range 2 {
				keys[d] = "domain_key_" + strconv.Itoa(d) + "_" + strconv.FormatInt(now.Unix()/units[d]*units[d], 10)
			}
			near := []bool{false, false}
			anyNear := false
			if stop {
				for d := range 2 {
					v, err := rdb.Get(ctx, keys[d]).Uint64()
					if err != nil && err != redis.Nil {
						t.Fatal(err)
					}
					near[d] = v+1 > limits[d]
					anyNear = anyNear || near[d]
				}
			}
			want := true
			var counts [2]uint64
			for d := range 2 {
				addend := int64(1)
				if stop && anyNear && !near[d] {
					addend = 0
				}
				after, err := rdb.IncrBy(ctx, keys[d], addend).Result()
				if err != nil {
					t.Fatal(err)
				}
				if err := rdb.Expire(ctx, keys[d], time.Duration(units[d])*time.Second).Err(); err != nil {
					t.Fatal(err)
				}
				counts[d] = uint64(after)
				want = want && uint64(after) <= limits[d]
			}
			_, ok := g.Offer(at, 0)
			if ok != want {
				t.Fatalf("run %d (limits %v, stop %v), request %d at %g: gate ok=%v, Redis's counts %v say %v", run, limits, stop, i, at, ok, counts, want)
			}
			for d := range 2 {
				if got := g.Count(d, 0, at); got != counts[d] {
					t.Fatalf("run %d, request %d at %g: descriptor %d counts %d, Redis %d", run, i, at, d, got, counts[d])
				}
			}
			if !ok {
				refused++
			}
			decisions++
		}
	}
	if refused == 0 || refused == decisions {
		t.Fatalf("%d refused of %d: the replay never exercised both answers", refused, decisions)
	}
}

// Envoy's global rate limit service shared by N instances (sharing
// central, no outage): the instances decide exactly as one service does
// on the times the requests reach it (the arrival plus half the round
// trip), so no rolling window admits more than that single gate's run;
// with a store capacity, never more than its curve. Local instances of
// the same settings do admit more (the test can tell).
func TestCentralEnvoyRatelimitNeverAdmitsMoreThanOneGate(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(29, 1))
	runs := 60
	if testing.Short() {
		runs = 15
	}
	localMore := 0
	for run := range runs {
		n := 2 + rng.IntN(4)
		p := limiter.Params{limiter.ParamRequestsPerUnit: float64(1 + rng.IntN(20)), limiter.ParamUnit: 1,
			limiter.ParamClockStart: float64(limiter.RedisClockStartDefault + rng.IntN(60))}
		if run%2 == 1 {
			p[limiter.ParamRequestsPerUnit2] = p[limiter.ParamRequestsPerUnit] * float64(2+rng.IntN(30))
		}
		rtt := float64(rng.IntN(7))
		single := replicated(limiter.TypeEnvoyRatelimit, 1, limiter.BalancerRoundRobin, limiter.SharingLocal, p).Single()
		one, err := limiter.New(single, single.Points()[0], []float64{1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		free := central(limiter.TypeEnvoyRatelimit, float64(n), rtt, 0, p)
		g, _ := limiter.New(free, free.Points()[0], []float64{1}, nil)
		busyRPS := p[limiter.ParamRequestsPerUnit] * float64(1+rng.IntN(4))
		busy := central(limiter.TypeEnvoyRatelimit, float64(n), rtt, busyRPS, p)
		q, _ := limiter.New(busy, busy.Points()[0], []float64{1}, nil)
		loc := replicated(limiter.TypeEnvoyRatelimit, float64(n), limiter.BalancerRoundRobin, limiter.SharingLocal, p)
		l, _ := limiter.New(loc, loc.Points()[0], []float64{1}, nil)
		var want, got, queued, local []float64
		tm := 0.0
		for k := range 2000 {
			tm += rng.ExpFloat64() * 1000 / (p[limiter.ParamRequestsPerUnit] * float64(1+rng.IntN(2*n)))
			_, okOne := one.Offer(tm+rtt/2, 0)
			if okOne {
				want = append(want, tm+rtt/2+rtt/2)
			}
			release, ok := g.Offer(tm, 0)
			if ok != okOne || ok && release != tm+rtt/2+rtt/2 {
				t.Fatalf("run %d, request %d at %g: central admits %v at %g, the single gate at %g %v", run, k, tm, ok, release, tm+rtt/2, okOne)
			}
			if ok {
				got = append(got, release)
			}
			if release, ok := q.Offer(tm, 0); ok {
				queued = append(queued, release)
			}
			if release, ok := l.Offer(tm, 0); ok {
				local = append(local, release)
			}
		}
		curve, _ := limiter.ArrivalCurve(single, single.Points()[0], 1)
		for _, w := range []float64{0, 10, 100, 1000, 5000} {
			if a, b := mostInWindow(got, w), mostInWindow(want, w); a > b {
				t.Fatalf("run %d: central admitted %d in a window of %g ms, the single gate %d", run, a, w, b)
			}
			if most := mostInWindow(queued, w); float64(most) > curve.At(w)+1e-9 {
				t.Fatalf("run %d: central with a store capacity of %g/s admitted %d in %g ms, above the gate's curve %g", run, busyRPS, most, w, curve.At(w))
			}
			if mostInWindow(local, w) > mostInWindow(want, w) {
				localMore++
			}
		}
	}
	if localMore == 0 {
		t.Fatal("local instances never admitted more than one gate: the comparison cannot fail")
	}
}
