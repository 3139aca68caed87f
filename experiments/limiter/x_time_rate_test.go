package limiter_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/experiments/limiter"
)

func xtimeRateSpec(mode string) limiter.Spec {
	s := limiter.Spec{Type: limiter.TypeXTimeRate}
	s.SetOption("mode", mode)
	return s
}

func newXTimeRate(t *testing.T, mode string, p limiter.Params) limiter.Gate {
	t.Helper()
	s := xtimeRateSpec(mode)
	g, err := limiter.New(&s, p, []float64{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestXTimeRateTable(t *testing.T) {
	t.Parallel()
	for _, c := range []gateCase{
		{
			// 10 tokens/s, burst 2, AllowN: the bucket starts full, refills
			// 1 token per 100 ms, and a refused request leaves it alone.
			name: "allow", spec: xtimeRateSpec(limiter.XTimeRateAllow),
			params: limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 2, limiter.ParamMaxWait: 0},
			events: []event{
				admit(0), admit(0), reject(0), // the burst, then empty
				reject(50),              // half a token
				admit(100), reject(100), // one token, spent
				admit(250),                             // 1.5 tokens, 0.5 left
				admit(300),                             // 0.5 + 0.5
				admit(1000), admit(1000), reject(1000), // full again: 2 tokens, not 7
			},
		},
		{
			// 10 tokens/s, burst 1, ReserveN and DelayFrom, at most 150 ms:
			// the second request at 0 owes a token and waits 100 ms; the
			// third would wait 200 ms, so it is cancelled and the bucket
			// gets its token back.
			name: "reserve", spec: xtimeRateSpec(limiter.XTimeRateReserve),
			params: limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 1, limiter.ParamMaxWait: 150},
			events: []event{
				admit(0), shaped(0, 100), reject(0),
				shaped(60, 200), // -1 + 0.6 - 1 = -1.4 tokens: 140 ms
				reject(60),      // 240 ms > 150
				// At 200 ms the library's floats owe 0.9999999999999998
				// tokens, not 1 (CancelAt at 60 ms adds 1 back to the
				// rounded -2.4), so the wait truncates to 99999999 ns.
				shaped(200, 299.999999), admit(400),
			},
		},
		{
			// Burst 0 refuses everything (n <= burst fails), in both modes.
			name: "burst 0", spec: xtimeRateSpec(limiter.XTimeRateReserve),
			params: limiter.Params{limiter.ParamRate: 100, limiter.ParamBurst: 0, limiter.ParamMaxWait: 1000},
			events: []event{reject(0), reject(1000)},
		},
		{
			// Rate 0: the first burst requests pass, then none ever.
			name: "rate 0", spec: xtimeRateSpec(limiter.XTimeRateAllow),
			params: limiter.Params{limiter.ParamRate: 0, limiter.ParamBurst: 2, limiter.ParamMaxWait: 0},
			events: []event{admit(0), admit(5), reject(1e6)},
		},
	} {
		t.Run(c.name, c.run)
	}
}

// xrateParams draws a limiter: whole or fractional rates (a few 0), bursts
// 0 to 20 (a few 0).
func xrateParams(rng *rand.Rand) (float64, int) {
	r := randomRate(rng)
	switch rng.IntN(50) {
	case 0:
		r = 0
	case 1:
		r = 0.001 + rng.Float64()
	}
	b := 1 + rng.IntN(20)
	if rng.IntN(40) == 0 {
		b = 0
	}
	return r, b
}

// xrateTimes mixes the property tests' random times with times on a grid
// of the emission interval (plus or minus a nanosecond), where the float
// and nanosecond rounding decide.
func xrateTimes(rng *rand.Rand, r float64) []float64 {
	n := 50 + rng.IntN(250)
	if r == 0 || rng.IntN(3) != 0 {
		return randomTimes(rng, n)
	}
	ts := make([]float64, n)
	step := 1000 / r
	k := 0
	for i := range ts {
		k += rng.IntN(3)
		ts[i] = float64(k) * step * (0.5 + 0.5*float64(rng.IntN(2)))
		if i > 0 {
			ts[i] = max(ts[i]+float64(rng.IntN(3)-1)*1e-6, ts[i-1])
		}
	}
	return ts
}

// TestXTimeRateAllowMatchesLibrary compares every decision of allow mode
// with Limiter.AllowN(t, 1) of golang.org/x/time/rate, and the tokens with
// Limiter.TokensAt(t) bit for bit.
func TestXTimeRateAllowMatchesLibrary(t *testing.T) {
	t.Parallel()
	decisions, rejects := 0, 0
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(20, uint64(run)))
		r, b := xrateParams(rng)
		ours := limiter.NewXTimeRate(r, b, false, 0)
		theirs := rate.NewLimiter(rate.Limit(r), b)
		for i, at := range xrateTimes(rng, r) {
			release, ok := ours.Offer(at, 0)
			want := theirs.AllowN(xrateAt(at), 1)
			if ok != want || (ok && release != at) {
				t.Fatalf("run %d (rate %g burst %d), arrival %d at %g ms: ok=%v release %g, x/time/rate ok=%v",
					run, r, b, i, at, ok, release, want)
			}
			if got, want := ours.TokensAt(at), theirs.TokensAt(xrateAt(at)); got != want {
				t.Fatalf("run %d (rate %g burst %d), arrival %d at %g ms: %v tokens, x/time/rate %v", run, r, b, i, at, got, want)
			}
			decisions++
			if !ok {
				rejects++
			}
		}
	}
	if rejects == 0 || rejects == decisions {
		t.Fatalf("%d rejects of %d decisions: the comparison never exercised both answers", rejects, decisions)
	}
	t.Logf("%d lists, %d decisions (%d refused): every decision and token count equal to x/time/rate's", propertyRuns, decisions, rejects)
}

// TestXTimeRateReserveMatchesLibrary compares reserve mode with the
// caller's side of ReserveN: r := lim.ReserveN(t, 1); refused if !r.OK();
// else d := r.DelayFrom(t), and past max_wait_ms r.CancelAt(t) and refused,
// else released at t + d. Decisions, delays to the nanosecond and tokens
// must all be equal.
func TestXTimeRateReserveMatchesLibrary(t *testing.T) {
	t.Parallel()
	decisions, rejects, delayed := 0, 0, 0
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(21, uint64(run)))
		r, b := xrateParams(rng)
		maxWaitMS := []float64{0, 1, 10, 100, 1000, rng.Float64() * 500}[rng.IntN(6)]
		maxWait := time.Duration(math.Round(maxWaitMS * 1e6))
		ours := limiter.NewXTimeRate(r, b, true, maxWaitMS)
		theirs := rate.NewLimiter(rate.Limit(r), b)
		for i, at := range xrateTimes(rng, r) {
			release, ok := ours.Offer(at, 0)
			now := xrateAt(at)
			res := theirs.ReserveN(now, 1)
			want, wantRelease := res.OK(), at
			if want {
				if d := res.DelayFrom(now); d > maxWait {
					res.CancelAt(now)
					want = false
				} else if d > 0 {
					wantRelease = max(at, float64(now.Add(d).Sub(xrateEpoch))/1e6)
				}
			}
			if ok != want || (ok && release != wantRelease) {
				t.Fatalf("run %d (rate %g burst %d max wait %g ms), arrival %d at %g ms: ok=%v release %g, x/time/rate ok=%v release %g",
					run, r, b, maxWaitMS, i, at, ok, release, want, wantRelease)
			}
			if got, want := ours.TokensAt(at), theirs.TokensAt(now); got != want {
				t.Fatalf("run %d (rate %g burst %d), arrival %d at %g ms: %v tokens, x/time/rate %v", run, r, b, i, at, got, want)
			}
			decisions++
			switch {
			case !ok:
				rejects++
			case release > at:
				delayed++
			}
		}
	}
	if rejects == 0 || delayed == 0 {
		t.Fatalf("%d rejects, %d delayed of %d decisions: the comparison never exercised every answer", rejects, delayed, decisions)
	}
	t.Logf("%d lists, %d decisions (%d refused, %d delayed): every decision, delay and token count equal to x/time/rate's", propertyRuns, decisions, rejects, delayed)
}

// TestXTimeRateStaysUnderItsCurve: in both modes the releases obey
// burst + rate*(d + 2 ns) in every closed window, and in reserve mode no
// request waits more than max_wait_ms.
func TestXTimeRateStaysUnderItsCurve(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(22, uint64(run)))
		r, b := xrateParams(rng)
		mode := []string{limiter.XTimeRateAllow, limiter.XTimeRateReserve}[run%2]
		maxWait := rng.Float64() * 300
		p := limiter.Params{limiter.ParamRate: r, limiter.ParamBurst: float64(b), limiter.ParamMaxWait: maxWait}
		g := newXTimeRate(t, mode, p)
		rs := offerAll(t, g, xrateTimes(rng, r), nil, nil)
		bound, _ := limiter.GateDelayBoundMS(&limiter.Spec{Type: limiter.TypeXTimeRate, Options: map[string]string{"mode": mode}}, p)
		for _, x := range rs {
			if mode == limiter.XTimeRateAllow && x.release != x.t {
				t.Fatalf("run %d: allow mode delayed a request from %g to %g", run, x.t, x.release)
			}
			if x.release-x.t > bound+1e-9 {
				t.Fatalf("run %d: waited %g ms, more than max_wait_ms %g", run, x.release-x.t, bound)
			}
		}
		curve, _ := limiter.ArrivalCurve(&limiter.Spec{Type: limiter.TypeXTimeRate}, p, 1)
		checkCurve(t, run, "x-time-rate "+mode, releaseTimes(rs), r, curve.BurstReq)
	}
}
