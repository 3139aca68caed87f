package limiter_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// replicated is a spec of n instances of typ with the given balancer and
// sharing, normalized.
func replicated(typ limiter.Type, n float64, balancer, sharing string, params limiter.Params) *limiter.Spec {
	s := &limiter.Spec{Type: typ}
	for name, v := range params {
		s.SetValues(name, limiter.Values{v})
	}
	s.SetValues(limiter.ParamInstances, limiter.Values{n})
	s.SetOption(limiter.OptionBalancer, balancer)
	s.SetOption(limiter.OptionSharing, sharing)
	s.Normalize()
	return s
}

// Local instances behind round robin admit at most N·(b + r·w) in any
// closed window of w: each instance is a token bucket on what it sees.
// With one shared bucket's bound (b + r·w) the same arrivals fail.
func TestLocalRoundRobinAdmitsAtMostNBuckets(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(29, 1))
	runs := 200
	if testing.Short() {
		runs = 40
	}
	exceededOne := false
	for run := range runs {
		n := 1 + rng.IntN(5)
		b := float64(1 + rng.IntN(10))
		r := 1 + rng.Float64()*50
		s := replicated(limiter.TypeTokenBucket, float64(n), limiter.BalancerRoundRobin, limiter.SharingLocal, limiter.Params{limiter.ParamRate: r, limiter.ParamBurst: b})
		p := s.Points()[0]
		g, err := limiter.New(s, p, []float64{1, 1, 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var admitted []float64
		tm := 0.0
		for range 2000 {
			tm += rng.ExpFloat64() * 1000 / (r * float64(n) * (1 + 3*rng.Float64()))
			if _, ok := g.Offer(tm, int32(rng.IntN(3))); ok {
				admitted = append(admitted, tm)
			}
		}
		for _, w := range []float64{0, 10, 100, 1000, 5000} {
			most := mostInWindow(admitted, w)
			if bound := float64(n) * (b + r*w/1000); float64(most) > bound+1e-9 {
				t.Fatalf("run %d: %d instances of (r %g, b %g) admitted %d in a window of %g ms, above N·(b + r·w) = %g", run, n, r, b, most, w, bound)
			}
			if n > 1 && float64(most) > b+r*w/1000 {
				exceededOne = true
			}
		}
	}
	if !exceededOne {
		t.Fatal("no run's instances admitted more than one bucket would: the bound is never tested")
	}
}

// mostInWindow is the most times of ts (sorted) in any closed window of w.
func mostInWindow(ts []float64, w float64) int {
	most, j := 0, 0
	for i := range ts {
		for ts[i]-ts[j] > w {
			j++
		}
		most = max(most, i-j+1)
	}
	return most
}

// The balancers: round robin in turn, random from its seed (the same
// seed the same routes), hash by client, least-inflight to the emptiest.
func TestBalancersRoute(t *testing.T) {
	t.Parallel()
	tb := limiter.Params{limiter.ParamRate: 1000, limiter.ParamBurst: 1000}
	route := func(balancer string, seed float64, clients []int32) []int {
		s := replicated(limiter.TypeTokenBucket, 3, balancer, limiter.SharingLocal, tb)
		if seed != 0 {
			s.SetValues(limiter.ParamBalancerSeed, limiter.Values{seed})
		}
		g, err := limiter.New(s, s.Points()[0], make([]float64, 8), nil)
		if err != nil {
			t.Fatal(err)
		}
		r := g.(limiter.Replicated)
		var out []int
		for k, c := range clients {
			i := r.Route(float64(k), c)
			r.OfferTo(i, float64(k), c)
			out = append(out, i)
		}
		return out
	}
	clients := []int32{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3}
	if got := route(limiter.BalancerRoundRobin, 0, clients); !slices.Equal(got, []int{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}) {
		t.Errorf("round robin routes %v", got)
	}
	a, b, c := route(limiter.BalancerRandom, 1, clients), route(limiter.BalancerRandom, 1, clients), route(limiter.BalancerRandom, 2, clients)
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Errorf("random: seed 1 routes %v then %v, seed 2 %v: want the same seed the same routes, another seed others", a, b, c)
	}
	h := route(limiter.BalancerHash, 0, clients)
	ring := limiter.HashRing(3, 8)
	for k, c := range clients {
		if h[k] != int(ring[c]) {
			t.Fatalf("hash: request %d of client %d went to %d, its key's instance is %d", k, c, h[k], ring[c])
		}
	}
	// least-inflight, nothing completing: every instance takes one in turn
	// (ties from the instance after the last chosen), as round robin.
	if got := route(limiter.BalancerLeastInflight, 0, clients); !slices.Equal(got, []int{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}) {
		t.Errorf("least-inflight routes %v", got)
	}
}

// Least-inflight sends a request to the instance with the fewest
// admitted requests in flight: completions make room.
func TestLeastInflightHearsCompletions(t *testing.T) {
	t.Parallel()
	s := replicated(limiter.TypeTokenBucket, 3, limiter.BalancerLeastInflight, limiter.SharingLocal, limiter.Params{limiter.ParamRate: 1000, limiter.ParamBurst: 1000})
	g, err := limiter.New(s, s.Points()[0], []float64{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, o := g.(limiter.Replicated), g.(limiter.Observer)
	for k := range 3 { // one in flight at each
		r.OfferTo(r.Route(0, 0), float64(k), 0)
	}
	o.Complete(limiter.Completion{Instance: 1, DoneMS: 3})
	if i := r.Route(4, 0); i != 1 {
		t.Fatalf("after instance 1's request completed, the next went to %d", i)
	}
	if r.State(0) != 1 || r.State(1) != 0 {
		t.Fatalf("in flight: %g, %g, %g; want 1, 0, 1", r.State(0), r.State(1), r.State(2))
	}
}

// Consistent hashing: when a fourth instance joins, a client either
// keeps its instance or moves to the new one, and about a quarter move.
func TestHashRingMovesOnlyToTheNewInstance(t *testing.T) {
	t.Parallel()
	const clients = 4000
	three, four := limiter.HashRing(3, clients), limiter.HashRing(4, clients)
	moved := 0
	for c := range clients {
		if three[c] != four[c] {
			moved++
			if four[c] != 3 {
				t.Fatalf("client %d moved from %d to %d, not to the new instance 3", c, three[c], four[c])
			}
		}
	}
	if share := float64(moved) / clients; share < 0.15 || share > 0.35 {
		t.Fatalf("%.1f%% of the clients moved, want about 25%%", 100*share)
	}
}

// Divided: rates divide as floats, counts round down to at least 1, waits
// stay; the note names what rounded.
func TestDivide(t *testing.T) {
	t.Parallel()
	k, _ := limiter.Lookup(limiter.TypeXTimeRate)
	out, rounded := limiter.Divide(k, limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 10, "max_wait_ms": 50, limiter.ParamInstances: 3}, 3)
	if out[limiter.ParamRate] != 10.0/3 || out[limiter.ParamBurst] != 3 || out["max_wait_ms"] != 50 || !slices.Equal(rounded, []string{limiter.ParamBurst}) {
		t.Fatalf("divided by 3: %v, rounded %v", out, rounded)
	}
	out, _ = limiter.Divide(k, limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 1}, 3)
	if out[limiter.ParamBurst] != 1 {
		t.Fatalf("burst 1 divided by 3 is %g, want 1 (at least one)", out[limiter.ParamBurst])
	}
	s := replicated(limiter.TypeXTimeRate, 3, limiter.BalancerRoundRobin, limiter.SharingDivided, limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 10})
	if note := limiter.DivideNote(s, s.Points()[0]); !strings.Contains(note, "burst 10 → 3") {
		t.Fatalf("note %q", note)
	}
}

// instances is swept like a parameter: points, the swept name, the
// setting's name; balancer and sharing are the spec's options.
func TestInstancesSweep(t *testing.T) {
	t.Parallel()
	s := replicated(limiter.TypeTokenBucket, 1, limiter.BalancerHash, limiter.SharingLocal, limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 5})
	s.SetValues(limiter.ParamInstances, limiter.Values{1, 2, 4})
	if s.Count() != 3 || s.Swept() != limiter.ParamInstances {
		t.Fatalf("count %d swept %q", s.Count(), s.Swept())
	}
	pts := s.Points()
	if got := limiter.FormatParams(s.Type, pts[2]); got != "rate_rps=10 burst=5 instances=4" {
		t.Fatalf("setting %q", got)
	}
	b, _ := s.MarshalJSON()
	if got := string(b); got != `{"type":"token-bucket","rate_rps":[10],"burst":[5],"instances":[1,2,4],"balancer":"hash","sharing":"local"}` {
		t.Fatalf("document %s", got)
	}
}

// Validation names the field: instances of a shaper, a balancer without
// instances, a seed for another balancer.
func TestInstancesValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec *limiter.Spec
		want string
	}{
		{replicated(limiter.TypeLeakyBucket, 2, limiter.BalancerRoundRobin, limiter.SharingLocal, limiter.Params{limiter.ParamRate: 10, limiter.ParamQueue: 5}), "l.instances: leaky-bucket cannot run as instances"},
		{&limiter.Spec{Type: limiter.TypeTokenBucket, Params: map[string]limiter.Values{limiter.ParamRate: {1}, limiter.ParamBurst: {1}}, Options: map[string]string{limiter.OptionBalancer: "hash"}}, "l.balancer: needs instances"},
		{replicated(limiter.TypeTokenBucket, 0, limiter.BalancerRoundRobin, limiter.SharingLocal, limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 5}), "l.instances: must be at least 1"},
		{replicated(limiter.TypeTokenBucket, 2, "sticky", limiter.SharingLocal, limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 5}), `l.balancer: must be one of "round-robin"`},
	} {
		errs := c.spec.Validate("l")
		if !strings.Contains(errs.Error(), c.want) {
			t.Errorf("%v: errors %q, want %q", c.spec, errs.Error(), c.want)
		}
	}
}

// A scaling event: from scale_at_ms the balancer sends requests to the
// first scale_to instances; the new ones start fresh, the others keep
// their state; the hash ring moves only the changed arcs.
func TestScalingEvent(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		balancer string
		n, to    float64
		want     []int // the instances of requests at 0..5 ms, the event at 3
	}{
		{limiter.BalancerRoundRobin, 3, 1, []int{0, 1, 2, 0, 0, 0}},
		{limiter.BalancerRoundRobin, 2, 4, []int{0, 1, 0, 1, 2, 3}},
		{limiter.BalancerLeastInflight, 2, 3, []int{0, 1, 0, 2, 1, 2}}, // the fewest in flight, ties from the one after the last
	} {
		s := replicated(limiter.TypeTokenBucket, c.n, c.balancer, limiter.SharingLocal, limiter.Params{limiter.ParamRate: 1000, limiter.ParamBurst: 1000})
		s.SetValues(limiter.ParamScaleAt, limiter.Values{3})
		s.SetValues(limiter.ParamScaleTo, limiter.Values{c.to})
		g, err := limiter.New(s, s.Points()[0], []float64{1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := g.(limiter.Replicated)
		if r.Instances() != int(max(c.n, c.to)) {
			t.Fatalf("%d instances, want %g", r.Instances(), max(c.n, c.to))
		}
		var got []int
		for k := range 6 {
			i := r.Route(float64(k), 0)
			r.OfferTo(i, float64(k), 0)
			got = append(got, i)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %g → %g at 3 ms: routes %v, want %v", c.balancer, c.n, c.to, got, c.want)
		}
	}
}
