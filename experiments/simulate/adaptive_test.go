package simulate_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// tracedGate runs an adaptive gate and records its limit after every
// event, and checks the order the loop keeps: no completion from the
// gate's future (done after an offer it has not yet seen) and none from
// before an offer it has seen.
type tracedGate struct {
	a          limiter.Adaptive
	sync       limiter.Syncer
	lastOfferT float64
	times      []float64
	limits     []int
	err        error
}

func (g *tracedGate) Offer(t float64, c int32) (float64, bool) {
	if t < g.lastOfferT && g.err == nil {
		g.err = fmt.Errorf("offer at %g after one at %g", t, g.lastOfferT)
	}
	g.lastOfferT = t
	r, ok := g.a.Offer(t, c)
	g.note(t)
	return r, ok
}

func (g *tracedGate) Complete(c limiter.Completion) {
	if c.DoneMS < g.lastOfferT && g.err == nil {
		g.err = fmt.Errorf("completion done at %g heard after an offer at %g", c.DoneMS, g.lastOfferT)
	}
	g.lastOfferT = max(g.lastOfferT, c.DoneMS)
	g.a.Complete(c)
	g.note(c.DoneMS)
}

func (g *tracedGate) note(t float64) {
	g.times = append(g.times, t)
	g.limits = append(g.limits, g.a.LimitNow())
}

// syncedGate is a tracedGate whose gate has timers.
type syncedGate struct{ *tracedGate }

func (g syncedGate) NextSyncMS() float64 { return g.sync.NextSyncMS() }
func (g syncedGate) Sync(t float64) {
	g.sync.Sync(t)
	g.note(t)
}

func traceRun(t *testing.T, doc string) []*tracedGate {
	t.Helper()
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var gates []*tracedGate
	opt := sweep.Options{Workers: 1}
	opt.Simulate.Gate = func(g limiter.Gate, _ limiter.Occupancy) limiter.Gate {
		a := g.(limiter.Adaptive)
		tg := &tracedGate{a: a, lastOfferT: math.Inf(-1)}
		gates = append(gates, tg)
		if s, ok := g.(limiter.Syncer); ok {
			tg.sync = s
			return syncedGate{tg}
		}
		return tg
	}
	if _, err := sweep.Run(context.Background(), cfg, opt); err != nil {
		t.Fatal(err)
	}
	return gates
}

// With a fixed-capacity server (10 workers of 10 ms: 1000 requests/s,
// ideal concurrency 10, deadline 100 ms) under steady Poisson load past
// its capacity (1200 requests/s), every adaptive gate converges: its
// limit's time-weighted means over 6-9 s and 9-12 s of a 12 s run are
// within 20% of each other (the gates oscillate by design: AIMD's
// sawtooth, Vegas' probes; Gradient2 settles at max_concurrency, the
// growth of Netflix PR #134's discussion); and no gate ever hears a
// completion from its future, nor one from before an offer it has seen.
func TestAdaptiveGatesConverge(t *testing.T) {
	t.Parallel()
	gates := traceRun(t, `{"version": 1, "seed": 5,
  "workload": {"duration_ms": 12000, "parts": [{"type": "poisson", "rate_rps": 1200}]},
  "server": {"workers": 10, "service_ms": 10, "deadline_ms": 100},
  "limiters": [{"type": "netflix-aimd", "min_limit": 1}, {"type": "netflix-vegas"}, {"type": "netflix-gradient2", "min_limit": 1},
    {"type": "netflix-gradient2", "name": "windowed", "min_limit": 1, "window": "windowed"},
    {"type": "netflix-vegas", "name": "vegas-windowed", "window": "windowed"}, {"type": "envoy-adaptive-concurrency"}]}`)
	names := []string{"netflix-aimd", "netflix-vegas", "netflix-gradient2", "gradient2 windowed", "vegas windowed", "envoy-adaptive-concurrency"}
	for i, g := range gates {
		if g.err != nil {
			t.Fatalf("%s: %v", names[i], g.err)
		}
		a, b := g.meanLimit(6000, 9000), g.meanLimit(9000, 12000)
		t.Logf("%s: mean limit %.1f over 6-9 s, %.1f over 9-12 s", names[i], a, b)
		if math.Abs(a-b) > 0.2*max(a, b) {
			t.Errorf("%s: mean limit %.1f over 6-9 s, %.1f over 9-12 s: not converged", names[i], a, b)
		}
	}
}

// meanLimit is the gate's limit's time-weighted mean over [from, to).
func (g *tracedGate) meanLimit(from, to float64) float64 {
	sum, limit, at := 0.0, 0.0, from
	for k, t := range g.times {
		if t > at && t <= to {
			sum += limit * (t - at)
			at = t
		}
		if t <= to {
			limit = float64(g.limits[k])
		}
	}
	sum += limit * (to - at)
	return sum / (to - from)
}

// An adaptive gate's point files its measures: the limit per series window
// against the server's ideal concurrency (10 workers, 5 during a degrade
// over 10-20 s), the time-weighted mean within the limit's bounds; a
// static limit's point files none.
func TestAdaptiveMetricsFiled(t *testing.T) {
	t.Parallel()
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 2,
  "workload": {"duration_ms": 30000, "parts": [{"type": "poisson", "rate_rps": 900}]},
  "server": {"workers": 10, "service_ms": 10, "deadline_ms": 500, "degrade": [{"from_ms": 10000, "to_ms": 20000, "workers": 5}]},
  "limiters": [{"type": "netflix-gradient2", "min_limit": 1, "window": "windowed"}, {"type": "envoy-adaptive-concurrency"}, {"type": "admission", "limit": 10}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, pt := range res.Points[:2] {
		a := pt.Metrics.Adaptive
		if a == nil {
			t.Fatalf("point %d: no adaptive measures", i)
		}
		n := int(30000 / cfg.SeriesWindow())
		if len(a.Limit) != n || len(a.Ideal) != n || len(a.RTTMeanUS) != n {
			t.Fatalf("point %d: %d, %d, %d windows, want %d", i, len(a.Limit), len(a.Ideal), len(a.RTTMeanUS), n)
		}
		w := cfg.SeriesWindow()
		if a.Ideal[int(5000/w)] != 10 || a.Ideal[int(15000/w)] != 5 || a.Ideal[int(25000/w)] != 10 {
			t.Fatalf("point %d: ideal concurrency %d, %d, %d at 5, 15, 25 s", i, a.Ideal[int(5000/w)], a.Ideal[int(15000/w)], a.Ideal[int(25000/w)])
		}
		if a.IdealMean < 8.3 || a.IdealMean > 8.34 {
			t.Fatalf("point %d: ideal mean %g, want 25/3", i, a.IdealMean)
		}
		if a.LimitMean < 1 || a.LimitMean > 1000 || len(a.Estimates) == 0 {
			t.Fatalf("point %d: limit mean %g, %d estimates", i, a.LimitMean, len(a.Estimates))
		}
		if a.RTTMeanUS[int(15000/w)] <= a.RTTMeanUS[int(5000/w)] {
			t.Errorf("point %d: the degrade did not raise the RTT: %d µs at 15 s, %d at 5 s", i, a.RTTMeanUS[int(15000/w)], a.RTTMeanUS[int(5000/w)])
		}
	}
	if res.Points[2].Metrics.Adaptive != nil {
		t.Fatal("a static limit's point has adaptive measures")
	}
}
