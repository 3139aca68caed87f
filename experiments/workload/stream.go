package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Run is one time-sorted run of arrivals, pulled one at a time: a part's
// generator (a paced client, a Poisson client, a demand curve, ...) or a
// trace read from disk. Next returns the next arrival in time order (times
// never decrease) and ok=false at the end of the run or on an error; Err
// reports that error (nil for generators, which cannot fail).
//
// A Run plugs into a Stream (NewStream), which merges runs by time, ties in
// run order, so that a Run from a trace reader (cmd/lab reads the file: the
// engine opens nothing) replays through the engine like a generated part.
type Run interface {
	Next() (t float64, client int32, ok bool)
	Err() error
}

// Stream is a workload's arrivals in time order, decoded as they are read,
// never held whole: a k-way merge of its runs, ties broken by the run's
// index (parts in the order given, then each part's runs in order), which is
// exactly the order and the float values Generate gives. Its memory grows
// with the runs (clients), not with the arrivals.
type Stream struct {
	// Clients and Groups are known before the first arrival (limiters
	// size per-client state from them).
	Clients []Client
	Groups  []string
	// ClientPart is the part that declared each client first (as in
	// Arrivals; nil for a stream of a trace read from disk).
	ClientPart []int32

	heap  []head // runs with an arrival pending, a min-heap on (t, run)
	runs  []Run
	err   error
	count int64
}

// head is a run's next arrival.
type head struct {
	t   float64
	c   int32
	run int32
}

func (a head) less(b head) bool { return a.t < b.t || a.t == b.t && a.run < b.run }

// NewStream merges runs (each time-sorted) from clients into one stream;
// client indices of the runs index clients. Group indices are set from
// each client's Group and groups (as IndexGroups).
func NewStream(clients []Client, groups []string, runs ...Run) (*Stream, error) {
	if err := IndexGroups(clients, groups); err != nil {
		return nil, err
	}
	s := &Stream{Clients: clients, Groups: groups}
	s.start(runs)
	return s, nil
}

// start primes the heap with each run's first arrival.
func (s *Stream) start(runs []Run) {
	s.runs = runs
	s.heap = make([]head, 0, len(runs))
	for i, r := range runs {
		if t, c, ok := r.Next(); ok {
			s.heap = append(s.heap, head{t, c, int32(i)})
		} else if err := r.Err(); err != nil && s.err == nil {
			s.err = err
		}
	}
	for i := len(s.heap)/2 - 1; i >= 0; i-- {
		s.down(i)
	}
}

// AtLeast is how many arrivals the stream is known to hold: the requests
// of its trace files, counted by their first read (a run that knows its
// length, Len); 0 when none knows.
func (s *Stream) AtLeast() int64 {
	var n int64
	for _, r := range s.runs {
		if k, ok := r.(interface{ Len() int64 }); ok {
			n += k.Len()
		}
	}
	return n
}

// Count is how many arrivals Read has returned so far.
func (s *Stream) Count() int64 { return s.count }

// Read fills t and c (of equal length) with the next arrivals and returns
// how many it wrote: fewer than len(t) only at the end of the stream, 0
// after it. An error of a run stops the stream.
func (s *Stream) Read(t []float64, c []int32) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n := 0
	c = c[:len(t)]
	for n < len(t) && len(s.heap) > 0 {
		if len(s.heap) == 1 { // one run left: no merging
			h := &s.heap[0]
			r := s.runs[h.run]
			f, _ := r.(filler)
			for n < len(t) {
				t[n], c[n] = h.t, h.c
				n++
				if f != nil {
					n += f.fill(t[n:], c[n:])
				}
				var ok bool
				if h.t, h.c, ok = r.Next(); !ok {
					s.heap = s.heap[:0]
					s.err = r.Err()
					break
				}
			}
			break
		}
		h := &s.heap[0]
		t[n], c[n] = h.t, h.c
		n++
		var ok bool
		if h.t, h.c, ok = s.runs[h.run].Next(); !ok {
			if err := s.runs[h.run].Err(); err != nil {
				s.err = err
				break
			}
			last := len(s.heap) - 1
			s.heap[0] = s.heap[last]
			s.heap = s.heap[:last]
		}
		s.down(0)
	}
	s.count += int64(n)
	return n, s.err
}

// down restores the heap below i.
func (s *Stream) down(i int) {
	h := s.heap
	n := len(h)
	x := h[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].less(h[l]) {
			m = r
		}
		if !h[m].less(x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
}

// Open streams the arrivals of a valid spec with the run's seed: the same
// arrivals, in the same order, as Generate, decoded as they are read. A
// part type with a Runs function streams; one without (bursts, a trace
// given in the config, bounded by their own limits) is generated whole
// into its runs first.
func Open(s *Spec, seed uint64) (*Stream, error) {
	return OpenWith(s, seed, nil)
}

// OpenWith is Open with the opener of the spec's trace files (nil: a trace
// file part is an error).
func OpenWith(s *Spec, seed uint64, open TraceOpener) (*Stream, error) {
	g := newGenerator(s.DurationMS, seed)
	g.multiply = s.Pacing == PacingMultiplied
	g.open = open
	var runs []Run
	for i := range s.Parts {
		p := &s.Parts[i]
		k := p.Kind()
		if k == nil {
			return nil, fmt.Errorf("workload.parts[%d]: unknown part type %q", i, p.Type)
		}
		g.part = i
		if k.Runs != nil {
			runs = append(runs, k.Runs(g, p)...)
			continue
		}
		g.t, g.c, g.s, g.runs = nil, nil, nil, nil // a trace's service column is not streamed (Arrivals.GivenServiceMS)
		if err := k.Generate(g, p); err != nil {
			return nil, fmt.Errorf("workload.parts[%d]: %w", i, err)
		}
		bounds := append(g.runs, len(g.t))
		if bounds[0] != 0 {
			bounds = append([]int{0}, bounds...)
		}
		for r := 0; r+1 < len(bounds); r++ {
			lo, hi := bounds[r], bounds[r+1]
			runs = append(runs, &sliceRun{t: g.t[lo:hi], c: g.c[lo:hi]})
		}
	}
	st := &Stream{Clients: g.clients, Groups: g.groups, ClientPart: g.clientPart}
	st.start(runs)
	return st, nil
}

// sliceRun replays a run held in memory.
type sliceRun struct {
	t []float64
	c []int32
	i int
}

func (r *sliceRun) Next() (float64, int32, bool) {
	if r.i >= len(r.t) {
		return 0, 0, false
	}
	i := r.i
	r.i++
	return r.t[i], r.c[i], true
}

func (r *sliceRun) Err() error { return nil }

// SliceRun is a Run over arrivals held in memory (t sorted): for tests and
// for traces small enough to hold.
func SliceRun(t []float64, c []int32) Run { return &sliceRun{t: t, c: c} }

// PacedRun is Paced as a Run: from start while t < end, spaced 1000/rateRPS
// ms by repeated floating addition; nothing when rateRPS <= 0.
func PacedRun(start, end, rateRPS float64, c int32) Run {
	if rateRPS <= 0 {
		return &pacedRun{t: 0, end: 0, c: c}
	}
	return &pacedRun{t: start, end: end, spacing: 1000 / rateRPS, c: c}
}

// PacedRun is Paced as a Run, by the generator's pacing rule (Spec.Pacing).
func (g *Generator) PacedRun(start, end, rateRPS float64, c int32) Run {
	r := PacedRun(start, end, rateRPS, c).(*pacedRun)
	r.multiply, r.start = g.multiply, r.t
	return r
}

type pacedRun struct {
	t, end, spacing float64
	c               int32
	// multiply: arrival k at start + k × spacing (PacingMultiplied).
	multiply bool
	start    float64
	k        int
}

func (r *pacedRun) Next() (float64, int32, bool) {
	if r.multiply {
		t := r.start + float64(r.k)*r.spacing
		if !(t < r.end) {
			return 0, 0, false
		}
		r.k++
		return t, r.c, true
	}
	if !(r.t < r.end) {
		return 0, 0, false
	}
	t := r.t
	r.t += r.spacing
	return t, r.c, true
}

func (r *pacedRun) Err() error { return nil }

// PoissonRun is Poisson as a Run: exponential gaps of mean 1000/rateRPS
// drawn from rng, in [start, end).
func PoissonRun(rng *rand.Rand, start, end, rateRPS float64, c int32) Run {
	mean := 1000 / rateRPS
	return &poissonRun{rng: rng, t: start + rng.ExpFloat64()*mean, end: end, mean: mean, c: c}
}

type poissonRun struct {
	rng          *rand.Rand
	t, end, mean float64
	c            int32
}

func (r *poissonRun) Next() (float64, int32, bool) {
	if !(r.t < r.end) {
		return 0, 0, false
	}
	t := r.t
	r.t += r.rng.ExpFloat64() * r.mean
	return t, r.c, true
}

func (r *poissonRun) Err() error { return nil }

// filler is a Run that also writes its next arrivals a batch at a time,
// the same as Next would return them one by one: fill writes into t and
// c (of equal length) and returns how many it wrote, fewer than len(t)
// only at the end of the run. The stream fills from its last run.
type filler interface {
	fill(t []float64, c []int32) int
}

// fill is Next for a batch, its time kept in a register: the same values
// from the same draws.
func (r *poissonRun) fill(t []float64, c []int32) int {
	x, end, mean, rng, id := r.t, r.end, r.mean, r.rng, r.c
	c = c[:len(t)]
	n := 0
	for n < len(t) && x < end {
		t[n], c[n] = x, id
		x += rng.ExpFloat64() * mean
		n++
	}
	r.t = x
	return n
}

// demandRun is a demand curve as a Run (generateDemandCurve, pulled).
type demandRun struct {
	segs    []Segment
	w, s    float64 // the window's end; the current segment's start
	i       int     // the current segment
	started bool    // the current segment is being paced
	done    bool
	paced   pacedRun
}

func (r *demandRun) Next() (float64, int32, bool) {
	for !r.done {
		if !r.started {
			sg := r.segs[r.i]
			r.started = true
			r.paced.t, r.paced.end, r.paced.spacing, r.paced.start, r.paced.k = 0, 0, 0, 0, 0
			if sg.RateRPS > 0 {
				r.paced.t, r.paced.end, r.paced.spacing = r.s, math.Min(r.s+sg.DurationMS, r.w), 1000/sg.RateRPS
				r.paced.start = r.s
			}
		}
		if t, c, ok := r.paced.Next(); ok {
			return t, c, true
		}
		r.started = false
		if r.s += r.segs[r.i].DurationMS; r.s >= r.w {
			r.done = true
			break
		}
		if r.i++; r.i == len(r.segs) {
			r.i = 0
		}
	}
	return 0, 0, false
}

func (r *demandRun) Err() error { return nil }

// flashRun is a flash crowd as a Run (Generator.flashCrowd, pulled).
type flashRun struct {
	p     *Part
	rng   *rand.Rand
	ids   []int32
	w, t  float64
	k     int
	paced bool
	peak  float64
	mean  float64
}

func (r *flashRun) Next() (float64, int32, bool) {
	n := len(r.ids)
	if r.paced {
		if !(r.t < r.w) {
			return 0, 0, false
		}
		t, c := r.t, r.ids[r.k%n]
		r.k++
		r.t += 1000 / flashRate(r.p, t)
		return t, c, true
	}
	for r.t < r.w {
		t := r.t
		keep := r.rng.Float64()*r.peak < flashRate(r.p, t)
		c := r.ids[0]
		if keep && n > 1 {
			c = r.ids[r.rng.IntN(n)]
		}
		r.t += r.rng.ExpFloat64() * r.mean
		if keep {
			return t, c, true
		}
	}
	return 0, 0, false
}

func (r *flashRun) Err() error { return nil }

// newFlashRun starts a flash crowd's run (the part's random stream 0).
func (g *Generator) newFlashRun(p *Part, ids []int32) Run {
	r := &flashRun{p: p, rng: g.Rand(0), ids: ids, w: g.w}
	if p.Arrival == ArrivalUniform || p.Arrival == ArrivalSynchronized {
		r.paced = true
		return r
	}
	r.peak = p.BaseRPS * p.Multiplier
	r.mean = 1000 / r.peak
	r.t = r.rng.ExpFloat64() * r.mean
	return r
}
