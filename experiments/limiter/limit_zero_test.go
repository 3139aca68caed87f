package limiter_test

import (
	"math"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
)

// TestLimitZeroRefusesAll: a limit of 0 is a valid setting of every gate
// that takes the textbook limit (admission, the window gates) and refuses
// every request, as the seed lab's Post 2 runs round(capacity × deadline)
// = 0 (service 27 ms, deadline 5 ms); the Retry-After of a window gate is
// +Inf (no time admits).
func TestLimitZeroRefusesAll(t *testing.T) {
	t.Parallel()
	times := []float64{0, 0, 0.5, 999.999, 1000, 1000, 2500, 10_000, 86_400_000}
	for _, typ := range []limiter.Type{limiter.TypeAdmission, limiter.TypeFixedWindow, limiter.TypeSlidingCounter, limiter.TypeSlidingLog} {
		t.Run(string(typ), func(t *testing.T) {
			k, _ := limiter.Lookup(typ)
			q, ok := k.Param(limiter.ParamLimit)
			if !ok {
				t.Fatalf("%s takes no limit", typ)
			}
			if msg := q.Check(0); msg != "" {
				t.Fatalf("limit 0 refused: %s", msg)
			}
			srvSpec := server.Spec{ServiceMS: 27, DeadlineMS: 5}
			srvSpec.Normalize()
			srv := server.New(srvSpec)
			p := limiter.Params{limiter.ParamLimit: 0, limiter.ParamWindow: limiter.DefaultWindow}
			g := newGate(t, typ, p, nil, "", srv)
			for _, at := range times {
				if _, ok := g.Offer(at, 0); ok {
					t.Fatalf("limit 0 admitted the request at %g ms", at)
				}
				if a, ok := g.(limiter.Advisor); ok {
					if next := a.NextAdmitMS(at, 0); !math.IsInf(next, 1) {
						t.Fatalf("limit 0: NextAdmitMS(%g) = %g, want +Inf", at, next)
					}
				}
			}
		})
	}
}

// TestLimitZeroWhereItHasNoMeaning: the library gates whose limit is a
// rate divide by it; they refuse 0 with the reason.
func TestLimitZeroWhereItHasNoMeaning(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ  limiter.Type
		want string
	}{
		{limiter.TypeRedisRate, "must be at least 1: redis_rate's script divides the period by Limit.Rate"},
		{limiter.TypeUberRateLimit, "must be at least 1: ratelimit.New divides the period by the rate"},
	} {
		k, _ := limiter.Lookup(c.typ)
		q, _ := k.Param(limiter.ParamLimit)
		if msg := q.Check(0); !strings.HasPrefix(msg, c.want) {
			t.Errorf("%s limit 0: %q, want it to start %q", c.typ, msg, c.want)
		}
	}
}
