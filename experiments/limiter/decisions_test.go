package limiter_test

import (
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

func replay(tb testing.TB, c limiter.DecisionCase) *limiter.DecisionReplay {
	tb.Helper()
	r, err := c.NewReplay()
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// BenchmarkDecision is the cost of one decision of every gate type (the
// table `lab bench` prints): go test -bench Decision -benchmem ./experiments/limiter
func BenchmarkDecision(b *testing.B) {
	for _, c := range limiter.DecisionCases() {
		b.Run(c.Name, func(b *testing.B) {
			r := replay(b, c)
			b.ReportAllocs()
			admitted := 0
			for b.Loop() {
				if r.Step() {
					admitted++
				}
			}
			b.ReportMetric(100*float64(admitted)/float64(b.N), "admit%")
		})
	}
}

// Every gate of the decision benchmark decides without allocating, and
// each policer both admits and rejects on the stream (so the benchmark
// measures both paths); the gates that never refuse (none, and
// uber-ratelimit, which makes every request wait its turn) admit all.
func TestDecisionCasesAdmitAndRejectWithoutAllocating(t *testing.T) {
	for _, c := range limiter.DecisionCases() {
		r := replay(t, c)
		admitted := 0
		allocs := testing.AllocsPerRun(100_000, func() {
			if r.Step() {
				admitted++
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %g allocations per decision, want 0", c.Name, allocs)
		}
		if neverRefuses := c.Spec.Type == limiter.TypeNone || c.Spec.Type == limiter.TypeUberRateLimit; neverRefuses {
			if admitted != 100_001 {
				t.Errorf("%s: admitted %d of 100001 decisions: it never refuses", c.Name, admitted)
			}
		} else if admitted == 0 || admitted == 100_001 {
			t.Errorf("%s: admitted %d of 100001 decisions: the stream should both admit and reject", c.Name, admitted)
		}
	}
}
