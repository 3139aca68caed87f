package limiter_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// The library gates' Retry-After against the libraries themselves: the
// real library admits at the advised time and refuses one unit of its
// clock earlier, and the advice is the library's own retry-after where it
// reports one.

// xTimeRateStep is one call made on a rate.Limiter: AllowN, or ReserveN with a
// CancelAt when the wait passed max_wait.
type xTimeRateStep struct {
	at      time.Time
	reserve bool
}

// xrateReplay is a fresh rate.Limiter that went through ops.
func xrateReplay(r float64, b int, maxWait time.Duration, ops []xTimeRateStep) *rate.Limiter {
	l := rate.NewLimiter(rate.Limit(r), b)
	for _, op := range ops {
		if !op.reserve {
			l.AllowN(op.at, 1)
			continue
		}
		if res := l.ReserveN(op.at, 1); res.OK() && res.DelayFrom(op.at) > maxWait {
			res.CancelAt(op.at)
		}
	}
	return l
}

// xratePasses is whether the limiter after ops would pass a request at
// at: AllowN, or a reservation whose wait is at most maxWait.
func xratePasses(r float64, b int, reserve bool, maxWait time.Duration, ops []xTimeRateStep, at time.Time) bool {
	l := xrateReplay(r, b, maxWait, ops)
	if !reserve {
		return l.AllowN(at, 1)
	}
	res := l.ReserveN(at, 1)
	return res.OK() && res.DelayFrom(at) <= maxWait
}

// TestXTimeRateRetryAfterIsTheLibrarys: after every refusal the gate's
// NextAdmitMS is the library's own answer, ReserveN(t, 1), DelayFrom(t)
// (less max_wait in reserve mode), then Cancel, to the nanosecond; where
// it is not, it is the first nanosecond at which the library passes the
// request: one earlier (AllowN passes a deficit that needs less than a
// nanosecond of refill, so the library's own wait can be a nanosecond
// long) or later (the wait, truncated, a hair short). The real
// limiter (replayed to the refusal) passes a request at the advised
// nanosecond and refuses one a nanosecond earlier. 300 seeded lists per
// mode.
func TestXTimeRateRetryAfterIsTheLibrarys(t *testing.T) {
	t.Parallel()
	for _, reserve := range []bool{false, true} {
		refusals, same, early, later, never := 0, 0, 0, 0, 0
		for run := range 300 {
			rng := rand.New(rand.NewPCG(23, uint64(run)))
			r, b := xrateParams(rng)
			maxWaitMS := 0.0
			if reserve {
				maxWaitMS = []float64{0, 1, 10, 100, rng.Float64() * 50}[rng.IntN(5)]
			}
			maxWait := time.Duration(math.Round(maxWaitMS * 1e6))
			ours := limiter.NewXTimeRate(r, b, reserve, maxWaitMS)
			var ops []xTimeRateStep
			last := 0.0
			for _, at := range xrateTimes(rng, r) {
				at = max(at, last) // after a retry
				last = at
				now := xrateAt(at)
				if _, ok := ours.Offer(at, 0); ok {
					ops = append(ops, xTimeRateStep{now, reserve})
					continue
				}
				ops = append(ops, xTimeRateStep{now, reserve})
				refusals++
				next := ours.NextAdmitMS(at, 0)
				// the library's answer: ReserveN, DelayFrom, Cancel
				res := xrateReplay(r, b, maxWait, ops).ReserveN(now, 1)
				if math.IsInf(next, 1) {
					if res.OK() && res.DelayFrom(now) != rate.InfDuration {
						t.Fatalf("run %d (rate %g burst %d): advised never, the library waits %v", run, r, b, res.DelayFrom(now))
					}
					never++
					continue
				}
				wait := res.DelayFrom(now) - maxWait
				advised := xrateAt(next)
				switch got := advised.Sub(now); {
				case got == wait:
					same++
				case got == wait-1:
					// the library admits a deficit that needs less than a
					// nanosecond of refill: its own wait, truncated, can be
					// that nanosecond longer than needed
					early++
				case got > wait:
					later++
				default:
					t.Fatalf("run %d (rate %g burst %d): advised %v after the refusal, the library's retry-after is %v", run, r, b, got, wait)
				}
				if !xratePasses(r, b, reserve, maxWait, ops, advised) {
					t.Fatalf("run %d (rate %g burst %d max wait %v): refused at %v, advised %v later, x/time/rate refuses there", run, r, b, maxWait, now, advised.Sub(now))
				}
				if before := advised.Add(-1); before.After(now) && xratePasses(r, b, reserve, maxWait, ops, before) {
					t.Fatalf("run %d (rate %g burst %d): advised %v later, x/time/rate passes 1 ns earlier", run, r, b, advised.Sub(now))
				}
				if rng.IntN(2) == 0 { // retry there
					if _, ok := ours.Offer(next, 0); !ok {
						t.Fatalf("run %d: advised %g, refused there", run, next)
					}
					ops = append(ops, xTimeRateStep{xrateAt(next), reserve})
					last = next
				}
			}
		}
		t.Logf("reserve %v: %d refusals: advice = the library's ReserveN/DelayFrom %d times, 1 ns earlier (the library passes there too) %d, later (its truncated wait is short) %d, never (burst 0, rate 0) %d",
			reserve, refusals, same, early, later, never)
		if same == 0 || refusals < 300 {
			t.Errorf("reserve %v: %d refusals, %d equal to the library's: the lists should exercise the advice", reserve, refusals, same)
		}
	}
}

// TestRedisRateRetryAfterIsTheScripts runs redis_rate v10's real Lua script
// in miniredis beside the gate: on every refusal the script's
// Result.RetryAfter puts the next admission at the first microsecond of
// Redis's clock at or after now + RetryAfter, which is the gate's
// NextAdmitMS (or a microsecond either side: the script's seconds since
// 2017 are float64 steps of 60 ns, so its RetryAfter rounds); the script refuses a microsecond earlier (a refusal leaves
// the key alone) and allows at the advised time. 100 seeded lists (about
// 840 refusals; 300 before, but a mutation of NextAdmitMS — a µs late or
// early, the script's guess without the search for the first µs, allowed
// only at a negative RetryAfter — fails in the first list).
func TestRedisRateRetryAfterIsTheScripts(t *testing.T) {
	t.Parallel()
	defer debug.SetGCPercent(debug.SetGCPercent(800))
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	lim := redis_rate.NewLimiter(rdb)
	allow := func(key string, l redis_rate.Limit, at float64) *redis_rate.Result {
		m.SetTime(redisEpoch.Add(time.Duration(math.Round(at * 1e6))))
		res, err := lim.Allow(ctx, key, l)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	refusals, same, near := 0, 0, 0
	for run := range 100 {
		rng := rand.New(rand.NewPCG(42, uint64(run)))
		limit, burst, periodMS := redisParams(rng)
		if burst == 0 {
			burst = 1 + rng.IntN(5)
		}
		key := fmt.Sprintf("advise-%d", run)
		l := redis_rate.Limit{Rate: limit, Burst: burst, Period: time.Duration(math.Round(periodMS * 1e6))}
		ours := limiter.NewRedisRate(limit, burst, periodMS)
		last := 0.0
		for _, at := range redisTimes(rng, limit, periodMS)[:20] {
			at = max(at, last) // after a retry
			last = at
			_, ok := ours.Offer(at, 0)
			res := allow(key, l, at)
			if ok != (res.Allowed > 0) {
				t.Fatalf("run %d: the gate and the script disagree at %g", run, at)
			}
			if ok {
				continue
			}
			refusals++
			next := ours.NextAdmitMS(at, 0)
			nowUS := int64(math.Round(at*1e6)) / 1000
			nextUS := int64(math.Round(next*1e6)) / 1000
			// the first µs at or after now + RetryAfter, give or take the
			// µs that the script's float64 seconds (2^-24 s steps at
			// 2026) put RetryAfter on either side of
			wantUS := nowUS + (int64(res.RetryAfter)+999)/1000
			switch nextUS - wantUS {
			case 0:
				same++
			case -1, 1:
				near++
			default:
				t.Fatalf("run %d (%v): refused at %d µs, advised %d µs, the script's RetryAfter %v", run, l, nowUS, nextUS, res.RetryAfter)
			}
			if before := float64(nextUS-1) / 1000; nextUS-1 > nowUS {
				if res := allow(key, l, before); res.Allowed > 0 {
					t.Fatalf("run %d (%v): advised %d µs, the script allows at %d µs", run, l, nextUS, nextUS-1)
				}
			}
			if rng.IntN(2) == 0 {
				if _, ok := ours.Offer(next, 0); !ok {
					t.Fatalf("run %d: advised %g, refused there", run, next)
				}
				if res := allow(key, l, next); res.Allowed == 0 {
					t.Fatalf("run %d (%v): advised %d µs, the script refuses there (RetryAfter %v)", run, l, nextUS, res.RetryAfter)
				}
				last = next
			}
		}
	}
	t.Logf("%d refusals: the advice is the first µs at or after the script's RetryAfter %d times, a µs either side %d times", refusals, same, near)
	if refusals < 500 || same < refusals*9/10 {
		t.Errorf("%d refusals, %d at the script's RetryAfter", refusals, same)
	}
}

// TestGuavaRetryAfterAgreesWithTheJar: Guava has no Retry-After; its
// canAcquire turns true at nextFreeTicketMicros - timeout. On 300 seeded
// streams, after every refusal the gate advises a µs U; the stream then
// asks Guava's own RateLimiter (the Debian jar, the driver of
// TestGuavaMatchesTheRealJar) at U - 1 µs, which it must refuse, and at U,
// which it must grant, and every other decision must match the gate's.
func TestGuavaRetryAfterAgreesWithTheJar(t *testing.T) {
	t.Parallel()
	type probe struct{ before, at int } // indexes in the stream; before -1: none
	streams := make([]guavaStream, 300)
	probes := make([][]probe, len(streams))
	want := make([][]bool, len(streams))
	for i := range streams {
		src := randomGuavaStream(rand.New(rand.NewPCG(12, uint64(i))))
		s := src
		s.ns = nil
		typ, p := s.kind()
		g := libGate(t, typ, p, nil, 1)
		adv := g.(limiter.Advisor)
		offer := func(ns int64) bool {
			s.ns = append(s.ns, ns)
			_, ok := g.Offer(float64(ns)/1e6, 0)
			want[i] = append(want[i], ok)
			return ok
		}
		var last int64
		for _, ns := range src.ns {
			ns = max(ns, last)
			last = ns
			if offer(ns) {
				continue
			}
			next := adv.NextAdmitMS(float64(ns)/1e6, 0)
			u := int64(math.Round(next * 1000)) // the µs the gate reads there
			pr := probe{before: -1}
			if (u-1)*1000 > ns {
				pr.before = len(s.ns)
				if offer((u - 1) * 1000) {
					t.Fatalf("stream %d: advised %d µs, the gate admits at %d µs", i, u, u-1)
				}
			}
			pr.at = len(s.ns)
			if !offer(max(u*1000, ns)) {
				t.Fatalf("stream %d: advised %d µs, the gate refuses there", i, u)
			}
			probes[i] = append(probes[i], pr)
			last = max(u*1000, ns)
		}
		streams[i] = s
	}
	out := runGuavaDriver(t, streams)
	lines := bufio.NewScanner(bytes.NewReader(out))
	lines.Buffer(make([]byte, 1<<20), 1<<24)
	checked, before := 0, 0
	for i := range streams {
		if !lines.Scan() {
			t.Fatalf("the driver answered %d of %d streams", i, len(streams))
		}
		fields := strings.Fields(lines.Text())
		if len(fields) != len(want[i]) {
			t.Fatalf("stream %d: %d answers for %d arrivals", i, len(fields), len(want[i]))
		}
		granted := func(j int) bool {
			w, err := strconv.ParseInt(fields[j], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return w >= 0
		}
		for j := range fields {
			if granted(j) != want[i][j] {
				t.Fatalf("stream %d arrival %d at %d ns: the gate admits %v, Guava %v", i, j, streams[i].ns[j], want[i][j], granted(j))
			}
		}
		for _, pr := range probes[i] {
			if pr.before >= 0 {
				if granted(pr.before) {
					t.Fatalf("stream %d: Guava grants a µs before the advised time (arrival %d)", i, pr.before)
				}
				before++
			}
			if !granted(pr.at) {
				t.Fatalf("stream %d: Guava refuses at the advised time (arrival %d)", i, pr.at)
			}
			checked++
		}
	}
	t.Logf("%d refusals: Guava %s grants at every advised µs and refuses %d times a µs before (the rest advised the next µs)", checked, guavaJar(), before)
	if checked < 300 {
		t.Errorf("only %d refusals", checked)
	}
}
