package limiter_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/ratelab/ratelab/experiments/limiter"
)

func TestRedisRateTable(t *testing.T) {
	t.Parallel()
	redisRate := limiter.Spec{Type: limiter.TypeRedisRate}
	for _, c := range []gateCase{
		{
			// PerSecond(4) with burst 2: T = 0.25 s, exact in binary. The
			// key starts absent (a full bucket); a refusal sets nothing.
			name: "burst then pace", spec: redisRate,
			params: limiter.Params{limiter.ParamLimit: 4, limiter.ParamPeriod: 1000, limiter.ParamBurst: 2},
			events: []event{admit(0), admit(0), reject(0), reject(249.999), admit(250), reject(250), admit(500), admit(1000), admit(1000), reject(1000)},
		},
		{
			// Burst 1: one request per T. TIME truncates to the
			// microsecond: 0.1 µs early reads as 1 µs early (refused),
			// 0.9 µs late as on time, and the next T counts from there.
			name: "burst 1", spec: redisRate,
			params: limiter.Params{limiter.ParamLimit: 4, limiter.ParamPeriod: 1000, limiter.ParamBurst: 1},
			events: []event{admit(0), reject(249.999), admit(250), reject(499.9999), admit(500.0009), admit(750.0008)},
		},
		{
			// Burst 0: allow_at = now + T, never reached.
			name: "burst 0", spec: redisRate,
			params: limiter.Params{limiter.ParamLimit: 4, limiter.ParamPeriod: 1000, limiter.ParamBurst: 0},
			events: []event{reject(0), reject(10_000)},
		},
	} {
		t.Run(c.name, c.run)
	}
}

// redisEpoch is the gate's t = 0.
var redisEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// redisParams draws a Limit: periods of PerSecond, PerMinute, PerHour or
// whole ms, rates up to 1000 per period, bursts 0 to 20.
func redisParams(rng *rand.Rand) (limit, burst int, periodMS float64) {
	limit = 1 + rng.IntN(1000)
	periodMS = []float64{1000, 60_000, 3_600_000, float64(1000 + rng.IntN(9000))}[rng.IntN(4)]
	burst = rng.IntN(21)
	if rng.IntN(5) == 0 {
		burst = 1
	}
	return limit, burst, periodMS
}

// redisTimes are the property tests' random times, or times on the
// emission interval's grid give or take a microsecond, where the script's
// rounding decides.
func redisTimes(rng *rand.Rand, limit int, periodMS float64) []float64 {
	n := 20 + rng.IntN(60) // miniredis runs each call in a fresh Lua state: keep lists short
	if rng.IntN(2) == 0 {
		ts := randomTimes(rng, n)
		if rng.IntN(2) == 0 { // on the microsecond
			for i := range ts {
				ts[i] = math.Round(ts[i]*1000) / 1000
			}
		}
		return ts
	}
	step := periodMS / float64(limit)
	ts := make([]float64, n)
	k := 0
	for i := range ts {
		k += rng.IntN(2)
		ts[i] = math.Round((float64(k)*step+float64(rng.IntN(3)-1)*0.001)*1000) / 1000
		if i > 0 {
			ts[i] = max(ts[i], ts[i-1])
		}
	}
	return ts
}

// redisLists is how many random lists TestRedisRateMatchesLibrary runs
// with the keys' expiry and how many without. Each call costs miniredis a
// fresh Lua state (about 0.2 ms of CPU), so the lists are fewer than the
// other property tests' propertyRuns: 1000 lists took 12 s of CPU. Against
// the script's answers to all 1000, the mutations of the gate the lists
// can see were each caught by at least 17 of the first 100 per mode (and
// by 7 of the first 25): Redis's TIME rounded instead of truncated to the
// µs (50 lists), the arrival's ns truncated instead of rounded (17), diff
// as now - new_tat + T*burst (31), remaining <= 0 refused (78), a refusal
// storing its TAT (176). Others change no decision or TAT of any of the
// 1000 lists (the period not rounded to the ns, T*burst as
// period*burst/rate, now summed from the whole µs count), so more lists
// would not catch them either.
const redisLists = 100

// TestRedisRateMatchesLibrary runs redis_rate v10's Allow, its real Lua
// script, in miniredis with the server's clock set to each arrival
// (miniredis SetTime), and compares every decision and the stored TAT.
// Half of the lists run with the keys' expiry following that clock
// (miniredis ClockTTL), half without: the gate leaves expiry out, and it
// changes no decision.
func TestRedisRateMatchesLibrary(t *testing.T) {
	t.Parallel()
	// Every call builds a Lua state (about a megabyte): collect less often.
	defer debug.SetGCPercent(debug.SetGCPercent(800))
	ctx := context.Background()
	decisions, rejects := 0, 0
	for _, expiry := range []bool{false, true} {
		m := miniredis.RunT(t)
		m.ClockTTL(expiry)
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
		lim := redis_rate.NewLimiter(rdb)
		for run := range redisLists {
			seed := uint64(run)
			if expiry {
				seed += propertyRuns / 2 // the seeds of 1000 lists before
			}
			rng := rand.New(rand.NewPCG(40, seed))
			limit, burst, periodMS := redisParams(rng)
			key := fmt.Sprintf("run-%d", seed)
			l := redis_rate.Limit{Rate: limit, Burst: burst, Period: time.Duration(math.Round(periodMS * 1e6))}
			ours := limiter.NewRedisRate(limit, burst, periodMS)
			for i, at := range redisTimes(rng, limit, periodMS) {
				_, ok := ours.Offer(at, 0)
				m.SetTime(redisEpoch.Add(time.Duration(math.Round(at * 1e6))))
				res, err := lim.Allow(ctx, key, l)
				if err != nil {
					t.Fatal(err)
				}
				tat, has := ours.TAT()
				if want := res.Allowed > 0; ok != want {
					t.Fatalf("list %d (%v), arrival %d at %g ms: ok=%v (TAT %.17g), redis_rate allowed %d",
						seed, l, i, at, ok, tat, res.Allowed)
				}
				// The key holds the script's TAT: equal to the gate's, bit
				// for bit (unless it expired).
				if stored, err := m.Get("rate:" + key); err == nil {
					if v, err := strconv.ParseFloat(stored, 64); err != nil || !has || v != tat {
						t.Fatalf("list %d (%v), arrival %d at %g ms: key holds %q, the gate's TAT is %.17g (set %v)", seed, l, i, at, stored, tat, has)
					}
				} else if !expiry && has {
					t.Fatalf("list %d: no key, the gate holds TAT %.17g", seed, tat)
				}
				decisions++
				if !ok {
					rejects++
				}
			}
		}
		rdb.Close()
	}
	if rejects == 0 || rejects == decisions {
		t.Fatalf("%d rejects of %d decisions: the comparison never exercised both answers", rejects, decisions)
	}
	t.Logf("%d lists, %d decisions (%d refused): every decision equal to redis_rate's script in miniredis", 2*redisLists, decisions, rejects)
}

// TestRedisRateRoundingAdmitsMore: PerSecond(1000) (burst 1000) kept
// busy by a request every 0.5 ms for 200 s. Each admission moves the TAT
// by 1 ms rounded to the script's 2^-24 s grid, 16777 steps instead of
// 16777.216, so the key admits 1000.0129 per second: 3 more in 200 s than
// the exact GCRA with the same settings (200999 in [0, 199999.5 ms], the
// textbook burst + one per ms). The gate's curve, which counts the
// rounding, still holds.
func TestRedisRateRoundingAdmitsMore(t *testing.T) {
	t.Parallel()
	p := limiter.Params{limiter.ParamLimit: 1000, limiter.ParamPeriod: 1000, limiter.ParamBurst: 1000}
	g, exact := limiter.NewRedisRate(1000, 1000, 1000), limiter.NewGCRA(1000, 1000)
	admitted, textbook, last := 0, 0, 0.0
	step := 16777 * 0x1p-24
	for k := 0; k < 400_000; k++ {
		at := float64(k) * 0.5
		if _, ok := exact.Offer(at, 0); ok {
			textbook++
		}
		before, had := g.TAT()
		if _, ok := g.Offer(at, 0); ok {
			admitted++
			// After the first admission the TAT runs ahead of now (one
			// admission per ms, a request every 0.5 ms): new_tat = tat + T.
			if after, _ := g.TAT(); had && after-before != step {
				t.Fatalf("arrival %d: TAT moved by %.17g s, want 16777*2^-24 = %.17g", k, after-before, step)
			}
			last = at
		}
	}
	if textbook != 200_999 || admitted != textbook+3 {
		t.Errorf("admitted %d in [0, 200 s], the exact GCRA %d: want 200999 and 3 more", admitted, textbook)
	}
	if textbook := 1000 + last; float64(admitted) <= textbook {
		t.Errorf("admitted %d in [0, %g ms], within burst + rate*d = %g", admitted, last, textbook)
	}
	c, _ := limiter.ArrivalCurve(&limiter.Spec{Type: limiter.TypeRedisRate}, p, 1)
	if a := c.At(last); float64(admitted) > a {
		t.Errorf("admitted %d in %g ms, above the gate's curve %v = %g", admitted, last, c, a)
	}
	t.Logf("admitted %d in [0, %g ms]; the exact GCRA %d; curve %v gives %.2f", admitted, last, textbook, c, c.At(last))
}

// TestRedisRateStaysUnderItsCurve: the releases never exceed the kind's
// curve (the GCRA's, widened by the script's clock and rounding at the
// clock start's date, drawn from 2017 to 2100) in any closed window.
func TestRedisRateStaysUnderItsCurve(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(41, uint64(run)))
		limit, burst, periodMS := redisParams(rng)
		p := limiter.Params{limiter.ParamLimit: float64(limit), limiter.ParamBurst: float64(burst), limiter.ParamPeriod: periodMS,
			limiter.ParamClockStart: float64(1483228800 + rng.Int64N(limiter.RedisClockStartMax-1483228800+1))}
		g := newGate(t, limiter.TypeRedisRate, p, nil, "", nil)
		rs := offerAll(t, g, redisTimes(rng, limit, periodMS), nil, nil)
		c, _ := limiter.ArrivalCurve(&limiter.Spec{Type: limiter.TypeRedisRate}, p, 1)
		checkCurve(t, run, "redis-rate", releaseTimes(rs), c.RatePerMS*1000, c.BurstReq)
	}
}

// TestRedisRateAtThreeDates: with clock_start_unix_s the gate takes the
// library's decisions at any date, against redis_rate v10's script in one
// miniredis whose clock starts at each date: in 2017 (now a few seconds,
// fine float64 steps), in March 2025 (now below 2^28 s, steps of 2^-25 s)
// and in 2040 (now above 2^29 s, steps of 2^-23 s). The script's rounding
// moves with the date, so the gate at the default clock start (2026)
// decides some requests otherwise at these dates: the test counts them,
// and fails if none differs (the dates would not show the parameter's
// worth).
func TestRedisRateAtThreeDates(t *testing.T) {
	t.Parallel()
	defer debug.SetGCPercent(debug.SetGCPercent(800))
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	lim := redis_rate.NewLimiter(rdb)
	const lists = 12
	differ := 0
	for d, date := range []time.Time{
		time.Date(2017, 1, 1, 0, 0, 3, 0, time.UTC),
		time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		start := date.Unix()
		decisions, rejects, off2026 := 0, 0, 0
		for run := range lists {
			rng := rand.New(rand.NewPCG(42, uint64(d*lists+run)))
			limit, burst, periodMS := redisParams(rng)
			key := fmt.Sprintf("date-%d-run-%d", d, run)
			l := redis_rate.Limit{Rate: limit, Burst: burst, Period: time.Duration(math.Round(periodMS * 1e6))}
			p := limiter.Params{limiter.ParamLimit: float64(limit), limiter.ParamBurst: float64(burst), limiter.ParamPeriod: periodMS,
				limiter.ParamClockStart: float64(start)}
			ours := newGate(t, limiter.TypeRedisRate, p, nil, "", nil)
			at2026 := limiter.NewRedisRate(limit, burst, periodMS)
			for i, at := range redisTimes(rng, limit, periodMS) {
				_, ok := ours.Offer(at, 0)
				_, ok2026 := at2026.Offer(at, 0)
				m.SetTime(date.Add(time.Duration(math.Round(at * 1e6))))
				res, err := lim.Allow(ctx, key, l)
				if err != nil {
					t.Fatal(err)
				}
				want := res.Allowed > 0
				if ok != want {
					t.Fatalf("%s, list %d (%v), arrival %d at %g ms: ok=%v, redis_rate allowed %d", date.Format(time.DateOnly), run, l, i, at, ok, res.Allowed)
				}
				if ok2026 != want {
					off2026++
				}
				decisions++
				if !ok {
					rejects++
				}
			}
		}
		if rejects == 0 || rejects == decisions {
			t.Fatalf("%s: %d rejects of %d decisions: the comparison never exercised both answers", date.Format(time.DateOnly), rejects, decisions)
		}
		differ += off2026
		t.Logf("%s (clock_start_unix_s %d): %d decisions (%d refused) equal to redis_rate's; the gate at the 2026 clock decides %d otherwise",
			date.Format(time.DateOnly), start, decisions, rejects, off2026)
	}
	if differ == 0 {
		t.Errorf("the gate at the 2026 clock decides every request alike at all three dates: the dates show nothing")
	}
}
