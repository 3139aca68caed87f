package limiter_test

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// advisorCase is a gate whose Retry-After (limiter.Advisor) is checked on
// random event sequences.
type advisorCase struct {
	name    string
	spec    limiter.Spec        // a registry gate, its values one point
	weights []float64           // the clients (nil: one client of weight 1)
	gapMS   float64             // mean gap between arrivals
	exact   bool                // the advised time is the first admission: one float64 step earlier is refused
	grid    bool                // arrivals on whole ms half the time (ties)
	build   func() limiter.Gate // instead of spec
}

func (c *advisorCase) gate(t testing.TB) limiter.Gate {
	t.Helper()
	if c.build != nil {
		return c.build()
	}
	s := c.spec
	s.Normalize()
	return c.gateOf(t, s)
}

// varied is the case's spec with its parameters drawn around the case's:
// real ones scaled by 0.5 to 2, whole ones plus 0 to 2, within range.
func (c *advisorCase) varied(rng *rand.Rand) limiter.Spec {
	vary := func(s limiter.Spec) limiter.Spec {
		k := s.Kind()
		p := map[string]limiter.Values{}
		// In name order: the draws are the seed's whatever the map's order.
		for _, name := range slices.Sorted(maps.Keys(s.Params)) {
			v := s.Params[name][0]
			if d, ok := k.Param(name); ok {
				if d.Integer {
					v += float64(rng.IntN(3))
				} else {
					v *= 0.5 + 1.5*rng.Float64()
				}
				v = min(max(v, d.Min), d.Max)
			}
			p[name] = limiter.Values{v}
		}
		s.Params = p
		return s
	}
	s := c.spec
	if len(s.Stages) > 0 {
		s.Stages = append([]limiter.Stage(nil), s.Stages...)
		for j := range s.Stages {
			if !s.Stages[j].IsServer() {
				s.Stages[j].Spec = vary(s.Stages[j].Spec)
			}
		}
	} else {
		s = vary(s)
	}
	s.Normalize()
	return s
}

func (c *advisorCase) gateOf(t testing.TB, s limiter.Spec) limiter.Gate {
	t.Helper()
	return c.builder(t, s)()
}

// builder validates s once and returns what builds a fresh gate of it:
// the replays of TestAdvisorsSayWhenTheyAdmitAgain build one per refusal,
// and validating the spec each time was most of the test's time.
func (c *advisorCase) builder(t testing.TB, s limiter.Spec) func() limiter.Gate {
	t.Helper()
	if errs := s.Validate("limiter"); len(errs) > 0 {
		t.Fatalf("%s: %v", c.name, errs)
	}
	w := c.weights
	if w == nil {
		w = []float64{1}
	}
	pts := s.Points()
	if len(pts) != 1 {
		t.Fatalf("%s: %d points", c.name, len(pts))
	}
	return func() limiter.Gate {
		g, err := limiter.New(&s, pts[0], w, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		return g
	}
}

func spec(typ limiter.Type, p limiter.Params, options ...string) limiter.Spec {
	s := limiter.Spec{Type: typ, Params: map[string]limiter.Values{}}
	for name, v := range p {
		s.Params[name] = limiter.Values{v}
	}
	for i := 0; i+1 < len(options); i += 2 {
		s.SetOption(options[i], options[i+1])
	}
	return s
}

func stage(typ limiter.Type, p limiter.Params, options ...string) limiter.Stage {
	return limiter.Stage{Spec: spec(typ, p, options...)}
}

func serverStage(workers int, serviceMS float64) limiter.Stage {
	return limiter.Stage{Spec: limiter.Spec{Type: limiter.StageServer}, Workers: workers, ServiceMS: serviceMS}
}

// advisorCases are every gate of the registry that rejects, in the modes
// that change how it refuses, with several clients where it keys by client.
func advisorCases() []advisorCase {
	three := []float64{1, 1, 1}
	weighted := []float64{1, 2, 5}
	r, b := limiter.ParamRate, limiter.ParamBurst
	return []advisorCase{
		{name: "token-bucket", spec: spec(limiter.TypeTokenBucket, limiter.Params{r: 50, b: 3}), gapMS: 5, exact: true, grid: true},
		{name: "gcra", spec: spec(limiter.TypeGCRA, limiter.Params{r: 50, b: 3}), gapMS: 5, exact: true, grid: true},
		{name: "fixed-window", spec: spec(limiter.TypeFixedWindow, limiter.Params{limiter.ParamLimit: 4, limiter.ParamWindow: 200}), gapMS: 10, exact: true, grid: true},
		{name: "sliding-window-log", spec: spec(limiter.TypeSlidingLog, limiter.Params{limiter.ParamLimit: 4, limiter.ParamWindow: 200}), gapMS: 10, exact: true, grid: true},
		{name: "sliding-window-counter", spec: spec(limiter.TypeSlidingCounter, limiter.Params{limiter.ParamLimit: 4, limiter.ParamWindow: 200}), gapMS: 10, exact: true, grid: true},
		{name: "leaky-bucket", spec: spec(limiter.TypeLeakyBucket, limiter.Params{r: 50, limiter.ParamQueue: 3}), gapMS: 5, exact: true, grid: true},
		{name: "per-client equal", spec: spec(limiter.TypePerClient, limiter.Params{r: 60, b: 6}), weights: three, gapMS: 3, exact: true, grid: true},
		{name: "per-client weighted", spec: spec(limiter.TypePerClient, limiter.Params{r: 80, b: 16}, "shares", limiter.SharesWeighted), weights: weighted, gapMS: 3, exact: true, grid: true},
		{name: "hierarchical equal", spec: spec(limiter.TypeHierarchical, limiter.Params{r: 60, b: 6}), weights: three, gapMS: 4, exact: true, grid: true},
		{name: "hierarchical weighted", spec: spec(limiter.TypeHierarchical, limiter.Params{r: 80, b: 16}, "shares", limiter.SharesWeighted), weights: weighted, gapMS: 3, exact: true, grid: true},
		{name: "dual-token-bucket", spec: spec(limiter.TypeDualTokenBucket, limiter.Params{r: 50, b: 5, limiter.ParamPeakRate: 120, limiter.ParamPeakBurst: 2}), gapMS: 4, exact: true, grid: true},
		{name: "x-time-rate allow", spec: spec(limiter.TypeXTimeRate, limiter.Params{r: 50, b: 3}, "mode", limiter.XTimeRateAllow), gapMS: 5, exact: true, grid: true},
		{name: "x-time-rate reserve", spec: spec(limiter.TypeXTimeRate, limiter.Params{r: 50, b: 3, limiter.ParamMaxWait: 30}, "mode", limiter.XTimeRateReserve), gapMS: 4, exact: true, grid: true},
		{name: "redis-rate", spec: spec(limiter.TypeRedisRate, limiter.Params{limiter.ParamLimit: 50, limiter.ParamPeriod: 1000, b: 3}), gapMS: 5, exact: true, grid: true},
		{name: "nginx zone nodelay", spec: spec(limiter.TypeNginxLimitReq, limiter.Params{r: 50, b: 3}, limiter.OptionNodelay, "on"), gapMS: 5, exact: true, grid: true},
		{name: "nginx zone delay", spec: spec(limiter.TypeNginxLimitReq, limiter.Params{r: 50, b: 4, limiter.ParamNginxDelay: 1}), gapMS: 5, exact: true, grid: true},
		{name: "nginx client nodelay", spec: spec(limiter.TypeNginxLimitReq, limiter.Params{r: 20, b: 2}, limiter.OptionNodelay, "on", limiter.OptionNginxKey, "client"), weights: three, gapMS: 5, exact: true, grid: true},
		{name: "envoy timer", spec: spec(limiter.TypeEnvoyLocalRateLimit, limiter.Params{limiter.ParamMaxTokens: 4, limiter.ParamTokensPerFill: 2, limiter.ParamFillIntervalMS: 50}), gapMS: 8, exact: true, grid: true},
		{name: "envoy timer client", spec: spec(limiter.TypeEnvoyLocalRateLimit, limiter.Params{limiter.ParamMaxTokens: 2, limiter.ParamTokensPerFill: 1, limiter.ParamFillIntervalMS: 60}, limiter.OptionEnvoyDescriptor, "client"), weights: three, gapMS: 8, exact: true, grid: true},
		{name: "envoy atomic", spec: spec(limiter.TypeEnvoyLocalRateLimit, limiter.Params{limiter.ParamMaxTokens: 4, limiter.ParamTokensPerFill: 2, limiter.ParamFillIntervalMS: 75}, limiter.OptionEnvoyBucket, "atomic"), gapMS: 8, exact: true, grid: true},
		{name: "envoy atomic client", spec: spec(limiter.TypeEnvoyLocalRateLimit, limiter.Params{limiter.ParamMaxTokens: 2, limiter.ParamTokensPerFill: 1, limiter.ParamFillIntervalMS: 60}, limiter.OptionEnvoyBucket, "atomic", limiter.OptionEnvoyDescriptor, "client"), weights: three, gapMS: 6, exact: true, grid: true},
		{name: "resilience4j", spec: spec(limiter.TypeResilience4j, limiter.Params{limiter.ParamLimitForPeriod: 3, limiter.ParamLimitRefreshPeriodMS: 60, limiter.ParamTimeoutMS: 0}), gapMS: 6, exact: true, grid: true},
		{name: "resilience4j timeout", spec: spec(limiter.TypeResilience4j, limiter.Params{limiter.ParamLimitForPeriod: 3, limiter.ParamLimitRefreshPeriodMS: 60, limiter.ParamTimeoutMS: 70}), gapMS: 4, exact: true, grid: true},
		{name: "guava bursty", spec: spec(limiter.TypeGuavaSmoothBursty, limiter.Params{r: 50, limiter.ParamMaxBurstMS: 100, limiter.ParamTimeoutMS: 30}), gapMS: 5, exact: true, grid: true},
		{name: "guava warming up", spec: spec(limiter.TypeGuavaSmoothWarmingUp, limiter.Params{r: 50, limiter.ParamWarmupMS: 200, limiter.ParamTimeoutMS: 30}), gapMS: 5, exact: true, grid: true},
		{name: "chain of policers", spec: limiter.Spec{Type: limiter.TypeChain, Stages: []limiter.Stage{
			stage(limiter.TypePerClient, limiter.Params{r: 90, b: 6}),
			stage(limiter.TypeTokenBucket, limiter.Params{r: 50, b: 4}),
			stage(limiter.TypeFixedWindow, limiter.Params{limiter.ParamLimit: 8, limiter.ParamWindow: 150}),
		}}, weights: three, gapMS: 4, exact: true, grid: true},
		{name: "chain through a shaper and a server", spec: limiter.Spec{Type: limiter.TypeChain, Stages: []limiter.Stage{
			stage(limiter.TypeLeakyBucket, limiter.Params{r: 80, limiter.ParamQueue: 3}),
			serverStage(1, 7),
			stage(limiter.TypeTokenBucket, limiter.Params{r: 50, b: 2}),
			stage(limiter.TypeXTimeRate, limiter.Params{r: 40, b: 2, limiter.ParamMaxWait: 10}, "mode", limiter.XTimeRateReserve),
		}}, gapMS: 4, exact: true, grid: true},
		{name: "chain through a server and Guava", spec: limiter.Spec{Type: limiter.TypeChain, Stages: []limiter.Stage{
			stage(limiter.TypeGuavaSmoothBursty, limiter.Params{r: 80, limiter.ParamMaxBurstMS: 30, limiter.ParamTimeoutMS: 20}),
			serverStage(1, 7),
			stage(limiter.TypeTokenBucket, limiter.Params{r: 50, b: 2}),
		}}, gapMS: 4, grid: true},
	}
}

type advisorEvent struct {
	t      float64
	client int32
}

// A gate's Retry-After (limiter.Advisor) is honest: after a rejection at
// t, a request at the advised time is admitted (nothing in between); and,
// where the gate's answer is exact, tight: on the same gate replayed to
// the rejection, a request one float64 step before the advised time is
// refused. 300 seeded random sequences per gate (two in three with the
// parameters drawn around the case's), several clients where the gate
// keys by client, arrivals on whole milliseconds half the time.
func TestAdvisorsSayWhenTheyAdmitAgain(t *testing.T) {
	t.Parallel()
	const seeds, events = 300, 120
	for _, c := range advisorCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, ok := c.gate(t).(limiter.Advisor); !ok {
				t.Fatalf("%s is not an Advisor", c.name)
			}
			clients := max(len(c.weights), 1)
			rejections, later, retried, early := 0, 0, 0, 0
			for seed := range uint64(seeds) {
				rng := rand.New(rand.NewPCG(seed, 1))
				sp := c.spec
				if seed%3 != 0 { // two lists in three with parameters around the case's
					sp = c.varied(rng)
				} else {
					sp.Normalize()
				}
				mk := c.builder(t, sp)
				g := mk()
				adv := g.(limiter.Advisor)
				grid := c.grid && seed%2 == 1
				var seen []advisorEvent
				now := 0.0
				for range events {
					now += rng.ExpFloat64() * c.gapMS
					if grid {
						now = math.Ceil(now)
					}
					cl := int32(rng.IntN(clients))
					seen = append(seen, advisorEvent{now, cl})
					if _, ok := g.Offer(now, cl); ok {
						continue
					}
					rejections++
					next := adv.NextAdmitMS(now, cl)
					if next < now || math.IsNaN(next) {
						t.Fatalf("seed %d: rejected at %g, advised %g", seed, now, next)
					}
					if math.IsInf(next, 1) {
						t.Fatalf("seed %d: rejected at %g, advised never", seed, now)
					}
					if next > now {
						later++
						r := mk()
						for _, e := range seen {
							r.Offer(e.t, e.client)
						}
						before := math.Nextafter(next, math.Inf(-1))
						if _, ok := r.Offer(before, cl); ok {
							if c.exact {
								t.Fatalf("seed %d: rejected at %g, advised %g, but admitted one step before, at %g", seed, now, next, before)
							}
							early++
						}
					}
					if rng.IntN(3) == 0 {
						continue // not retried: the sequence goes on
					}
					retried++
					seen = append(seen, advisorEvent{next, cl})
					if _, ok := g.Offer(next, cl); !ok {
						t.Fatalf("seed %d: rejected at %g, advised %g, rejected again there", seed, now, next)
					}
					now = next
				}
			}
			t.Logf("%d rejections, %d advised a later time, %d retried there; one step earlier admitted %d times", rejections, later, retried, early)
			if later < seeds {
				t.Errorf("only %d rejections advised a later time: make the case refuse more", later)
			}
		})
	}
}

// NextAdmitMS allocates nothing after a rejection, once the gate has
// warmed up, for every gate of advisorCases (not in parallel:
// testing.AllocsPerRun counts the whole process's allocations).
func TestNextAdmitMSAllocatesNothing(t *testing.T) {
	for _, c := range advisorCases() {
		if allocs := advisorAllocs(t, &c); allocs != 0 {
			t.Errorf("%s: NextAdmitMS allocates %g times a call", c.name, allocs)
		}
	}
}

// advisorAllocs is what NextAdmitMS allocates per call after a rejection,
// once the gate has warmed up.
func advisorAllocs(t *testing.T, c *advisorCase) float64 {
	adv, at, who := refusedAdvisor(t, c)
	return testing.AllocsPerRun(50, func() { adv.NextAdmitMS(at, who) })
}

// refusedAdvisor offers case c's gate 400 requests a quarter of its gap
// apart, its clients in turn, asking it after each refusal (its first use
// makes its scratch space), and returns it with the last refusal's time
// and client.
func refusedAdvisor(t testing.TB, c *advisorCase) (adv limiter.Advisor, at float64, who int32) {
	g := c.gate(t)
	adv = g.(limiter.Advisor)
	clients := max(len(c.weights), 1)
	now := 0.0
	at = -1
	for i := range 400 {
		now += c.gapMS / 4
		cl := int32(i % clients)
		if _, ok := g.Offer(now, cl); !ok {
			at, who = now, cl
			adv.NextAdmitMS(at, who)
		}
	}
	if at < 0 {
		t.Fatalf("%s: no refusal", c.name)
	}
	return adv, at, who
}

type noServer struct{}

func (noServer) InSystem(float64) int { return 0 }

// busyServer is a server that never has a free place.
type busyServer struct{}

func (busyServer) InSystem(float64) int { return 1 << 30 }

// Every registered gate says in its row whether it gives a Retry-After
// (Kind.RetryAfter), and the row is true: its gates are Advisors exactly
// when it does. Every gate that can refuse gives one, except a gate whose
// refusals depend on the server (Kind.ReadsServer: the concurrency limit):
// nor a gate that learns from completions (an Observer: the adaptive
// concurrency limits, whose next admission waits for one):
// a gate without one that does neither admits every one of
// 10,000 requests of three clients within 1 ms, behind a server that is
// never free.
func TestRowsSayWhichGatesGiveRetryAfter(t *testing.T) {
	t.Parallel()
	for _, k := range limiter.Kinds() {
		s := limiter.Spec{Type: k.Type, Params: map[string]limiter.Values{}}
		if k.Compound() {
			s.Stages = []limiter.Stage{stage(limiter.TypeTokenBucket, limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 1})}
		}
		for name, v := range k.Example {
			s.Params[name] = limiter.Values{v}
		}
		s.Normalize()
		if errs := s.Validate("limiter"); len(errs) > 0 {
			t.Fatalf("%s: %v", k.Type, errs)
		}
		g, err := limiter.New(&s, s.Points()[0], []float64{1, 1, 1}, noServer{})
		if err != nil {
			t.Fatalf("%s: %v", k.Type, err)
		}
		_, advises := g.(limiter.Advisor)
		if advises != (k.RetryAfter != "") {
			t.Errorf("%s: an Advisor %v, its row's RetryAfter %q", k.Type, advises, k.RetryAfter)
		}
		_, observes := g.(limiter.Observer)
		if advises || k.ReadsServer || observes {
			continue
		}
		busy, err := limiter.New(&s, s.Points()[0], []float64{1, 1, 1}, busyServer{})
		if err != nil {
			t.Fatalf("%s: %v", k.Type, err)
		}
		for i := range 10_000 {
			if _, ok := busy.Offer(float64(i)/10_000, int32(i%3)); !ok {
				t.Errorf("%s refuses request %d of a burst but gives no Retry-After and does not read the server", k.Type, i)
				break
			}
		}
	}
}

// BenchmarkNextAdmitMS is the cost of one Retry-After after a refusal,
// per gate of advisorCases (the gate warmed up as in advisorAllocs).
func BenchmarkNextAdmitMS(b *testing.B) {
	for _, c := range advisorCases() {
		b.Run(c.name, func(b *testing.B) {
			adv, at, who := refusedAdvisor(b, &c)
			b.ReportAllocs()
			for b.Loop() {
				adv.NextAdmitMS(at, who)
			}
		})
	}
}
