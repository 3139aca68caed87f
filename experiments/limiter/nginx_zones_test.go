package limiter_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// One zone checked as nginx's handler checks a location's directives is
// the gate itself, decision for decision, per key and with delays; and
// the gate grows its keys as a replay names them.
func TestNginxZonesOfOneIsTheGate(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(40, uint64(run)))
		p, nodelay := randomNginx(rng)
		const clients = 5
		a := limiter.NewNginxLimitReq(p[limiter.ParamRate], p[limiter.ParamBurst], p[limiter.ParamNginxDelay], nodelay, true, clients)
		b := limiter.NewNginxZones([]*limiter.NginxLimitReq{
			limiter.NewNginxLimitReq(p[limiter.ParamRate], p[limiter.ParamBurst], p[limiter.ParamNginxDelay], nodelay, true, 1)})
		for i, tm := range randomTimes(rng, 300) {
			c := int32(rng.IntN(clients))
			ra, oka := a.Offer(tm, c)
			rb, okb := b.OfferKeys(tm, []int32{c})
			if ra != rb || oka != okb {
				t.Fatalf("run %d %v nodelay=%v: request %d at %g client %d: gate %g %v, zones %g %v", run, p, nodelay, i, tm, c, ra, oka, rb, okb)
			}
		}
	}
}

// Two zones, worked from ngx_http_limit_req_handler by hand: zone A
// (per key, 1r/s = 1 thousandth a ms, burst=1 nodelay) then zone B (one
// key, 1r/s, burst=2 nodelay).
func TestNginxZonesTwo(t *testing.T) {
	t.Parallel()
	newZones := func() *limiter.NginxZones {
		return limiter.NewNginxZones([]*limiter.NginxLimitReq{
			limiter.NewNginxLimitReq(1, 1, 0, true, true, 1),
			limiter.NewNginxLimitReq(1, 2, 0, true, false, 1),
		})
	}
	type step struct {
		t    float64
		keys []int32
		ok   bool
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"a key a zone before the last creates starts drained: its first request costs nothing; B's refusal charges A nothing", []step{
			{0, []int32{0, 0}, true},     // A: new key 0, created with last = 0, charged to max(0 - all + 1000, 0) = 0; B: new, 0
			{0, []int32{0, 0}, true},     // A: 0+1000 = 1000, charged; B: 1000
			{0, []int32{0, 0}, false},    // A: 2000 > 1000
			{0, []int32{1, 0}, true},     // A: new key 1; B: 2000
			{0, []int32{2, 0}, false},    // A: key 2 created (never charged); B: 3000 > 2000
			{500, []int32{2, 0}, false},  // A: key 2 drained, 0; B: 2000-500+1000 = 2500 > 2000
			{1000, []int32{2, 0}, true},  // A: 0; B: 2000-1000+1000 = 2000, stored; A charged 0
			{1000, []int32{2, 0}, false}, // A: 1000 (not stored); B: 3000 > 2000
			{1000, []int32{2, 0}, false}, // the same: A still at 0
		}},
		{"an empty key skips its zone; the last zone with a key is charged like the others", []step{
			{0, []int32{-1, 0}, true},
			{0, []int32{-1, 0}, true},
			{0, []int32{-1, 0}, true},
			{0, []int32{-1, 0}, false}, // B: 3000 > 2000
			{0, []int32{-1, -1}, true}, // no key: untouched
			{0, []int32{5, -1}, true},  // A: new key 5, charged to 0
			{0, []int32{5, -1}, true},  // A: 1000
			{0, []int32{5, -1}, false}, // A: 2000 > 1000
		}},
	}
	for _, c := range cases {
		z := newZones()
		for i, s := range c.steps {
			_, ok := z.OfferKeys(s.t, s.keys)
			if ok != s.ok {
				t.Errorf("%s: step %d (t %g keys %v): ok %v, want %v", c.name, i, s.t, s.keys, ok, s.ok)
			}
		}
	}
}
