package limiter

import "github.com/ratelab/ratelab/experiments/calculus"

// DualTokenBucket polices with two token buckets at once: a sustained
// bucket (rate_rps, burst) and a peak bucket (peak_rps, peak_burst). A
// request passes at its arrival when both buckets hold a token and takes
// one from each; otherwise it is rejected and takes none. It only rejects,
// never delays.
//
// This is the policer of the Integrated Services traffic specification
// (RFC 2212, section "TSpec": a token bucket (r, b) plus a peak rate p and a
// largest packet M, whose traffic obeys min(M + p*d, b + r*d); with whole
// requests M is peak_burst, 1 by default) and the two buckets of the two
// rate three color marker (RFC 2698: PIR/PBS and CIR/CBS), passing only
// what that marker colors green. Unlike RFC 2698's marker, a refused
// request takes no peak token (the marker takes one for a yellow packet).
//
// Starting state: both buckets full. Clock granularity: none; both refill
// continuously on every arrival in float64 ms, as the token bucket does.
//
// Its output obeys both buckets' curves, so their minimum
// min(burst + rate*d, peak_burst + peak*d) (calculus.Dual): with the
// default peak_burst of 1, releases are at least 1000/peak_rps ms apart
// and at most burst + rate*d in any window of d ms.
type DualTokenBucket struct {
	sustained, peak TokenBucket
}

// NewDualTokenBucket returns both buckets full; rates in requests/s.
func NewDualTokenBucket(rateRPS, burst, peakRPS, peakBurst float64) *DualTokenBucket {
	return &DualTokenBucket{sustained: *NewTokenBucket(rateRPS, burst), peak: *NewTokenBucket(peakRPS, peakBurst)}
}

// Offer refills both buckets for the time since the last arrival and takes
// a token from each, or none.
func (b *DualTokenBucket) Offer(t float64, _ int32) (float64, bool) {
	s, p := &b.sustained, &b.peak
	s.tokens = min(s.burst, s.tokens+(t-s.lastMS)*s.refillPerMS)
	p.tokens = min(p.burst, p.tokens+(t-p.lastMS)*p.refillPerMS)
	s.lastMS, p.lastMS = t, t
	if s.tokens < 1 || p.tokens < 1 {
		return 0, false
	}
	s.tokens--
	p.tokens--
	return t, true
}

// NextAdmitMS is when both buckets hold a whole token again (Advisor):
// the later of the two buckets' times, exact, since a request passes when
// both hold a token and each bucket only fills while nothing arrives.
func (b *DualTokenBucket) NextAdmitMS(t float64, _ int32) float64 {
	return max(b.sustained.NextAdmitMS(t, 0), b.peak.NextAdmitMS(t, 0))
}

// Tokens are the buckets' contents after the last decision.
func (b *DualTokenBucket) Tokens() (sustained, peak float64) {
	return b.sustained.tokens, b.peak.tokens
}

// TypeDualTokenBucket is the dual token bucket's type name.
const TypeDualTokenBucket Type = "dual-token-bucket"

// Parameters of the dual token bucket's peak bucket.
const (
	ParamPeakRate  = "peak_rps"
	ParamPeakBurst = "peak_burst"
)

func dualTokenBucketKind() *Kind {
	return &Kind{
		Type:       TypeDualTokenBucket,
		RetryAfter: "when both buckets hold a whole token again",
		Model:      "dual token bucket: sustained (rate_rps, burst) and peak (peak_rps, peak_burst) buckets, both full at the start, a request takes a token from each; policer",
		Params: []Param{
			rateParam, burstParam,
			{Name: ParamPeakRate, Admits: AdmitsLarger, Label: "Peak rate", Unit: "req/s", Units: "requests/s", Min: MinRateRPS, Max: MaxRateRPS,
				Doc: "the peak bucket's refill rate: releases at least 1000/peak_rps ms apart once its burst is spent"},
			{Name: ParamPeakBurst, Admits: AdmitsLarger, Label: "Peak burst", Unit: "requests", Integer: true, Min: 1, Max: MaxSize, Default: 1,
				Doc: "the peak bucket's size (1: no two requests closer than 1000/peak_rps ms)"},
		},
		Size:    ParamBurst,
		Stage:   true,
		Example: Params{ParamRate: 100, ParamBurst: 100, ParamPeakRate: 200, ParamPeakBurst: 1},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewDualTokenBucket(p[ParamRate], p[ParamBurst], p[ParamPeakRate], p[ParamPeakBurst]), nil
		},
		Curve: func(p Params) calculus.Curve {
			return calculus.Dual(calculus.PerMS(p[ParamRate]), p[ParamBurst], calculus.PerMS(p[ParamPeakRate]), p[ParamPeakBurst])
		},
		Nominal: func(p Params, windowMS float64) float64 {
			return min(p[ParamRate], p[ParamPeakRate]) * windowMS / 1000
		},
	}
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*DualTokenBucket) releaseAt(y float64, _ int32) float64 { return y }
