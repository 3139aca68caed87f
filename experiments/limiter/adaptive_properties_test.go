package limiter

import (
	"math/rand/v2"
	"testing"
)

// Every adaptive gate keeps its limit within [min, max] whatever samples
// it hears: random RTTs (0.1 µs to 10 s), drops and in-flight counts,
// through the gate's own Offer and Complete (and timers), from random
// settings.
func TestAdaptiveLimitStaysWithinBounds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	for round := range rounds {
		minL := 1 + rng.IntN(30)
		maxL := minL + rng.IntN(300)
		init := minL + rng.IntN(maxL-minL+1)
		spec := &Spec{Options: map[string]string{}}
		if rng.IntN(2) == 0 {
			spec.Options[OptionNetflixWindow] = NetflixWindowWindowed
		}
		type gateCase struct {
			name     string
			gate     Adaptive
			min, max int
		}
		var cases []gateCase
		aimd, _ := newNetflixLimiter(spec, NewNetflixAIMD(init, minL, maxL, 0.5+rng.Float64()*0.49, 1+rng.Float64()*100), nil, nil)
		vegas, _ := newNetflixLimiter(spec, NewNetflixVegas(init, maxL, 0.01+rng.Float64()*0.99, 1+rng.IntN(40), rng.Uint64()), nil, nil)
		g2, _ := newNetflixLimiter(spec, NewNetflixGradient2(init, minL, maxL, 0.01+rng.Float64()*0.99, rng.IntN(10), 1+rng.IntN(700), 1+rng.Float64()*2), nil, nil)
		envoy := NewEnvoyAdaptive(EnvoyAdaptiveConfig{MinRTTCalcIntervalMS: 1 + rng.Float64()*500, ConcurrencyUpdateIntervalMS: 1 + rng.Float64()*50,
			JitterPct: rng.Float64() * 100, MaxConcurrencyLimit: maxL, RequestCount: 1 + rng.IntN(20), SampleAggregatePercentile: rng.Float64() * 100,
			MinConcurrency: minL, BufferPct: rng.Float64() * 100, Seed: rng.Uint64()})
		cases = append(cases, gateCase{"netflix-aimd", aimd, minL, maxL}, gateCase{"netflix-vegas", vegas, 1, maxL},
			gateCase{"netflix-gradient2", g2, minL, maxL}, gateCase{"envoy-adaptive-concurrency", envoy, minL, maxL})
		for _, c := range cases {
			type pending struct {
				release float64
				client  int32
			}
			var inflight []pending
			now := 0.0
			for step := range 2000 {
				now += rng.ExpFloat64() * 2
				if s, ok := c.gate.(Syncer); ok {
					for s.NextSyncMS() <= now {
						s.Sync(s.NextSyncMS())
					}
				}
				if len(inflight) > 0 && rng.IntN(2) == 0 {
					i := rng.IntN(len(inflight))
					p := inflight[i]
					inflight = append(inflight[:i], inflight[i+1:]...)
					rtt := rng.ExpFloat64() * []float64{0.0001, 1, 100, 10_000}[rng.IntN(4)]
					done := max(now, p.release+rtt)
					now = done
					c.gate.Complete(Completion{Client: p.client, ReleaseMS: p.release, DoneMS: done, Outcome: Outcome(rng.IntN(4))})
				} else {
					client := int32(rng.IntN(3))
					if r, ok := c.gate.Offer(now, client); ok {
						inflight = append(inflight, pending{r, client})
					}
				}
				if l := c.gate.LimitNow(); l < c.min || l > c.max {
					t.Fatalf("round %d, %s (min %d, max %d, initial %d), step %d: limit %d", round, c.name, c.min, c.max, init, step, l)
				}
				if c.gate.InFlight() != len(inflight) {
					t.Fatalf("round %d, %s: in flight %d, want %d", round, c.name, c.gate.InFlight(), len(inflight))
				}
			}
		}
	}
}
