package limiter_test

import (
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// New takes a point without its optional parameters at their defaults: a
// sliding-window log of limit 1 left without window_ms has the default
// window (1000 ms), so a second request 999 ms after the first is refused
// and one at 1000 ms admitted; the caller's map is left alone.
func TestNewFillsOptionalParameters(t *testing.T) {
	t.Parallel()
	s := limiter.Spec{Type: limiter.TypeSlidingLog}
	s.Normalize()
	p := limiter.Params{limiter.ParamLimit: 1}
	g, err := limiter.New(&s, p, []float64{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at float64
		ok bool
	}{{0, true}, {999, false}, {1000, true}} {
		if _, ok := g.Offer(c.at, 0); ok != c.ok {
			t.Errorf("at %g ms: admitted %v, want %v", c.at, ok, c.ok)
		}
	}
	if len(p) != 1 {
		t.Errorf("New changed the caller's parameters: %v", p)
	}
}
