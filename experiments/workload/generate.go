package workload

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Generate builds the arrival list of the spec (which must be valid) with the
// run's seed. Parts are generated in order, each as one or more time-sorted
// runs, and merged stably, so ties in time keep generation order.
func Generate(s *Spec, seed uint64) (*Arrivals, error) {
	return GenerateWith(s, seed, nil)
}

// GenerateWith is Generate with the opener of the spec's trace files (nil:
// a trace file part is an error).
func GenerateWith(s *Spec, seed uint64, open TraceOpener) (*Arrivals, error) {
	g := newGenerator(s.DurationMS, seed)
	g.multiply = s.Pacing == PacingMultiplied
	g.open = open
	// Size the list once from the expected count (with room for a random
	// part's excess), so a 10 M-request list is not copied while it grows.
	if n := min(s.Expected(), MaxTraceEvents); n > 0 {
		size := int(n) + int(n)/64 + 1024
		g.t, g.c = make([]float64, 0, size), make([]int32, 0, size)
	}
	for i := range s.Parts {
		p := &s.Parts[i]
		k := p.Kind()
		if k == nil {
			return nil, fmt.Errorf("workload.parts[%d]: unknown part type %q", i, p.Type)
		}
		g.part = i
		if err := k.Generate(g, p); err != nil {
			return nil, fmt.Errorf("workload.parts[%d]: %w", i, err)
		}
	}
	g.merge()
	return &Arrivals{T: g.t, Client: g.c, Clients: g.clients, Groups: g.groups, ClientPart: g.clientPart, GivenServiceMS: g.s}, nil
}

// Generator collects the arrivals of a spec's parts: a part type's Generate
// declares the part's clients, then emits each time-sorted run of arrivals
// after a StartRun. Runs are merged stably at the end, so ties in time keep
// generation order.
type Generator struct {
	w          float64
	seed       uint64
	multiply   bool // pacing by multiplication (PacingMultiplied)
	part       int  // index of the part being generated: its random streams
	t          []float64
	c          []int32
	s          []float64 // given service times (NaN: none); nil until a part gives one
	runs       []int     // start offsets of the runs in t and c
	clients    []Client
	clientPart []int32 // the part that declared each client first
	index      map[string]int32
	groups     []string
	groupIndex map[string]int
	open       TraceOpener
}

func newGenerator(w float64, seed uint64) *Generator {
	return &Generator{w: w, seed: seed, index: map[string]int32{}, groupIndex: map[string]int{}}
}

// WindowMS is the end of the arrival window [0, duration_ms): no arrival is
// emitted at or after it.
func (g *Generator) WindowMS() float64 { return g.w }

// Client declares a client (the first declaration of a name wins; weight 0
// is 1) and returns its index.
func (g *Generator) Client(name, group string, weight float64) int32 {
	if i, ok := g.index[name]; ok {
		return i
	}
	if weight == 0 {
		weight = 1
	}
	gi := -1
	if group != "" {
		var ok bool
		if gi, ok = g.groupIndex[group]; !ok {
			gi = len(g.groups)
			g.groupIndex[group] = gi
			g.groups = append(g.groups, group)
		}
	}
	i := int32(len(g.clients))
	g.clients = append(g.clients, Client{Name: name, Group: group, Weight: weight, group: gi})
	g.clientPart = append(g.clientPart, int32(g.part))
	g.index[name] = i
	return i
}

// PartClients declares the part's clients and returns their indices: its
// one client (p.Client, or DefaultClient), or p.Clients clients named
// "<group>-1".."<group>-N".
func (g *Generator) PartClients(p *Part) []int32 {
	if p.Clients == 0 {
		name := p.Client
		if name == "" {
			name = DefaultClient
		}
		return []int32{g.Client(name, p.Group, p.Weight)}
	}
	ids := make([]int32, p.Clients)
	for k := range ids {
		ids[k] = g.Client(p.Group+"-"+strconv.Itoa(k+1), p.Group, p.Weight)
	}
	return ids
}

// StartRun starts a run: the arrivals emitted until the next StartRun must
// be sorted by time (or sorted with SortRun).
func (g *Generator) StartRun() { g.runs = append(g.runs, len(g.t)) }

// Emit adds an arrival at t ms (in [0, WindowMS)) from client c to the run.
func (g *Generator) Emit(t float64, c int32) {
	g.t = append(g.t, t)
	g.c = append(g.c, c)
	if g.s != nil {
		g.s = append(g.s, math.NaN())
	}
}

// EmitService adds an arrival that gives its own service time (a trace's
// service_ms column; see Arrivals.GivenServiceMS).
func (g *Generator) EmitService(t float64, c int32, serviceMS float64) {
	if g.s == nil {
		g.s = make([]float64, len(g.t), cap(g.t))
		for i := range g.s {
			g.s[i] = math.NaN()
		}
	}
	g.t = append(g.t, t)
	g.c = append(g.c, c)
	g.s = append(g.s, serviceMS)
}

// Rand returns the part's own random stream k, seeded with the run's seed
// and the part's index.
func (g *Generator) Rand(k int) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed, uint64(g.part)<<32|uint64(k)))
}

// Paced emits arrivals from start while t < end by repeated floating addition
// of the spacing (the seed lab's rule: not start + k*spacing), or, under
// the pacing rule PacingMultiplied, at start + k*spacing.
func (g *Generator) Paced(start, end, rateRPS float64, c int32) {
	if rateRPS <= 0 {
		return
	}
	spacing := 1000 / rateRPS
	if g.multiply {
		for k := 0; ; k++ {
			t := start + float64(k)*spacing
			if !(t < end) {
				return
			}
			g.Emit(t, c)
		}
	}
	for t := start; t < end; t += spacing {
		g.Emit(t, c)
	}
}

// Poisson emits a Poisson process of mean rateRPS (more than 0) in
// [start, end) drawn from rng.
func (g *Generator) Poisson(rng *rand.Rand, start, end, rateRPS float64, c int32) {
	mean := 1000 / rateRPS
	for t := start + rng.ExpFloat64()*mean; t < end; t += rng.ExpFloat64() * mean {
		g.Emit(t, c)
	}
}

// SortRun stably sorts the current run (the arrivals since the last
// StartRun) by time: for a part that emits out of order.
func (g *Generator) SortRun() {
	from := 0
	if len(g.runs) > 0 {
		from = g.runs[len(g.runs)-1]
	}
	g.sortTail(from)
}

// sortTail stably sorts the arrivals from index from on by time.
func (g *Generator) sortTail(from int) {
	t, c := g.t[from:], g.c[from:]
	if slices.IsSorted(t) {
		return
	}
	type ev struct {
		t float64
		c int32
		s float64
	}
	evs := make([]ev, len(t))
	for k := range t {
		evs[k] = ev{t: t[k], c: c[k]}
		if g.s != nil {
			evs[k].s = g.s[from+k]
		}
	}
	slices.SortStableFunc(evs, func(a, b ev) int { return cmp.Compare(a.t, b.t) }) // times are never NaN
	for k, e := range evs {
		t[k], c[k] = e.t, e.c
		if g.s != nil {
			g.s[from+k] = e.s
		}
	}
}

// merge combines the sorted runs into one sorted list, bottom-up and stable:
// on equal times the earlier run (generation order) goes first. Each pair of
// runs is merged in place through a buffer the size of the smaller run, so
// a 10 M-request list never needs a second copy of itself.
func (g *Generator) merge() {
	bounds := append(g.runs, len(g.t))
	if len(bounds) <= 2 || slices.IsSorted(g.t) {
		return
	}
	var buf runBuffer
	for runs := len(bounds) - 1; runs > 1; runs = len(bounds) - 1 {
		next := []int{0}
		for k := 0; k < runs; k += 2 {
			hi := bounds[k+1]
			if k+1 < runs {
				hi = bounds[k+2]
				buf.merge(g.t, g.c, g.s, bounds[k], bounds[k+1], hi)
			}
			next = append(next, hi)
		}
		bounds = next
	}
}

// runBuffer holds the smaller of two runs while they are merged.
type runBuffer struct {
	t  []float64
	c  []int32
	sv []float64
}

// merge merges the sorted runs [lo, mid) and [mid, hi) of t and c (and sv,
// the given service times, when not nil) in place, stably: on equal times
// the first run's arrivals go first.
func (b *runBuffer) merge(t []float64, c []int32, sv []float64, lo, mid, hi int) {
	if lo == mid || mid == hi || !(t[mid] < t[mid-1]) {
		return // already in order
	}
	withS := sv != nil
	if mid-lo <= hi-mid {
		// Move the first run out and merge forwards: the write position
		// never passes the second run's read position.
		bt, bc := append(b.t[:0], t[lo:mid]...), append(b.c[:0], c[lo:mid]...)
		b.t, b.c = bt, bc
		var bs []float64
		if withS {
			bs = append(b.sv[:0], sv[lo:mid]...)
			b.sv = bs
		}
		i, j, o := 0, mid, lo
		for i < len(bt) && j < hi {
			if t[j] < bt[i] {
				t[o], c[o] = t[j], c[j]
				if withS {
					sv[o] = sv[j]
				}
				j++
			} else {
				t[o], c[o] = bt[i], bc[i]
				if withS {
					sv[o] = bs[i]
				}
				i++
			}
			o++
		}
		copy(t[o:], bt[i:])
		copy(c[o:], bc[i:])
		if withS {
			copy(sv[o:], bs[i:])
		}
		return
	}
	// Move the second run out and merge backwards from hi.
	bt, bc := append(b.t[:0], t[mid:hi]...), append(b.c[:0], c[mid:hi]...)
	b.t, b.c = bt, bc
	var bs []float64
	if withS {
		bs = append(b.sv[:0], sv[mid:hi]...)
		b.sv = bs
	}
	i, j, o := mid-1, len(bt)-1, hi-1
	for i >= lo && j >= 0 {
		if t[i] > bt[j] {
			t[o], c[o] = t[i], c[i]
			if withS {
				sv[o] = sv[i]
			}
			i--
		} else { // ties: the second run's arrival goes last
			t[o], c[o] = bt[j], bc[j]
			if withS {
				sv[o] = bs[j]
			}
			j--
		}
		o--
	}
	copy(t[lo:], bt[:j+1])
	copy(c[lo:], bc[:j+1])
	if withS {
		copy(sv[lo:], bs[:j+1])
	}
}

// ClientTable lists the clients a valid spec declares, in the order Generate
// numbers them, without generating arrivals (trace parts are parsed for
// their client names).
func (s *Spec) ClientTable() []Client {
	g := newGenerator(s.DurationMS, 0)
	for i := range s.Parts {
		g.declare(i, &s.Parts[i])
	}
	return g.clients
}

// declare declares the clients of part i, p, as Generate does.
func (g *Generator) declare(i int, p *Part) {
	g.part = i
	if k := p.Kind(); k != nil && k.DeclareClients != nil {
		k.DeclareClients(g, p)
	} else {
		g.PartClients(p)
	}
}
