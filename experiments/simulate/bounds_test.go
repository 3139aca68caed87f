package simulate_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/experiments/workload"
)

// boundTol is the float tolerance of the property test: a measurement may
// exceed its bound by 1e-6 (ms or requests) plus 1e-9 of the bound. Times
// are float64 ms built by repeated addition (leaky-bucket slots, refills),
// so exact ties such as a leaky bucket's full-queue delay (queue-1)/rate
// land a few ulps either side; anything larger is a real violation.
func boundTol(bound float64) float64 { return 1e-6 + 1e-9*math.Abs(bound) }

// curveGates are the limiter types with an arrival curve.
func curveGates() []limiter.Type {
	var out []limiter.Type
	for _, t := range limiter.Types() {
		if k, _ := limiter.Lookup(t); k.Waits {
			continue // no bound to check: it may hold a request forever
		}
		if _, ok := limiter.ArrivalCurve(&limiter.Spec{Type: t}, limiter.Params{limiter.ParamRate: 1, limiter.ParamBurst: 1, limiter.ParamQueue: 1, limiter.ParamLimit: 1, limiter.ParamWindow: 1}, 1); ok {
			out = append(out, t)
		}
	}
	return out
}

// randomGate draws a gate whose long-run rate is usually at most capRPS
// (so most cases have a bound), sometimes above it.
func randomGate(rng *rand.Rand, typ limiter.Type, capRPS float64) limiter.Spec {
	rate := capRPS * (0.2 + 0.8*rng.Float64())
	if rng.IntN(10) == 0 {
		rate = capRPS * (1.05 + rng.Float64())
	}
	rate = math.Round(rate*10) / 10
	size := float64(1 + rng.IntN(25))
	s := limiter.Spec{Type: typ}
	switch typ {
	case limiter.TypeLeakyBucket:
		s.SetValues(limiter.ParamRate, limiter.Values{rate})
		s.SetValues(limiter.ParamQueue, limiter.Values{size})
	case limiter.TypeFixedWindow, limiter.TypeSlidingCounter, limiter.TypeSlidingLog:
		window := float64(5 + rng.IntN(300))
		limit := math.Max(1, math.Floor(rate*window/1000))
		s.SetValues(limiter.ParamLimit, limiter.Values{limit})
		s.SetValues(limiter.ParamWindow, limiter.Values{window})
	case limiter.TypeRedisRate: // rate per second, as PerSecond
		s.SetValues(limiter.ParamLimit, limiter.Values{math.Max(1, math.Round(rate))})
		s.SetValues(limiter.ParamBurst, limiter.Values{size})
	default: // token buckets, and any other gate: rate and burst where it takes them, else its example
		k := s.Kind()
		for _, q := range k.Params {
			switch q.Name {
			case limiter.ParamRate:
				s.SetValues(q.Name, limiter.Values{min(rate, q.Max)})
			case limiter.ParamBurst:
				s.SetValues(q.Name, limiter.Values{size})
			default: // the example's value, else the parameter's default
				v, ok := k.Example[q.Name]
				if !ok {
					v = q.Default
				}
				s.SetValues(q.Name, limiter.Values{v})
			}
		}
		switch typ {
		case limiter.TypeDualTokenBucket: // peak twice the rate, peak burst 1
			s.SetValues(limiter.ParamPeakRate, limiter.Values{2 * rate})
		case limiter.TypeXTimeRate: // even sizes reserve, waiting up to 50 ms
			if int(size)%2 == 0 {
				s.SetOption("mode", limiter.XTimeRateReserve)
				s.SetValues(limiter.ParamMaxWait, limiter.Values{50})
			}
		}
	}
	s.Normalize()
	return s
}

// randomWorkload draws a small adversarial workload: clustered arrivals
// with exact ties (a trace), instantaneous bursts, and Poisson traffic,
// over several clients.
func randomWorkload(rng *rand.Rand) workload.Spec {
	dur := float64(100 + rng.IntN(900))
	var parts []workload.Part
	var csv strings.Builder
	n := rng.IntN(150)
	at := 0.0
	for i := 0; i < n; i++ {
		if rng.IntN(3) == 0 {
			at += rng.ExpFloat64() * dur / 20
		}
		q := math.Round(at*8) / 8
		if q >= dur {
			break
		}
		fmt.Fprintf(&csv, "%g,c%d\n", q, rng.IntN(4))
	}
	if csv.Len() > 0 {
		parts = append(parts, workload.Part{Type: workload.Trace, CSV: csv.String()})
	}
	if rng.IntN(2) == 0 {
		var bs []workload.Burst
		for k := rng.IntN(3); k >= 0; k-- {
			bs = append(bs, workload.Burst{AtMS: math.Floor(rng.Float64() * dur), Count: 1 + rng.IntN(40)})
		}
		parts = append(parts, workload.Part{Type: workload.Bursts, Clients: 1 + rng.IntN(3), Group: "b", Bursts: bs})
	}
	if rng.IntN(2) == 0 || len(parts) == 0 {
		parts = append(parts, workload.Part{Type: workload.Poisson, Client: "p", RateRPS: float64(50 + rng.IntN(400))})
	}
	return workload.Spec{DurationMS: dur, Parts: parts}
}

// giveEveryClientAToken raises per-client bursts to the number of clients:
// validation refuses a split that leaves a client less than one token.
func giveEveryClientAToken(cfg *experiments.Config) {
	n := float64(len(cfg.Workload.ClientTable()))
	raise := func(s *limiter.Spec) {
		if limiter.HasShares(s.Type) {
			for i, b := range s.ValuesOf(limiter.ParamBurst) {
				s.ValuesOf(limiter.ParamBurst)[i] = max(b, n)
			}
		}
	}
	for i := range cfg.Limiters {
		raise(&cfg.Limiters[i])
		for j := range cfg.Limiters[i].Stages {
			raise(&cfg.Limiters[i].Stages[j].Spec)
		}
	}
}

// TestNoRunExceedsItsBound is the property test of issue 5: over many
// seeded random workloads, gate parameters, servers and chains, every
// measured backlog, sojourn, gate delay and end-to-end delay stays within
// its network-calculus bound (up to boundTol), and every gate's empirical
// arrival curve stays under its alpha.
func TestNoRunExceedsItsBound(t *testing.T) {
	const workloads, perWorkload = 1600, 8 // 12800 cases, about 1/6 unbounded
	gates := curveGates()
	rng := rand.New(rand.NewPCG(2026, 5))
	checked, unbounded, chains := 0, 0, 0
	for w := 0; w < workloads; w++ {
		cfg := &experiments.Config{Version: experiments.Version, Seed: rng.Uint64(), Workload: randomWorkload(rng)}
		cfg.Server.Workers = 1 + rng.IntN(3)
		cfg.Server.ServiceMS = float64(1 + rng.IntN(15))
		capRPS := cfg.Server.RateRPS()
		for k := 0; k < perWorkload; k++ {
			var l limiter.Spec
			if k < 2 { // a chain: gates, maybe servers in between or after
				l = limiter.Spec{Type: limiter.TypeChain, Name: fmt.Sprintf("chain-%d", k)}
				for h := 1 + rng.IntN(4); h > 0; h-- {
					if rng.IntN(3) == 0 {
						workers := 1 + rng.IntN(3)
						l.Stages = append(l.Stages, limiter.Stage{Spec: limiter.Spec{Type: limiter.StageServer}, Workers: workers, ServiceMS: math.Ceil((0.3 + 0.7*rng.Float64()) * float64(workers) * 1000 / capRPS)})
					} else {
						l.Stages = append(l.Stages, limiter.Stage{Spec: randomGate(rng, gates[rng.IntN(len(gates))], capRPS)})
					}
				}
			} else {
				l = randomGate(rng, gates[rng.IntN(len(gates))], capRPS)
				l.Name = fmt.Sprintf("g-%d", k)
			}
			cfg.Limiters = append(cfg.Limiters, l)
		}
		giveEveryClientAToken(cfg)
		cfg.Normalize()
		if err := cfg.Validate(); err != nil {
			t.Fatalf("workload %d: %v", w, err)
		}
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
		if err != nil {
			t.Fatalf("workload %d: %v", w, err)
		}
		for i := range res.Points {
			p := &res.Points[i]
			b := p.Bounds
			if b == nil {
				t.Fatalf("workload %d point %d: no bounds", w, i)
			}
			if !b.Bounded {
				if b.Note == "" {
					t.Fatalf("workload %d point %d: unbounded without a note", w, i)
				}
				unbounded++
				continue
			}
			checked++
			if p.Type == limiter.TypeChain {
				chains++
			}
			fail := func(what string, measured, bound float64) {
				if measured > bound+boundTol(bound) {
					t.Errorf("workload %d point %d (%s %s, server %d×%g ms): %s %.9g exceeds its bound %.9g\nconfig: %s",
						w, i, p.Limiter, limiter.FormatParams(p.Type, p.Params), cfg.Server.Workers, cfg.Server.ServiceMS, what, measured, bound, cfg.JSON())
				}
			}
			fail("backlog", float64(b.BacklogMax), b.BacklogBound)
			fail("server sojourn", b.SojournMaxMS, b.SojournBoundMS)
			fail("gate delay", b.GateDelayMaxMS, b.GateDelayBoundMS)
			fail("end-to-end delay", b.EndToEndMaxMS, b.EndToEndBoundMS)
			fail("end-to-end delay (per-hop sum)", b.EndToEndMaxMS, b.PerHopSumMS)
			if b.ConcatenatedMS > 0 {
				fail("end-to-end delay (concatenated)", b.EndToEndMaxMS, b.ConcatenatedMS)
			}
			for g, d := range res.ArrivalCurves.GridMS {
				fail(fmt.Sprintf("empirical arrival curve at %g ms", d), float64(p.OutputCurve[g]), b.Alpha.At(d))
			}
			if t.Failed() {
				t.FailNow()
			}
		}
	}
	t.Logf("%d bounded cases checked (%d chains), %d cases without a bound (r > R, or a chain of servers only) noted", checked, chains, unbounded)
	if checked < 10000 {
		t.Errorf("only %d bounded cases; the property needs at least 10000", checked)
	}
}

// TestTokenVsLeakyBounds pins the example: token bucket burst 20
// into the 10 ms server has a sojourn bound of 210 ms against a measured
// maximum of 200 ms, and the numbers reach results.csv.
func TestTokenVsLeakyBounds(t *testing.T) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var tb *experiments.Point
	for i := range res.Points {
		p := &res.Points[i]
		if p.Type == limiter.TypeTokenBucket && p.Params[limiter.ParamBurst] == 20 {
			tb = p
		}
	}
	b := tb.Bounds
	if !b.Bounded || b.SojournBoundMS != 210 || b.SojournMaxMS != 200 || b.BacklogBound != 21 || b.BacklogMax != 20 {
		t.Errorf("token bucket burst 20: %+v, want sojourn bound 210 vs 200 measured, backlog 21 vs 20", b)
	}
	if b.Alpha.String() != "20 + 0.1*d" || b.Beta.RatePerMS != 0.1 || b.Beta.LatencyMS != 10 {
		t.Errorf("curves alpha %v beta %+v", b.Alpha, b.Beta)
	}
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	csv := string(files[0].Data)
	lines := strings.Split(csv, "\n")
	header := strings.Split(lines[0], ",")
	row := strings.Split(lines[tb.Index+1], ",")
	get := func(key string) string { return row[slices.Index(header, key)] }
	if get("sojourn_bound_ms") != "210.0" || get("server_sojourn_max_ms") != "200.0" || get("sojourn_tightness") != "0.9524" || get("bound_note") != "" {
		t.Errorf("results.csv row %v", row)
	}
}

// TestUnboundedNote checks r > R gives the note and empty cells, not a number.
func TestUnboundedNote(t *testing.T) {
	cfg := &experiments.Config{Version: 1, Workload: workload.Spec{DurationMS: 1000, Parts: []workload.Part{{Type: workload.Constant, RateRPS: 300}}},
		Limiters: []limiter.Spec{
			{Type: limiter.TypeTokenBucket, Params: map[string]limiter.Values{limiter.ParamRate: {200}, limiter.ParamBurst: {5}}},
			{Type: limiter.TypeAdmission, Params: map[string]limiter.Values{limiter.ParamLimit: {3}}}}}
	cfg.Normalize()
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Points[0].Bounds; b.Bounded || b.Note != "unbounded (r > R)" {
		t.Errorf("200 rps into a 100 rps server: %+v", b)
	}
	if b := res.Points[1].Bounds; b.Bounded || b.Note != "no arrival curve (admission)" {
		t.Errorf("admission: %+v", b)
	}
	files, _ := output.Files(res)
	row := strings.Split(string(files[0].Data), "\n")[1]
	if !strings.Contains(row, ",unbounded (r > R),,,,") {
		t.Errorf("results.csv row %q: want the note and empty bound cells", row)
	}
}

// TestDelayBudgetPreset: b = R*(D - T) = 20 is the largest burst whose
// bound meets the 210 ms deadline, at every rate, and the preset's
// workload brings every point within 20% of its sojourn bound.
func TestDelayBudgetPreset(t *testing.T) {
	cfg, err := presets.Config("delay-budget")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Points {
		b := p.Bounds
		meets := b.EndToEndBoundMS <= cfg.Server.DeadlineMS
		if !b.Bounded || meets != (p.Params[limiter.ParamBurst] <= 20) || b.SojournMaxMS > b.SojournBoundMS || b.SojournMaxMS < 0.8*b.SojournBoundMS {
			t.Errorf("%s %s: %+v", p.Limiter, limiter.FormatParams(p.Type, p.Params), b)
		}
	}
}

// tandemDoc is the tandem: per-client bucket → global bucket →
// shaper → server → server (the run's server is the last hop).
const tandemDoc = `{"version": 1, "seed": 7,
  "workload": {"duration_ms": 3000, "parts": [
    {"type": "clients", "group": "c", "clients": 4, "rate_rps": 40, "arrival": "poisson"},
    {"type": "bursts", "clients": 4, "group": "b", "bursts": [{"at_ms": 500, "count": 80}, {"at_ms": 2000, "count": 80}]}]},
  "server": {"workers": 1, "service_ms": 6, "deadline_ms": 300},
  "limiters": [{"type": "chain", "name": "edge", "stages": [
    {"type": "per-client-token-bucket", "rate_rps": 200, "burst": 60},
    {"type": "token-bucket", "rate_rps": 120, "burst": [10, 20, 40]},
    {"type": "leaky-bucket", "rate_rps": 150, "queue": 8},
    {"type": "server", "workers": 2, "service_ms": 10}]}]}`

func TestTandemChain(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(tandemDoc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 3 || res.Points[1].Params[limiter.ParamBurst] != 20 || res.Points[1].Swept != limiter.ParamBurst {
		t.Fatalf("points %+v: want the global bucket's bursts swept", res.Points)
	}
	for _, p := range res.Points {
		b := p.Bounds
		if !b.Bounded || len(b.Hops) != 5 {
			t.Fatalf("burst %g: %+v", p.Params[limiter.ParamBurst], b)
		}
		// Pay bursts once: the concatenated bound is below the per-hop sum,
		// and the measurement below both.
		if !(b.EndToEndMaxMS <= b.ConcatenatedMS && b.ConcatenatedMS < b.PerHopSumMS && b.EndToEndBoundMS == b.ConcatenatedMS) {
			t.Errorf("burst %g: measured %g, concatenated %g, per-hop %g", p.Params[limiter.ParamBurst], b.EndToEndMaxMS, b.ConcatenatedMS, b.PerHopSumMS)
		}
		if p.Metrics.Admitted == 0 || p.Metrics.Rejected == 0 {
			t.Errorf("burst %g: admitted %d, rejected %d: the chain should do both", p.Params[limiter.ParamBurst], p.Metrics.Admitted, p.Metrics.Rejected)
		}
	}
	// The leaky bucket's curve (150/s, 1) is the tightest at the servers: the
	// concatenated bound is the shaper's delay (7 intervals of 1000/150 ms)
	// plus T1 + T2 + 1/R_min = 10 + 6 + 1/(1/6) ms.
	want := 7*1000/150.0 + 10 + 6 + 6
	if got := res.Points[0].Bounds.ConcatenatedMS; math.Abs(got-want) > 1e-9 {
		t.Errorf("concatenated bound %g, want %g", got, want)
	}
}

func TestChainValidation(t *testing.T) {
	for _, c := range []struct{ doc, path string }{
		{`{"type": "chain", "stages": []}`, "limiters[0].stages"},
		{`{"type": "chain", "burst": 3, "stages": [{"type": "token-bucket", "rate_rps": 1, "burst": 1}]}`, "limiters[0].burst"},
		{`{"type": "chain", "stages": [{"type": "admission", "limit": 1}]}`, "limiters[0].stages[0].type"},
		{`{"type": "chain", "stages": [{"type": "server", "workers": 1, "queue": 3}]}`, "limiters[0].stages[0].queue"},
		{`{"type": "chain", "stages": [{"type": "server", "service_ms": -1}]}`, "limiters[0].stages[0].service_ms"},
		{`{"type": "chain", "stages": [{"type": "token-bucket", "rate_rps": 1, "burst": [1, 2]}, {"type": "leaky-bucket", "rate_rps": [1, 2], "queue": 1}]}`, "limiters[0].stages[1]"},
		{`{"type": "chain", "stages": [{"type": "token-bucket", "rate_rps": 1}]}`, "limiters[0].stages[0].burst"},
	} {
		doc := `{"version": 1, "workload": {"duration_ms": 100, "parts": [{"type": "constant", "rate_rps": 10}]}, "limiters": [` + c.doc + `]}`
		_, err := document.DecodeConfig([]byte(doc))
		var paths []string
		for _, e := range field.Errors(err) {
			paths = append(paths, e.Path)
		}
		if !slices.Contains(paths, c.path) {
			t.Errorf("%s: errors %v, want one at %s", c.doc, err, c.path)
		}
	}
}
