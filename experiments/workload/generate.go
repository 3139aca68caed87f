package workload

import (
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
	g := generator{w: s.DurationMS, seed: seed, index: map[string]int32{}, groupIndex: map[string]int{}}
	// Size the list once from the expected count (with room for a random
	// part's excess), so a 10 M-request list is not copied while it grows.
	if n := min(s.Expected(), MaxTraceEvents); n > 0 {
		size := int(n) + int(n)/64 + 1024
		g.t, g.c = make([]float64, 0, size), make([]int32, 0, size)
	}
	for i := range s.Parts {
		if err := g.part(i, &s.Parts[i]); err != nil {
			return nil, fmt.Errorf("workload.parts[%d]: %w", i, err)
		}
	}
	g.merge()
	return &Arrivals{T: g.t, Client: g.c, Clients: g.clients, Groups: g.groups}, nil
}

type generator struct {
	w          float64
	seed       uint64
	t          []float64
	c          []int32
	runs       []int // start offsets of the runs in t and c
	clients    []Client
	index      map[string]int32
	groups     []string
	groupIndex map[string]int
}

// client registers name (first declaration wins) and returns its index.
func (g *generator) client(name, group string, weight float64) int32 {
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
	g.index[name] = i
	return i
}

// partClients returns the indices of the part's clients.
func (g *generator) partClients(p *Part) []int32 {
	if p.Clients == 0 {
		name := p.Client
		if name == "" {
			name = DefaultClient
		}
		return []int32{g.client(name, p.Group, p.Weight)}
	}
	ids := make([]int32, p.Clients)
	for k := range ids {
		ids[k] = g.client(p.Group+"-"+strconv.Itoa(k+1), p.Group, p.Weight)
	}
	return ids
}

func (g *generator) startRun() { g.runs = append(g.runs, len(g.t)) }

func (g *generator) emit(t float64, c int32) {
	g.t = append(g.t, t)
	g.c = append(g.c, c)
}

// rng returns the part's own random stream for stream k.
func (g *generator) rng(part, k int) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed, uint64(part)<<32|uint64(k)))
}

// paced emits arrivals from start while t < end by repeated floating addition
// of the spacing (the seed lab's rule: not start + k*spacing).
func (g *generator) paced(start, end, rateRPS float64, c int32) {
	if rateRPS <= 0 {
		return
	}
	spacing := 1000 / rateRPS
	for t := start; t < end; t += spacing {
		g.emit(t, c)
	}
}

func (g *generator) poisson(rng *rand.Rand, start, end, rateRPS float64, c int32) {
	mean := 1000 / rateRPS
	for t := start + rng.ExpFloat64()*mean; t < end; t += rng.ExpFloat64() * mean {
		g.emit(t, c)
	}
}

func (g *generator) part(i int, p *Part) error {
	start, end := p.span(g.w)
	switch p.Type {
	case DemandCurve:
		c := g.partClients(p)[0]
		g.startRun()
		for s := 0.0; s < g.w; {
			for _, sg := range p.Segments {
				g.paced(s, math.Min(s+sg.DurationMS, g.w), sg.RateRPS, c)
				if s += sg.DurationMS; s >= g.w {
					break
				}
			}
		}
	case Constant:
		c := g.partClients(p)[0]
		g.startRun()
		g.paced(start, end, p.RateRPS, c)
	case Poisson:
		c := g.partClients(p)[0]
		g.startRun()
		g.poisson(g.rng(i, 0), start, end, p.RateRPS, c)
	case Clients:
		ids := g.partClients(p)
		spacing := 1000 / p.RateRPS
		for k, c := range ids {
			g.startRun()
			switch p.Arrival {
			case PoissonArr:
				g.poisson(g.rng(i, k), start, end, p.RateRPS, c)
			case Synchronized:
				g.paced(start, end, p.RateRPS, c)
			default: // uniform: clients evenly out of phase
				g.paced(start+float64(k)*spacing/float64(len(ids)), end, p.RateRPS, c)
			}
		}
	case Bursts:
		ids := g.partClients(p)
		g.startRun()
		from := len(g.t)
		for _, b := range p.Bursts {
			for j := 0; j < b.Count; j++ {
				t := b.AtMS
				if b.SpreadMS > 0 {
					t += float64(j) * b.SpreadMS / float64(b.Count)
				}
				if t < g.w {
					g.emit(t, ids[j%len(ids)])
				}
			}
		}
		g.sortTail(from)
	case FlashCrowd:
		ids := g.partClients(p)
		g.startRun()
		g.flashCrowd(i, p, ids)
	case Trace:
		events, err := ParseTrace(p.CSV)
		if err != nil {
			return fmt.Errorf("csv: %w", err)
		}
		g.startRun()
		from := len(g.t)
		for _, e := range events {
			if e.T >= g.w {
				return fmt.Errorf("csv: line %d: t_ms %g is at or after the end of the run (duration_ms %g)", e.Line, e.T, g.w)
			}
			name := e.Client
			if name == "" {
				name = DefaultClient
			}
			g.emit(e.T, g.client(name, p.Group, p.Weight))
		}
		g.sortTail(from)
	default:
		return fmt.Errorf("unknown part type %q", p.Type)
	}
	return nil
}

// rate of a flash crowd at t: base outside [start, start+duration), the
// multiplied rate inside, with linear ramps of ramp_ms at both ends.
func flashRate(p *Part, t float64) float64 {
	peak := p.BaseRPS * p.Multiplier
	s, e := p.StartMS, p.StartMS+p.DurationMS
	switch {
	case t < s || t >= e:
		return p.BaseRPS
	case p.RampMS > 0 && t < s+p.RampMS:
		return p.BaseRPS + (peak-p.BaseRPS)*(t-s)/p.RampMS
	case p.RampMS > 0 && t >= e-p.RampMS:
		return p.BaseRPS + (peak-p.BaseRPS)*(e-t)/p.RampMS
	}
	return peak
}

// flashCrowd draws a non-homogeneous process: Poisson by thinning at the
// peak rate (default), or paced at the instantaneous rate (uniform).
func (g *generator) flashCrowd(i int, p *Part, ids []int32) {
	rng := g.rng(i, 0)
	n := len(ids)
	if p.Arrival == Uniform || p.Arrival == Synchronized {
		k := 0
		for t := 0.0; t < g.w; t += 1000 / flashRate(p, t) {
			g.emit(t, ids[k%n])
			k++
		}
		return
	}
	peak := p.BaseRPS * p.Multiplier
	mean := 1000 / peak
	for t := rng.ExpFloat64() * mean; t < g.w; t += rng.ExpFloat64() * mean {
		if rng.Float64()*peak < flashRate(p, t) {
			c := ids[0]
			if n > 1 {
				c = ids[rng.IntN(n)]
			}
			g.emit(t, c)
		}
	}
}

// sortTail stably sorts the arrivals from index from on by time.
func (g *generator) sortTail(from int) {
	t, c := g.t[from:], g.c[from:]
	if slices.IsSorted(t) {
		return
	}
	type ev struct {
		t float64
		c int32
	}
	evs := make([]ev, len(t))
	for k := range t {
		evs[k] = ev{t[k], c[k]}
	}
	slices.SortStableFunc(evs, func(a, b ev) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	for k, e := range evs {
		t[k], c[k] = e.t, e.c
	}
}

// merge combines the sorted runs into one sorted list, bottom-up and stable:
// on equal times the earlier run (generation order) goes first. Each pair of
// runs is merged in place through a buffer the size of the smaller run, so
// a 10 M-request list never needs a second copy of itself.
func (g *generator) merge() {
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
				buf.merge(g.t, g.c, bounds[k], bounds[k+1], hi)
			}
			next = append(next, hi)
		}
		bounds = next
	}
}

// runBuffer holds the smaller of two runs while they are merged.
type runBuffer struct {
	t []float64
	c []int32
}

// merge merges the sorted runs [lo, mid) and [mid, hi) of t and c in place,
// stably: on equal times the first run's arrivals go first.
func (b *runBuffer) merge(t []float64, c []int32, lo, mid, hi int) {
	if lo == mid || mid == hi || !(t[mid] < t[mid-1]) {
		return // already in order
	}
	if mid-lo <= hi-mid {
		// Move the first run out and merge forwards: the write position
		// never passes the second run's read position.
		bt, bc := append(b.t[:0], t[lo:mid]...), append(b.c[:0], c[lo:mid]...)
		b.t, b.c = bt, bc
		i, j, o := 0, mid, lo
		for i < len(bt) && j < hi {
			if t[j] < bt[i] {
				t[o], c[o] = t[j], c[j]
				j++
			} else {
				t[o], c[o] = bt[i], bc[i]
				i++
			}
			o++
		}
		copy(t[o:], bt[i:])
		copy(c[o:], bc[i:])
		return
	}
	// Move the second run out and merge backwards from hi.
	bt, bc := append(b.t[:0], t[mid:hi]...), append(b.c[:0], c[mid:hi]...)
	b.t, b.c = bt, bc
	i, j, o := mid-1, len(bt)-1, hi-1
	for i >= lo && j >= 0 {
		if t[i] > bt[j] {
			t[o], c[o] = t[i], c[i]
			i--
		} else { // ties: the second run's arrival goes last
			t[o], c[o] = bt[j], bc[j]
			j--
		}
		o--
	}
	copy(t[lo:], bt[:j+1])
	copy(c[lo:], bc[:j+1])
}

// ClientTable lists the clients a valid spec declares, in the order Generate
// numbers them, without generating arrivals (trace parts are parsed for
// their client names).
func (s *Spec) ClientTable() []Client {
	g := generator{w: s.DurationMS, index: map[string]int32{}, groupIndex: map[string]int{}}
	for i := range s.Parts {
		p := &s.Parts[i]
		if p.Type != Trace {
			g.partClients(p)
			continue
		}
		events, err := ParseTrace(p.CSV)
		if err != nil {
			continue // reported by Validate
		}
		for _, e := range events {
			name := e.Client
			if name == "" {
				name = DefaultClient
			}
			g.client(name, p.Group, p.Weight)
		}
	}
	return g.clients
}
