package simulate_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// flowCase is a random run of clients sharing one FIFO server behind a
// per-client or hierarchical token bucket: 2 to 4 client groups of 1 to 4
// clients with weights 1 to 4, Poisson, paced or synchronized arrivals
// mostly above their share, 1 to 4 workers of 1 to 20 ms, the bucket's
// rate mostly at most the server's and sometimes above it.
func flowCase(rng *rand.Rand) string {
	workers, serviceMS := 1+rng.IntN(4), float64(1+rng.IntN(20))
	capRPS := float64(workers) * 1000 / serviceMS
	rate := math.Round(capRPS*(0.2+0.9*rng.Float64())*10) / 10
	var parts []string
	clients := 0
	for g := range 2 + rng.IntN(3) {
		n := 1 + rng.IntN(4)
		clients += n
		parts = append(parts, fmt.Sprintf(`{"type": "clients", "group": "g%d", "clients": %d, "weight": %d, "rate_rps": %g, "arrival": %q}`,
			g, n, 1+rng.IntN(4), math.Round(rate*(0.1+rng.Float64())*10)/10+1, []string{"poisson", "uniform", "synchronized"}[rng.IntN(3)]))
	}
	typ := []string{"per-client-token-bucket", "hierarchical-token-bucket"}[rng.IntN(2)]
	shares := []string{"equal", "weighted"}[rng.IntN(2)]
	burst := 4*clients + rng.IntN(60) // at least one token a client under any shares (weights at most 4)
	return fmt.Sprintf(`{"version": 1, "seed": %d,
		"workload": {"duration_ms": 2000, "parts": [%s]},
		"server": {"workers": %d, "service_ms": %g, "deadline_ms": 200},
		"metrics": {"fairness_window_ms": 500},
		"limiters": [{"type": %q, "rate_rps": %g, "burst": %d, "shares": %q}]}`,
		1+rng.IntN(1000), strings.Join(parts, ", "), workers, serviceMS, typ, rate, burst, shares)
}

// checkFlows runs a flow case and checks every client's longest time at
// the server against its own FIFO bound and its blind-multiplexing bound;
// it returns how many clients had a bound and the largest tightness.
func checkFlows(t *testing.T, doc string) (checked int, tightest float64) {
	t.Helper()
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range res.Points {
		if len(pt.Clients) == 0 {
			t.Fatalf("no clients measured\n%s", doc)
		}
		for c, cl := range pt.Clients {
			f := cl.Flow
			if f == nil {
				t.Fatalf("client %d has no per-flow bound\n%s", c, doc)
			}
			if f.Note != "" {
				continue
			}
			checked++
			if cl.SojournMaxMS > f.FIFOBoundMS+boundTol(f.FIFOBoundMS) {
				t.Fatalf("client %d: at the server %g ms, above its FIFO bound %g (theta %g)\n%s", c, cl.SojournMaxMS, f.FIFOBoundMS, f.ThetaMS, doc)
			}
			if f.BlindBoundMS > 0 && (f.BlindBoundMS < f.FIFOBoundMS-boundTol(f.FIFOBoundMS) || cl.SojournMaxMS > f.BlindBoundMS+boundTol(f.BlindBoundMS)) {
				t.Fatalf("client %d: at the server %g ms, blind bound %g, FIFO bound %g\n%s", c, cl.SojournMaxMS, f.BlindBoundMS, f.FIFOBoundMS, doc)
			}
			tightest = max(tightest, cl.SojournMaxMS/f.FIFOBoundMS)
		}
	}
	return checked, tightest
}

// TestFlowBoundsHold: over random runs, no client's longest time at the
// shared FIFO server exceeds its own bound (FIFO residual service, the
// best theta, or blind multiplexing). FuzzFlowBounds goes deeper.
func TestFlowBoundsHold(t *testing.T) {
	t.Parallel()
	checked, tightest := 0, 0.0
	for run := range 150 {
		n, tight := checkFlows(t, flowCase(rand.New(rand.NewPCG(27, uint64(run)))))
		checked += n
		tightest = max(tightest, tight)
	}
	if checked == 0 {
		t.Fatal("no client had a bound to check")
	}
	t.Logf("%d clients under their per-flow bounds; the tightest at %.4f of its FIFO bound", checked, tightest)
}

func FuzzFlowBounds(f *testing.F) {
	for s := range uint64(4) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkFlows(t, flowCase(rand.New(rand.NewPCG(28, seed))))
	})
}
