package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
)

// GCRA is the generic cell rate algorithm GCRA(T, tau) in its virtual
// scheduling form (ITU-T Recommendation I.371 and the ATM Forum's Traffic
// Management specification, which also give it as the equivalent
// continuous-state leaky bucket), as a policer. T is the emission
// interval, 1000/rate_rps ms; tau is the tolerance, (burst-1)*T, so that
// burst requests may pass back to back.
//
// The state is one time, the theoretical arrival time TAT. An arrival at t
// conforms when t >= TAT - tau; it then passes at t and TAT becomes
// max(t, TAT) + T. A request that does not conform is rejected and leaves
// TAT alone. It only rejects, never delays.
//
// Starting state: no arrival yet, so the first arrival finds TAT <= t and
// the full tolerance: burst requests pass back to back (the token bucket's
// full bucket).
//
// Clock granularity: none; times are the float64 ms passed in. TAT is kept
// as base + k*T (base the arrival that last found TAT <= t, k the
// admissions since), so a decision rounds once instead of summing k float
// intervals, and conforms exactly when the textbook GCRA does, except
// within an ulp of its boundary. In exact arithmetic GCRA(T, (b-1)T) and
// the token bucket (rate 1000/T, burst b, starting full) take the same
// decisions; the tests check both facts.
//
// Its output obeys the token bucket's arrival curve b + r*d: a request
// conforms only if the requests since TAT last caught up fit the tolerance,
// so no closed window of d ms holds more than burst + rate*d/1000.
type GCRA struct {
	_          cacheline.Pad // a sweep's points run side by side (package cacheline)
	intervalMS float64       // T
	burst      float64       // tau = (burst-1)*T
	baseMS     float64
	k          float64 // admissions since base: TAT = base + k*T
	_          cacheline.Pad
}

// NewGCRA returns a GCRA policer of rate requests/s and burst (>= 1).
func NewGCRA(rateRPS, burst float64) *GCRA {
	return &GCRA{intervalMS: 1000 / rateRPS, burst: burst, baseMS: math.Inf(-1)}
}

// Offer conforms when t >= TAT - tau = base + (k - (burst-1))*T.
func (g *GCRA) Offer(t float64, _ int32) (float64, bool) {
	if t-g.baseMS >= g.k*g.intervalMS { // TAT <= t: the schedule restarts at t
		g.baseMS, g.k = t, 0
	}
	if t-g.baseMS < (g.k-g.burst+1)*g.intervalMS {
		return 0, false
	}
	g.k++
	return t, true
}

// NextAdmitMS is TAT - tau, when a request conforms again (Advisor): the
// first float64 time at which Offer's own test passes.
func (g *GCRA) NextAdmitMS(t float64, _ int32) float64 {
	need := (g.k - g.burst + 1) * g.intervalMS
	return firstAdmit(t, g.baseMS+need, func(x float64) bool { return x-g.baseMS >= need })
}

// TATMS is the theoretical arrival time after the last decision.
func (g *GCRA) TATMS() float64 { return g.baseMS + g.k*g.intervalMS }

// TypeGCRA is the GCRA's type name.
const TypeGCRA Type = "gcra"

func gcraKind() *Kind {
	return &Kind{
		Type:  TypeGCRA,
		Model: "generic cell rate algorithm GCRA(T = 1000/rate_rps ms, tau = (burst-1)*T), virtual scheduling; policer",
		Params: []Param{rateParam, {Name: ParamBurst, Admits: AdmitsLarger, Label: "Burst", Unit: "requests", Integer: true,
			Min: 1, Max: MaxSize, Doc: "requests admitted back to back: tolerance tau = (burst-1) emission intervals"}},
		Size:    ParamBurst,
		Stage:   true,
		Example: Params{ParamRate: 100, ParamBurst: 100},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewGCRA(p[ParamRate], p[ParamBurst]), nil
		},
		Curve:      tokenBucketCurve,
		Nominal:    rateNominal,
		RetryAfter: "TAT - tau: when a request conforms again",
	}
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*GCRA) releaseAt(y float64, _ int32) float64 { return y }
