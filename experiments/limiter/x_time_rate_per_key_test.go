package limiter_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// Without idle expiry, every key decides as its own x/time/rate Limiter
// fed the key's requests alone.
func TestXTimeRatePerKeyIsALimiterPerKey(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns / 4 {
		rng := rand.New(rand.NewPCG(41, uint64(run)))
		rate, burst := randomRate(rng), 1+rng.IntN(20)
		reserve := rng.IntN(2) == 0
		wait := float64(rng.IntN(50))
		g := limiter.NewXTimeRatePerKey(rate, burst, reserve, wait, 0)
		const clients = 4
		own := make([]*limiter.XTimeRate, clients)
		for i := range own {
			own[i] = limiter.NewXTimeRate(rate, burst, reserve, wait)
		}
		for i, tm := range randomTimes(rng, 300) {
			c := int32(rng.IntN(clients))
			r1, ok1 := g.Offer(tm, c)
			r2, ok2 := own[c].Offer(tm, 0)
			if r1 != r2 || ok1 != ok2 {
				t.Fatalf("run %d: request %d at %g client %d: per key %g %v, own limiter %g %v", run, i, tm, c, r1, ok1, r2, ok2)
			}
		}
	}
}

// Traefik's ttlmap: a key's entry expires at floor(last use, s) + idle_s,
// and a request then gets a new, full limiter; every request sets the
// expiry again, a refused one too.
func TestXTimeRatePerKeyIdle(t *testing.T) {
	t.Parallel()
	g := limiter.NewXTimeRatePerKey(1, 2, false, 0, 2) // 1/s, burst 2, forgotten after 2 whole s
	steps := []struct {
		t  float64
		ok bool
	}{
		{0, true}, {0, true}, {0, false}, // the burst; expiry 0 + 2
		{1999, true}, // second 1 < 2: kept; 1.999 tokens, one passes; expiry 1 + 2
		{3999, true}, // second 3 >= 3: a new, full limiter; expiry 3 + 2
		{3999, true},
		{3999, false},
	}
	for i, s := range steps {
		if _, ok := g.Offer(s.t, 0); ok != s.ok {
			t.Errorf("step %d at %g: ok %v, want %v", i, s.t, ok, s.ok)
		}
	}
	own := limiter.NewXTimeRate(1, 2, false, 0)
	for range 3 {
		own.Offer(3999, 0)
	}
	if got, want := g.NextAdmitMS(3999, 0), own.NextAdmitMS(3999, 0); got != want || want > 5000 {
		t.Errorf("next admit %g, want the limiter's own %g (before the expiry at 5 s)", got, want)
	}
	// At 0.1/s a token takes 10 s: the expiry, 2 s on, comes first.
	slow := limiter.NewXTimeRatePerKey(0.1, 1, false, 0, 2)
	slow.Offer(500, 0)
	if got := slow.NextAdmitMS(500, 0); got != 2000 {
		t.Errorf("slow: next admit %g, want 2000 (the expiry)", got)
	}
	if _, ok := slow.Offer(1999, 0); ok {
		t.Error("slow: passed before the expiry")
	}
	if _, ok := slow.Offer(2000, 0); ok {
		t.Error("slow: the refused request at 1.999 s moved the expiry to 3 s, but 2 s passed")
	}
	if _, ok := slow.Offer(4000, 0); !ok {
		t.Error("slow: the refused request at 2 s moved it to 4 s: at 4 s the entry expires and a new, full limiter passes")
	}
}
