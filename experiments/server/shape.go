package server

import (
	"math"
	"slices"

	"github.com/ratelab/ratelab/experiments/field"
)

// A server's shape over load and time, on the plain FIFO server (the
// forward pass's and the event loop's plain model; the queue model refuses
// it):
//
//   - A latency knee: a request's service time is fixed at its start from
//     the n requests in service then, itself included:
//     service · (1 + knee_slope · max(0, n − knee))^knee_power. Below the
//     knee concurrency is free; past it every request in service slows the
//     ones that start, so more concurrency buys latency, not throughput.
//   - Degrade events, each over [from_ms, to_ms): service_factor multiplies
//     the service time of a request that starts in it (after the knee), or
//     only workers of the server's workers may be busy: a request starts
//     then only when fewer than workers are in service (in-service requests
//     finish as they were; past to_ms every worker serves again).
//
// The server's ideal concurrency (IdealConcurrency) is what its capacity ×
// latency allows without queueing: min(workers, knee), the degrade's
// workers during one that lowers them.

// Degrade is one degrade event of a server.
type Degrade struct {
	FromMS        float64 `json:"from_ms"`
	ToMS          float64 `json:"to_ms"`
	ServiceFactor float64 `json:"service_factor,omitempty"`
	Workers       int     `json:"workers,omitempty"`
}

// Shape is a server's knee and degrade events apart from its other
// fields: the web form's models input carries the base server's so.
type Shape struct {
	Knee      int       `json:"knee,omitempty"`
	KneeSlope float64   `json:"knee_slope,omitempty"`
	KneePower float64   `json:"knee_power,omitempty"`
	Degrade   []Degrade `json:"degrade,omitempty"`
}

// ShapeOf is the spec's shape, nil when it has none.
func (s *Spec) ShapeOf() *Shape {
	if !s.Shaped() && s.KneeSlope == 0 && s.KneePower == 0 {
		return nil
	}
	return &Shape{Knee: s.Knee, KneeSlope: s.KneeSlope, KneePower: s.KneePower, Degrade: s.Degrade}
}

// SetShape sets the spec's knee and degrade events (nil: none).
func (s *Spec) SetShape(sh *Shape) {
	if sh == nil {
		sh = &Shape{}
	}
	s.Knee, s.KneeSlope, s.KneePower, s.Degrade = sh.Knee, sh.KneeSlope, sh.KneePower, sh.Degrade
}

// Shaped reports whether the spec has a knee or degrade events.
func (s *Spec) Shaped() bool { return s.Knee > 0 || len(s.Degrade) > 0 }

// IdealConcurrency is the number of requests the server serves at once
// without queueing and past which they only wait or slow down, at t:
// min(workers, knee), the workers of a degrade event at t that lowers them.
func (s *Spec) IdealConcurrency(t float64) int {
	w := s.Workers
	for _, d := range s.Degrade {
		if d.Workers > 0 && t >= d.FromMS && t < d.ToMS {
			w = min(w, d.Workers)
		}
	}
	if s.Knee > 0 {
		w = min(w, s.Knee)
	}
	return w
}

// CapacityFactor is the share of its capacity the server has at t: the
// degrade events' workers/workers and 1/service_factor.
func (s *Spec) CapacityFactor(t float64) float64 {
	f := 1.0
	for _, d := range s.Degrade {
		if t < d.FromMS || t >= d.ToMS {
			continue
		}
		if d.Workers > 0 {
			f = min(f, float64(d.Workers)/float64(s.Workers))
		}
		if d.ServiceFactor > 0 {
			f /= d.ServiceFactor
		}
	}
	return f
}

func (s *Spec) validateShape(path string) field.List {
	var errs field.List
	if s.Knee < 0 || s.Knee > MaxWorkers {
		errs.Add(field.Join(path, "knee"), "must be between 1 and %d requests in service", MaxWorkers)
	}
	if s.Knee > 0 {
		if !(s.KneeSlope > 0 && s.KneeSlope <= 1000) {
			errs.Add(field.Join(path, "knee_slope"), "must be more than 0 and at most 1000 (the service time's growth per request past the knee)")
		}
		if !(s.KneePower > 0 && s.KneePower <= 10) {
			errs.Add(field.Join(path, "knee_power"), "must be more than 0 and at most 10")
		}
	} else if s.KneeSlope != 0 || s.KneePower != 0 {
		errs.Add(field.Join(path, "knee"), "is needed for knee_slope and knee_power")
	}
	if s.Shaped() && !s.Classic() {
		errs.Add(field.Join(path, "knee"), "a knee or degrade events need the plain FIFO server (discipline fifo, door open, expire never, end drain)")
	}
	for i, d := range s.Degrade {
		p := field.Index(field.Join(path, "degrade"), i)
		if math.IsNaN(d.FromMS) || d.FromMS < 0 {
			errs.Add(field.Join(p, "from_ms"), "must be at least 0")
		}
		if math.IsNaN(d.ToMS) || !(d.ToMS > d.FromMS) {
			errs.Add(field.Join(p, "to_ms"), "must be after from_ms")
		}
		switch {
		case d.ServiceFactor != 0 && d.Workers != 0:
			errs.Add(p, "gives service_factor or workers, not both")
		case d.ServiceFactor == 0 && d.Workers == 0:
			errs.Add(p, "needs service_factor (the service time's factor) or workers (the workers left)")
		case d.ServiceFactor != 0 && !(d.ServiceFactor > 0 && d.ServiceFactor <= 1000):
			errs.Add(field.Join(p, "service_factor"), "must be more than 0 and at most 1000")
		case d.Workers != 0 && (d.Workers < 1 || d.Workers > s.Workers):
			errs.Add(field.Join(p, "workers"), "must be between 1 and the server's %d workers", s.Workers)
		}
	}
	return errs
}

// shape is a server's knee and degrade events as its Server applies them.
type shape struct {
	workers   int
	knee      int
	slope     float64
	power     float64
	degrade   []Degrade
	sortedBuf []float64
}

func newShape(s *Spec) *shape {
	return &shape{workers: s.Workers, knee: s.Knee, slope: s.KneeSlope, power: s.KneePower, degrade: slices.Clone(s.Degrade)}
}

// shapedStart is when a request released at t starts: at the earliest
// free worker's time, unless that falls in a degrade event that leaves w
// workers, where it waits until fewer than w are busy or the event ends.
func (s *Server) shapedStart(t float64) float64 {
	start := max(t, s.free[0])
	for _, d := range s.shape.degrade {
		if d.Workers == 0 || start < d.FromMS || start >= d.ToMS {
			continue
		}
		// Fewer than w busy at x: at least workers − w + 1 free times <= x.
		sorted := append(s.shape.sortedBuf[:0], s.free...)
		slices.Sort(sorted)
		s.shape.sortedBuf = sorted
		k := s.shape.workers - d.Workers
		at := max(t, sorted[k])
		start = min(at, d.ToMS)
	}
	return start
}

// serveShaped is ServeFor under a shape.
func (s *Server) serveShaped(t, serviceMS float64) (start, finish float64) {
	start = s.shapedStart(t)
	svc := serviceMS
	if s.shape.knee > 0 {
		n := 1 // itself
		for _, f := range s.free {
			if f > start {
				n++
			}
		}
		if over := n - s.shape.knee; over > 0 {
			svc *= math.Pow(1+s.shape.slope*float64(over), s.shape.power)
		}
	}
	for _, d := range s.shape.degrade {
		if d.ServiceFactor > 0 && start >= d.FromMS && start < d.ToMS {
			svc *= d.ServiceFactor
		}
	}
	finish = start + svc
	s.free.replaceMin(finish)
	s.finH.push(finish)
	return start, finish
}
