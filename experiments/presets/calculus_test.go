package presets

import (
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// TestSingleServerCheck: the calculator's default answer (R 100 req/s,
// T 10 ms, D 210 ms, r 80 req/s: burst 20) sweeps a token bucket at three
// rates up to r and bursts around 20 into one worker of 10 ms with the
// budget as deadline, and the engine accepts it.
func TestSingleServerCheck(t *testing.T) {
	cfg := SingleServerCheck(SingleServer{ServerRPS: 100, LatencyMS: 10, BudgetMS: 210, RateRPS: 80, MaxBurst: 20, Burst: 20, Workers: 1})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	l := cfg.Limiters[0]
	if l.Type != limiter.TypeTokenBucket || !slices.Equal(l.ValuesOf(limiter.ParamRate), limiter.Values{40, 60, 80}) || !slices.Equal(l.ValuesOf(limiter.ParamBurst), limiter.Values{5, 10, 20, 30, 40}) {
		t.Errorf("limiter %+v", l)
	}
	if cfg.Server.Workers != 1 || cfg.Server.ServiceMS != 10 || cfg.Server.DeadlineMS != 210 || cfg.Workload.DurationMS != checkWindowMS {
		t.Errorf("server %+v, window %v", cfg.Server, cfg.Workload.DurationMS)
	}
	if !strings.Contains(cfg.Name, "burst 20 for 210 ms at 100 req/s") {
		t.Errorf("name %q", cfg.Name)
	}
}

// TestTandemCheck: a token bucket through two servers is one chain of the
// bucket and the first server; the last server is the run's.
func TestTandemCheck(t *testing.T) {
	cfg := TandemCheck(Tandem{RateRPS: 80, Burst: 20, BudgetMS: 210, Hops: []Hop{{2, 8}, {1, 10}}, ConcatenatedMS: 218, PerHopSumMS: 304.4})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	l := cfg.Limiters[0]
	if l.Type != limiter.TypeChain || len(l.Stages) != 2 || !slices.Equal(l.Stages[0].ValuesOf(limiter.ParamBurst), limiter.Values{10, 20, 40}) ||
		!l.Stages[1].IsServer() || l.Stages[1].Workers != 2 || l.Stages[1].ServiceMS != 8 {
		t.Errorf("chain %+v", l)
	}
	if cfg.Server.Workers != 1 || cfg.Server.ServiceMS != 10 || cfg.Server.DeadlineMS != 210 {
		t.Errorf("server %+v", cfg.Server)
	}
}

func TestUniqueWhole(t *testing.T) {
	if got := uniqueWhole(0.5, 1, 1.5, 2.5, 2, 7); !slices.Equal(got, limiter.Values{1, 2, 7}) {
		t.Errorf("uniqueWhole = %v", got)
	}
}
