package limiter

import "math"

// store is the shared store of a central limiter (sharing central): one
// gate of the configured settings that every instance asks, a round trip
// store_rtt_ms away, deciding one request at a time at
// store_capacity_rps (0: at once), and down over [outage_start_ms,
// outage_end_ms) of store time. The model (redis_rate's Allow against one
// Redis, Envoy's global rate limit service):
//
//   - a request at t reaches the store at a = t + rtt/2; the store decides
//     it at d = max(a, the store's last decision) + 1000/capacity ms
//     (refused requests take their turn too), with its gate at d, and the
//     answer is back at d + rtt/2: the request's release (the gate delay
//     the store adds is release - t);
//   - a request that reaches the store while it is down is answered by the
//     failure policy after one round trip (t + rtt): fail-open admits it,
//     fail-closed refuses it; the gate's state does not move;
//   - releases never go back in time: a release is at least the last one
//     (a fail-open answer right after the outage may wait for a decision
//     queued before it).
//
// With a fixed round trip every decision time is the arrival shifted by
// rtt/2 (and the store's queue), so the store's decisions are its gate's
// on the shifted times: with no outage and no capacity limit, the
// instances admit exactly what one gate admits.
type store struct {
	gate         Gate
	halfRTTMS    float64
	serviceMS    float64
	downFrom     float64
	downTo       float64
	failOpen     bool
	lastDecision float64
	lastRelease  float64
	downAdmitted int
	downRefused  int
	delayedMaxMS float64
}

func newStore(g Gate, p Params, failOpen bool) *store {
	s := &store{gate: g, halfRTTMS: p.Get(ParamStoreRTT) / 2, downFrom: p.Get(ParamOutageStart), downTo: p.Get(ParamOutageEnd), failOpen: failOpen,
		lastDecision: math.Inf(-1), lastRelease: math.Inf(-1)}
	if c := p.Get(ParamStoreCapacity); c > 0 {
		s.serviceMS = 1000 / c
	}
	return s
}

// down reports whether the store is down at store time a.
func (s *store) down(a float64) bool { return a >= s.downFrom && a < s.downTo }

// offer decides a request at t through the store.
func (s *store) offer(t float64, client int32) (float64, bool) {
	a := t + s.halfRTTMS
	if s.down(a) {
		if !s.failOpen {
			s.downRefused++
			return 0, false
		}
		s.downAdmitted++
		release := max(t+2*s.halfRTTMS, s.lastRelease)
		s.lastRelease = release
		return release, true
	}
	d := max(a, s.lastDecision) + s.serviceMS
	s.lastDecision = d
	release, ok := s.gate.Offer(d, client)
	if !ok {
		return 0, false
	}
	release = max(release+s.halfRTTMS, s.lastRelease)
	s.lastRelease = release
	return release, true
}

// StoreDown are what the instances of a central limiter answered while
// its store was down: admitted (fail-open) and refused (fail-closed).
func (r *InstanceSet) StoreDown() (admitted, refused int, ok bool) {
	if r.store == nil {
		return 0, 0, false
	}
	return r.store.downAdmitted, r.store.downRefused, true
}
