package simulate_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/experiments/workload"
)

// clientCase is a random small sweep of the client model: one open-loop
// part with random behaviour, sometimes a closed loop, behind a random
// token bucket or no gate.
func clientCase(rng *rand.Rand, seed uint64) *experiments.Config {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	b := workload.Behaviour{
		TimeoutMS: float64(rng.IntN(300)),
		Retries:   rng.IntN(5),
		BackoffMS: float64(rng.IntN(200)),
		Backoff:   pick("", workload.BackoffFixed, workload.BackoffExponential),
		Jitter:    pick("", workload.JitterNone, workload.JitterFull, workload.JitterEqual, workload.JitterDecorrelated),
	}
	if rng.IntN(2) == 0 {
		b.BackoffMaxMS = float64(1 + rng.IntN(500))
	}
	if rng.IntN(3) == 0 {
		b.RetryAfter = workload.RetryAfterHonour
	}
	if rng.IntN(3) == 0 {
		b.Budget = pick(workload.BudgetClient, workload.BudgetGlobal)
		b.BudgetRatio = math.Round(rng.Float64()*100) / 100
		b.BudgetFloorRPS = float64(rng.IntN(20))
	}
	if rng.IntN(4) == 0 {
		b.ThrottleK = 1 + float64(rng.IntN(3))
		b.ThrottleWindowMS = float64(100 + rng.IntN(2000))
	}
	parts := []workload.Part{{Type: workload.Poisson, Client: "open", RateRPS: float64(20 + rng.IntN(300)), Behaviour: b}}
	if rng.IntN(2) == 0 {
		parts[0] = workload.Part{Type: workload.Clients, Group: "open", Clients: 1 + rng.IntN(4), RateRPS: float64(10 + rng.IntN(100)), Behaviour: b}
	}
	if rng.IntN(3) == 0 {
		parts = append(parts, workload.Part{Type: workload.Users, Users: 1 + rng.IntN(30), ThinkMS: float64(1 + rng.IntN(200)),
			Think: pick("", workload.ThinkFixed, workload.ThinkExponential), Behaviour: b})
	}
	lim := limiter.Spec{Type: limiter.TypeNone}
	if rng.IntN(3) > 0 {
		lim = limiter.Spec{Type: limiter.TypeTokenBucket, Params: map[string]limiter.Values{limiter.ParamRate: {float64(20 + rng.IntN(200))}, limiter.ParamBurst: {float64(1 + rng.IntN(50))}}}
	}
	cfg := &experiments.Config{
		Version:  experiments.Version,
		Seed:     seed,
		Workload: workload.Spec{DurationMS: float64(500 + rng.IntN(2500)), Parts: parts},
		Server:   serverSpec(1+rng.IntN(2), float64(2+rng.IntN(15))),
		Limiters: []limiter.Spec{lim},
	}
	if rng.IntN(2) == 0 {
		cfg.Server.CancelOnTimeout = "drop-unstarted"
	}
	cfg.Normalize()
	return cfg
}

// TestClientModelProperties checks over 1000 random sweeps: no request
// makes more than 1 + retries attempts; a global retry budget of ratio ρ
// and floor f keeps retries ≤ ρ·first attempts + f per started second; a
// closed loop never has more requests in flight than users; the counts
// add up; and every 50th sweep writes the same bytes on 1 and 4 workers.
func TestClientModelProperties(t *testing.T) {
	cases := 1000
	if testing.Short() {
		cases = 200
	}
	for i := range cases {
		rng := rand.New(rand.NewPCG(uint64(i), 99))
		cfg := clientCase(rng, uint64(i))
		if err := cfg.Validate(); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		b := cfg.Workload.Parts[0].Behaviour
		for _, p := range res.Points {
			m, cm := p.Metrics, p.Metrics.Client
			if cm == nil {
				t.Fatalf("case %d: no client metrics", i)
			}
			where := fmt.Sprintf("case %d (%+v, %s)", i, b, p.Limiter)
			if cm.AttemptsMax > 1+b.Retries {
				t.Errorf("%s: a request made %d attempts, retries %d", where, cm.AttemptsMax, b.Retries)
			}
			if cm.Retries > b.Retries*m.Arrivals {
				t.Errorf("%s: %d retries of %d requests", where, cm.Retries, m.Arrivals)
			}
			if b.Budget == workload.BudgetGlobal {
				secs := math.Ceil(cfg.Workload.DurationMS / 1000)
				if float64(cm.Retries) > b.BudgetRatio*float64(m.Arrivals)+b.BudgetFloorRPS*secs+1e-9 {
					t.Errorf("%s: %d retries over the budget %g × %d + %g × %g", where, cm.Retries, b.BudgetRatio, m.Arrivals, b.BudgetFloorRPS, secs)
				}
			}
			if b.Budget == workload.BudgetClient {
				secs := math.Ceil(cfg.Workload.DurationMS / 1000)
				n := float64(len(res.Clients))
				if float64(cm.Retries) > b.BudgetRatio*float64(m.Arrivals)+b.BudgetFloorRPS*secs*n+1e-9 {
					t.Errorf("%s: %d retries over the per-client budgets %g × %d + %g × %g × %g clients", where, cm.Retries, b.BudgetRatio, m.Arrivals, b.BudgetFloorRPS, secs, n)
				}
			}
			if cm.UsersInFlightMax > cm.Users {
				t.Errorf("%s: %d closed-loop requests in flight, %d users", where, cm.UsersInFlightMax, cm.Users)
			}
			if m.Admitted+m.Rejected != cm.Attempts || cm.Served+cm.Dropped != m.Admitted || m.OnTime+m.Late != cm.Served {
				t.Errorf("%s: counts do not add up: %+v %+v", where, m, cm)
			}
			if first := cm.Attempts - cm.Retries; first > m.Arrivals || first+cm.Throttled < m.Arrivals {
				t.Errorf("%s: %d first attempts at the gate and %d throttled, of %d requests", where, first, cm.Throttled, m.Arrivals)
			}
		}
		if i%50 == 0 {
			one := files(t, res)
			res4, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 4})
			if err != nil {
				t.Fatal(err)
			}
			if four := files(t, res4); !bytes.Equal(one, four) {
				t.Errorf("case %d: other bytes on 4 workers", i)
			}
		}
	}
}

func files(t *testing.T, res *experiments.Result) []byte {
	t.Helper()
	fs, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, f := range fs {
		if f.Name != experiments.FileManifest {
			b.WriteString(f.Name)
			b.Write(f.Data)
		}
	}
	return b.Bytes()
}

func serverSpec(workers int, serviceMS float64) server.Spec {
	return server.Spec{Workers: workers, ServiceMS: serviceMS}
}

// TestEveryAttemptFailsCostsOnePlusRTimesTheWork: a timeout shorter than
// the service makes every attempt fail; with R retries that all fit in the
// window, the server works (1 + R) × the first attempts, all of it wasted.
func TestEveryAttemptFailsCostsOnePlusRTimesTheWork(t *testing.T) {
	for i := range 1000 {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		r := rng.IntN(5)
		service := float64(5 + rng.IntN(10))
		timeout := float64(1 + rng.IntN(int(service)-1))
		backoff := float64(rng.IntN(50))
		d := 4000.0
		end := d - float64(r)*(timeout+backoff+1)
		cfg := &experiments.Config{
			Version: experiments.Version, Seed: uint64(i),
			Workload: workload.Spec{DurationMS: d, Parts: []workload.Part{{Type: workload.Poisson, RateRPS: float64(1 + rng.IntN(20)), EndMS: &end,
				Behaviour: workload.Behaviour{TimeoutMS: timeout, Retries: r, BackoffMS: backoff, Jitter: workload.JitterFull}}}},
			Server:   serverSpec(100, service),
			Limiters: []limiter.Spec{{Type: limiter.TypeNone}},
		}
		cfg.Normalize()
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		m, cm := res.Points[0].Metrics, res.Points[0].Metrics.Client
		if cm.Attempts != (1+r)*m.Arrivals || cm.Served != cm.Attempts || cm.WastedWorkMS != float64(cm.Served)*service || m.OnTime != 0 {
			t.Fatalf("case %d (R %d, timeout %g, service %g): %d requests, %d attempts, %d served, wasted %g ms, %d on time; want (1+R)× the work, all wasted",
				i, r, timeout, service, m.Arrivals, cm.Attempts, cm.Served, cm.WastedWorkMS, m.OnTime)
		}
	}
}

// Bad client behaviour gets an error at the field's path.
func TestClientBehaviourErrors(t *testing.T) {
	for doc, want := range map[string]string{
		`"parts": [{"type": "constant", "rate_rps": 10, "jitter": "-1"}]`:                        "workload.parts[0].jitter",
		`"parts": [{"type": "constant", "rate_rps": 10, "backoff_ms": -5}]`:                      "workload.parts[0].backoff_ms",
		`"parts": [{"type": "constant", "rate_rps": 10, "budget": "global", "budget_ratio": 7}]`: "workload.parts[0].budget_ratio",
		`"parts": [{"type": "users", "users": 0, "think_ms": 100}]`:                              "workload.parts[0].users",
		`"parts": [{"type": "users", "users": 5, "think_ms": 0}]`:                                "workload.parts[0].think_ms",
		`"parts": [{"type": "constant", "rate_rps": 10, "retries": -1}]`:                         "workload.parts[0].retries",
		`"parts": [{"type": "constant", "rate_rps": 10, "throttle_k": 0.5}]`:                     "workload.parts[0].throttle_k",
		`"parts": [{"type": "constant", "rate_rps": 10, "budget_floor_rps": 3}]`:                 "workload.parts[0].budget",
	} {
		_, err := document.DecodeConfig([]byte(`{"version": 1, "workload": {"duration_ms": 1000, ` + doc + `}, "limiters": [{"type": "none"}]}`))
		if err == nil {
			t.Errorf("%s: no error", doc)
			continue
		}
		found := false
		for _, e := range field.Errors(err) {
			found = found || e.Path == want
		}
		if !found {
			t.Errorf("%s: %v, want an error at %s", doc, err, want)
		}
	}
	_, err := document.DecodeConfig([]byte(`{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 10}]}, "limiters": [{"type": "none"}], "policies": [{"name": "p", "jitter": "sometimes"}]}`))
	if err == nil || !strings.Contains(err.Error(), "policies[0].jitter") {
		t.Errorf("a policy's bad jitter: %v", err)
	}
}
