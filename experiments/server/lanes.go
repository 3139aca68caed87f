package server

// Lanes is the plain server's start rule for a pass that knows its
// requests by their order: FIFO over w workers, each request taking the
// same service time, so that finishes come in release order and request
// j starts at its release, or when request j-w finishes if that is later
// (the w requests before it hold every worker). It answers Serve as
// Server.ServeFor does for such a server, the same float64 values, in
// constant time (no requests to drop as they finish), but keeps no count
// of the requests in the system: it does not answer InSystem, so a gate
// that reads the occupancy needs the Server.
type Lanes struct {
	fin       []float64 // finish of request j at fin[j&(len(fin)-1)], the last len(fin) of them
	j         int       // requests served
	workers   int
	serviceMS float64
}

// NewLanes is an idle server of the spec's workers, each request taking
// its service_ms; ok is false for a server Lanes does not model: a
// service distribution, a knee or degrade events.
func NewLanes(s Spec) (l *Lanes, ok bool) {
	if !s.FixedService() || s.Shaped() || s.Workers < 1 {
		return nil, false
	}
	n := 1
	for n < s.Workers {
		n *= 2
	}
	return &Lanes{fin: make([]float64, n), workers: s.Workers, serviceMS: s.ServiceMS}, true
}

// Serve hands over the next request, released at t (non-decreasing), and
// returns when it starts and finishes.
func (l *Lanes) Serve(t float64) (start, finish float64) {
	mask := len(l.fin) - 1
	start = t
	if l.j >= l.workers {
		start = max(t, l.fin[(l.j-l.workers)&mask])
	}
	finish = start + l.serviceMS
	l.fin[l.j&mask] = finish
	l.j++
	return start, finish
}
