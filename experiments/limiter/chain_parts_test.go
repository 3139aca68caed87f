package limiter_test

import (
	"fmt"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// TestChainPartsAreItsGateStages: a chain is a limiter.Composite whose
// parts are its gate stages, in order, its server stages left out: the
// event loop finds the stages' hooks there.
func TestChainPartsAreItsGateStages(t *testing.T) {
	t.Parallel()
	r, b := limiter.ParamRate, limiter.ParamBurst
	// The stages' other parameters at their defaults, as a decoded config has them.
	leaky := limiter.WithDefaults(limiter.TypeLeakyBucket, limiter.Params{r: 80, limiter.ParamQueue: 3})
	bucket := limiter.WithDefaults(limiter.TypeTokenBucket, limiter.Params{r: 50, b: 2})
	s := limiter.Spec{Type: limiter.TypeChain, Stages: []limiter.Stage{
		stage(limiter.TypeLeakyBucket, leaky),
		serverStage(1, 7),
		stage(limiter.TypeTokenBucket, bucket),
	}}
	s.Normalize()
	c := &advisorCase{name: "chain"}
	g := c.gateOf(t, s)
	comp, ok := g.(limiter.Composite)
	if !ok {
		t.Fatalf("a chain (%T) is not a limiter.Composite", g)
	}
	parts := comp.Parts()
	if len(parts) != 2 {
		t.Fatalf("%d parts, want the 2 gate stages", len(parts))
	}
	for j, st := range []limiter.Spec{spec(limiter.TypeLeakyBucket, leaky), spec(limiter.TypeTokenBucket, bucket)} {
		alone := c.gateOf(t, st)
		if got, w := fmt.Sprintf("%T", parts[j]), fmt.Sprintf("%T", alone); got != w {
			t.Errorf("part %d is a %s, want the stage's %s", j, got, w)
		}
	}
}
