// Package server models the service behind the gate: c identical workers,
// FIFO in release order, a fixed service time, and a deadline counted from
// arrival at the gate. Every released request is served, even one that will
// finish after its deadline (service-then-discard).
package server

import (
	"encoding/json"
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/lists"
)

// Defaults of the server model.
const (
	DefaultWorkers    = 1
	DefaultServiceMS  = 10
	DefaultDeadlineMS = 200
	MaxWorkers        = 100_000
	MaxServiceMS      = 3_600_000
	MaxDeadlineMS     = 86_400_000
)

// Spec is the server section of a config. The word-valued settings are
// listed by Options (options.go); left out, each is its first choice, the
// plain server described above.
type Spec struct {
	Workers    int     `json:"workers"`
	ServiceMS  float64 `json:"service_ms"`
	DeadlineMS float64 `json:"deadline_ms"`

	Discipline string `json:"discipline,omitempty"`
	Door       string `json:"door,omitempty"`
	Bound      int    `json:"bound,omitempty"` // a shedding door's bound; 0: capacity × deadline
	Expire     string `json:"expire,omitempty"`
	End        string `json:"end,omitempty"`
	Occupancy  string `json:"occupancy,omitempty"`

	// The service-time distribution (service.go): the option "service"
	// and its numeric settings (Numbers).
	Service          string  `json:"service,omitempty"`
	ServiceP50MS     float64 `json:"service_p50_ms,omitempty"`
	ServiceP99MS     float64 `json:"service_p99_ms,omitempty"`
	ServiceSlowShare float64 `json:"service_slow_share,omitempty"`
	ServiceFastMS    float64 `json:"service_fast_ms,omitempty"`
	ServiceSlowMS    float64 `json:"service_slow_ms,omitempty"`

	columnMeanMS, columnMaxMS float64 // the trace's service column (SetColumn)
	// CancelOnTimeout is what happens to an attempt its client abandoned
	// (OptCancel); it matters to the client model only.
	CancelOnTimeout string `json:"cancel_on_timeout,omitempty"`

	// The service's shape over load and time (shape.go): a latency knee
	// (Knee, KneeSlope, KneePower) and degrade events.
	Knee      int       `json:"knee,omitempty"`
	KneeSlope float64   `json:"knee_slope,omitempty"`
	KneePower float64   `json:"knee_power,omitempty"`
	Degrade   []Degrade `json:"degrade,omitempty"`

	// Lists are the values of the swept numeric fields (those whose row in
	// Fields says Sweep), by JSON key; the field itself holds the first.
	Lists lists.Lists `json:"-"`
}

// MarshalJSON writes the spec with its swept fields as lists.
func (s Spec) MarshalJSON() ([]byte, error) {
	type plain Spec
	b, err := json.Marshal(plain(s))
	if err != nil || len(s.Lists) == 0 {
		return b, err
	}
	return lists.Marshal(s, b, s.Lists)
}

// Normalize fills the defaults: 1 worker, 10 ms service, 200 ms deadline.
func (s *Spec) Normalize() {
	if s.Workers == 0 {
		s.Workers = DefaultWorkers
	}
	if s.ServiceMS == 0 {
		s.ServiceMS = DefaultServiceMS
	}
	if s.DeadlineMS == 0 {
		s.DeadlineMS = DefaultDeadlineMS
	}
	if s.Knee > 0 && s.KneePower == 0 {
		s.KneePower = 1
	}
	s.resolveMean()
}

// Validate checks a normalized spec.
func (s *Spec) Validate(path string) field.List {
	var errs field.List
	if s.Workers < 1 || s.Workers > MaxWorkers {
		errs.Add(field.Join(path, "workers"), "must be between 1 and %d", MaxWorkers)
	}
	if math.IsNaN(s.ServiceMS) || s.ServiceMS <= 0 || s.ServiceMS > MaxServiceMS {
		errs.Add(field.Join(path, "service_ms"), "must be more than 0 and at most %d ms", MaxServiceMS)
	}
	if math.IsNaN(s.DeadlineMS) || s.DeadlineMS <= 0 || s.DeadlineMS > MaxDeadlineMS {
		errs.Add(field.Join(path, "deadline_ms"), "must be more than 0 and at most %d ms", MaxDeadlineMS)
	}
	errs = append(errs, s.validateOptions(path)...)
	errs = append(errs, s.validateShape(path)...)
	return append(errs, s.validateService(path)...)
}

// RateRPS is the server's capacity in requests/s: workers / service time
// (service_ms, the mean of a distribution).
func (s *Spec) RateRPS() float64 { return float64(s.Workers) * 1000 / s.ServiceMS }

// Server is the state of one run's server. Under FIFO with one worker, or
// with fixed service, start and finish times never decrease, so the
// requests in the system are a queue of finish times: a request finishing
// at f is in the system at t while f > t. With several workers and a
// service distribution finishes overtake each other: the server then keeps
// the workers' free times and the finishes in the system as two min-heaps.
type Server struct {
	_         cacheline.Pad // a sweep's points run side by side (package cacheline)
	workers   int
	busyCeil  bool // InSystem answers by the seed lab's formula (occupancy busy-ceil)
	serviceMS float64
	fin       []float64 // ring of finish times of requests in the system
	head, n   int
	lastMS    float64

	heaps bool    // several workers and variable service
	free  minHeap // the workers' free times
	finH  minHeap // finish times of the requests in the system

	shape *shape // a knee or degrade events (shape.go); nil: none
	_     cacheline.Pad
}

// New returns an idle server.
func New(s Spec) *Server {
	srv := &Server{workers: s.Workers, busyCeil: s.Option(OptOccupancy) == OccupancyBusyCeil, serviceMS: s.ServiceMS, fin: make([]float64, 64)}
	if s.Workers > 1 && !s.FixedService() || s.Shaped() {
		srv.heaps = true
		srv.free = make(minHeap, s.Workers)
	}
	if s.Shaped() {
		srv.shape = newShape(&s)
	}
	return srv
}

// InSystem is the number of requests waiting or in service at t (by the
// spec's occupancy rule). Queries (and Serve calls) must come at
// non-decreasing times.
func (s *Server) InSystem(t float64) int {
	n := s.inSystem(t)
	if s.busyCeil {
		return s.ceilCount(t)
	}
	return n
}

func (s *Server) inSystem(t float64) int {
	if t < s.lastMS {
		panic("server: time went backwards")
	}
	s.lastMS = t
	if s.heaps {
		for len(s.finH) > 0 && s.finH[0] <= t {
			s.finH.pop()
		}
		return len(s.finH)
	}
	for s.n > 0 && s.fin[s.head] <= t {
		s.head = (s.head + 1) & (len(s.fin) - 1)
		s.n--
	}
	return s.n
}

// Serve hands over a request released at t (non-decreasing) that takes the
// spec's service_ms, and returns when it starts and finishes.
func (s *Server) Serve(t float64) (start, finish float64) { return s.ServeFor(t, s.serviceMS) }

// ServeFor hands over a request released at t (non-decreasing) that takes
// serviceMS, and returns when it starts and finishes: at once when a worker
// is free, else when the earliest one frees (FIFO). With n requests in the
// system, n >= workers and fixed service that is when the (n-workers+1)-th
// of them finishes. Service times other than the spec's service_ms need
// one worker or a spec whose service is not fixed.
func (s *Server) ServeFor(t, serviceMS float64) (start, finish float64) {
	n := s.inSystem(t)
	start = t
	if s.shape != nil {
		return s.serveShaped(t, serviceMS)
	}
	if s.heaps {
		start = max(t, s.free[0])
		finish = start + serviceMS
		s.free.replaceMin(finish)
		s.finH.push(finish)
		return start, finish
	}
	if n >= s.workers {
		start = s.fin[(s.head+n-s.workers)&(len(s.fin)-1)]
	}
	finish = start + serviceMS
	if s.n == len(s.fin) {
		s.grow()
	}
	s.fin[(s.head+s.n)&(len(s.fin)-1)] = finish
	s.n++
	return start, finish
}

// StartAt is when a request released at t (non-decreasing, as for Serve)
// would start, without serving it.
func (s *Server) StartAt(t float64) float64 {
	n := s.inSystem(t)
	if s.shape != nil {
		return s.shapedStart(t)
	}
	if s.heaps {
		return max(t, s.free[0])
	}
	if n >= s.workers {
		return s.fin[(s.head+n-s.workers)&(len(s.fin)-1)]
	}
	return t
}

// WouldStart is when a request released at t (no earlier than the last
// query) would start with fixed service, without serving it and without
// dropping the requests finished by t, so it may be asked at such times in
// any order: at t when a worker is free, else when the workers-th latest
// finish frees one (finished requests are earlier than t and change
// nothing).
func (s *Server) WouldStart(t float64) float64 {
	if s.shape != nil {
		return s.shapedStart(t)
	}
	if s.heaps {
		return max(t, s.free[0])
	}
	if s.n >= s.workers {
		return max(t, s.fin[(s.head+s.n-s.workers)&(len(s.fin)-1)])
	}
	return t
}

func (s *Server) grow() {
	next := make([]float64, 2*len(s.fin))
	for i := 0; i < s.n; i++ {
		next[i] = s.fin[(s.head+i)&(len(s.fin)-1)]
	}
	s.fin, s.head = next, 0
}

// Len is the number of requests in the system after the last call.
func (s *Server) Len() int {
	if s.heaps {
		return len(s.finH)
	}
	return s.n
}

// minHeap is a binary min-heap of times.
type minHeap []float64

func (h *minHeap) push(v float64) {
	*h = append(*h, v)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !(a[i] < a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *minHeap) pop() {
	a := *h
	last := len(a) - 1
	a[0] = a[last]
	*h = a[:last]
	h.down()
}

// replaceMin replaces the smallest time with v.
func (h minHeap) replaceMin(v float64) {
	h[0] = v
	h.down()
}

func (h minHeap) down() {
	n := len(h)
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r] < h[l] {
			m = r
		}
		if !(h[m] < h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
