package calculus

import "math"

// Flows that share one server: the bound of one flow (own) when other
// flows (cross, their aggregate) share a rate-latency server beta = R[t -
// T]+ with it. Both are taken by their affine envelopes, own b_i + r_i d
// and cross b' + r' d.
//
// FIFO residual service (Le Boudec and Thiran, Network Calculus,
// Proposition 6.2.1): for every theta >= 0 the flow is guaranteed
//
//	beta_theta(t) = [beta(t) - alpha'(t - theta)]+ for t > theta, 0 before,
//
// which for these curves is (R - r')[t - t0]+ past theta, t0 = (R*T + b' -
// r'*theta)/(R - r'). Its delay bound for the flow, the worst request
// being the first of a burst, is
//
//	d(theta) = max(theta, t0(theta) + b_i/(R - r'))
//
// (when r_i <= R - r'; +Inf otherwise). The first term grows with theta
// and the second falls, so the smallest is where they meet: theta* = T +
// (b_i + b')/R, d = theta*, the aggregate's own FIFO bound. Blind
// multiplexing (no assumption on the order) is the theta = 0 member without
// the indicator, [beta - alpha']+ = (R - r')[t - (R*T + b')/(R - r')]+, so
// its bound (R*T + b' + b_i)/(R - r') is never below the FIFO one.

// ResidualDelay is d(theta), the delay bound of own through the FIFO
// residual service curve at theta (>= 0): +Inf when own's rate exceeds
// what the cross traffic leaves, R - r'.
func ResidualDelay(own, cross Curve, b RateLatency, theta float64) float64 {
	oe, ce := own.Envelope(), cross.Envelope()
	left := b.RatePerMS - ce.RatePerMS
	if !(left > 0) || oe.RatePerMS > left {
		return math.Inf(1)
	}
	t0 := (b.RatePerMS*b.LatencyMS + ce.BurstReq - ce.RatePerMS*theta) / left
	return math.Max(theta, t0+oe.BurstReq/left)
}

// FIFODelay is the smallest ResidualDelay over theta >= 0 and the theta
// that attains it (see above: theta* = T + (b_i + b')/R, and the bound is
// theta*); +Inf and 0 when own's rate exceeds R - r'.
func FIFODelay(own, cross Curve, b RateLatency) (delayMS, thetaMS float64) {
	oe, ce := own.Envelope(), cross.Envelope()
	if left := b.RatePerMS - ce.RatePerMS; !(left > 0) || oe.RatePerMS > left {
		return math.Inf(1), 0
	}
	theta := b.LatencyMS + (oe.BurstReq+ce.BurstReq)/b.RatePerMS
	return ResidualDelay(own, cross, b, theta), theta
}

// BlindDelay is the delay bound of own under blind multiplexing, through
// the residual curve [beta - alpha']+: (R*T + b' + b_i)/(R - r'); +Inf
// when own's rate exceeds R - r'.
func BlindDelay(own, cross Curve, b RateLatency) float64 {
	oe, ce := own.Envelope(), cross.Envelope()
	left := b.RatePerMS - ce.RatePerMS
	if !(left > 0) || oe.RatePerMS > left {
		return math.Inf(1)
	}
	return (b.RatePerMS*b.LatencyMS + ce.BurstReq + oe.BurstReq) / left
}
