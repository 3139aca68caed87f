package limiter

import (
	"fmt"
	"slices"
)

// KeyedGate decides a request whose stages each look it up by their own
// key, as a shadow replay of a deployed configuration does: nginx's
// limit_req zones, each keyed by its limit_req_zone key. keys[i] is stage
// i's key slot (0, 1, 2, ... in order of first appearance), or -1 when the
// request's key for that stage is empty (nginx does not look a request up
// in a zone whose key is empty). A stage that keeps one state for every
// request (a gate whose row is not Keyed) reads slot 0 whatever its key.
type KeyedGate interface {
	OfferKeys(t float64, keys []int32) (release float64, ok bool)
}

// handlerZone is a gate that several directives of one location check as
// nginx's limit_req handler does (nginx_zones.go): every zone is looked up
// before any is charged. A chain of stages all of which are handlerZones is
// that handler; any other chain runs its stages in series.
type handlerZone interface {
	Gate
	handlerZone() *NginxLimitReq
}

// keysAsNamed is a keyed gate that makes a key's state when the key first
// comes (a replay names keys as it reads them; a sweep's gates are sized
// for their clients).
type keysAsNamed interface {
	Gate
	keysAsNamed()
}

func (*NginxLimitReq) keysAsNamed()   {}
func (*XTimeRatePerKey) keysAsNamed() {}

// NewKeyed builds the gate of a shadow replay's stages, each a spec at
// one point (its parameters' first values). Stages that are all nginx
// limit_req zones are checked as nginx checks the limit_req directives of
// one location (NginxZones); otherwise the stages run in series, each
// offered the request at the previous stage's release, and a request
// refused by any stage is refused (a stage does not learn of a later
// stage's refusal).
func NewKeyed(stages []*Spec) (KeyedGate, error) {
	if len(stages) == 0 {
		return nil, fmt.Errorf("no stages")
	}
	gates := make([]Gate, len(stages))
	keyed := make([]bool, len(stages))
	for i, s := range stages {
		k := s.Kind()
		if k == nil {
			return nil, fmt.Errorf("stage %d: unknown limiter %q", i+1, s.Type)
		}
		if k.compound || !k.Stage && len(stages) > 1 {
			return nil, fmt.Errorf("stage %d: %s cannot be a stage", i+1, s.Type)
		}
		pts := s.Points()
		if len(pts) != 1 {
			return nil, fmt.Errorf("stage %d: %s lists %d points; a replay's stage has one", i+1, s.Type, len(pts))
		}
		g, err := New(s, pts[0], []float64{1}, nil)
		if err != nil {
			return nil, fmt.Errorf("stage %d: %w", i+1, err)
		}
		if k.Keyed != nil && k.Keyed(s) {
			if _, ok := g.(keysAsNamed); !ok {
				return nil, fmt.Errorf("stage %d: %s keeps a state per key, which a replay names as it reads: not yet supported for this type", i+1, s.Type)
			}
			keyed[i] = true
		}
		gates[i] = g
	}
	zones := make([]*NginxLimitReq, 0, len(gates))
	for _, g := range gates {
		if z, ok := g.(handlerZone); ok {
			zones = append(zones, z.handlerZone())
		}
	}
	if len(zones) == len(gates) {
		return NewNginxZones(zones), nil
	}
	if len(zones) > 0 && len(gates) > 1 {
		return nil, fmt.Errorf("nginx limit_req zones with other gates in one replay: nginx checks its zones together, which a series of other gates cannot join")
	}
	return &seriesGate{gates: gates, keyed: keyed}, nil
}

// seriesGate runs its stages in series, each at its own key.
type seriesGate struct {
	gates []Gate
	keyed []bool
}

func (s *seriesGate) OfferKeys(t float64, keys []int32) (float64, bool) {
	for i, g := range s.gates {
		k := keys[i]
		if k < 0 {
			continue
		}
		if !s.keyed[i] {
			k = 0
		}
		r, ok := g.Offer(t, k)
		if !ok {
			return 0, false
		}
		t = r
	}
	return t, true
}

// KeyedStages says whether each stage keeps a state per key (its row's
// Keyed under its options): a stage that does not reads one state whatever
// its key expression gives.
func KeyedStages(stages []*Spec) []bool {
	return slices.Collect(func(yield func(bool) bool) {
		for _, s := range stages {
			k := s.Kind()
			if !yield(k != nil && k.Keyed != nil && k.Keyed(s)) {
				return
			}
		}
	})
}
