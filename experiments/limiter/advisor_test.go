package limiter_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// A gate's Retry-After (limiter.Advisor) is honest: after a rejection at
// t, a request at the advised time is admitted (nothing in between), and
// the gate rejects at every earlier time it is asked about.
func TestAdvisorsSayWhenTheyAdmitAgain(t *testing.T) {
	gates := map[string]func() limiter.Gate{
		"token-bucket":           func() limiter.Gate { return limiter.NewTokenBucket(50, 3) },
		"fixed-window":           func() limiter.Gate { return limiter.NewFixedWindow(4, 200) },
		"sliding-window-log":     func() limiter.Gate { return limiter.NewSlidingWindowLog(4, 200) },
		"sliding-window-counter": func() limiter.Gate { return limiter.NewSlidingWindowCounter(4, 200) },
		"gcra":                   func() limiter.Gate { return limiter.NewGCRA(50, 3) },
		"leaky-bucket":           func() limiter.Gate { return limiter.NewLeakyBucket(50, 3) },
	}
	for name, mk := range gates {
		for seed := range uint64(300) {
			rng := rand.New(rand.NewPCG(seed, 1))
			g := mk()
			adv, ok := g.(limiter.Advisor)
			if !ok {
				t.Fatalf("%s is not an Advisor", name)
			}
			now := 0.0
			for range 200 {
				now += rng.ExpFloat64() * 5
				if _, ok := g.Offer(now, 0); ok {
					continue
				}
				next := adv.NextAdmitMS(now, 0)
				if next < now {
					t.Fatalf("%s seed %d: advised %g before the rejection at %g", name, seed, next, now)
				}
				if _, ok := g.Offer(next, 0); !ok {
					t.Fatalf("%s seed %d: rejected at %g, advised %g, rejected again there", name, seed, now, next)
				}
				now = next
			}
		}
	}
}
