package server_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ratelab/ratelab/experiments/server"
)

// outcome is what a queue server did with one request.
type outcome struct {
	id            int32
	served        bool
	start, finish float64
	at            float64
	why           server.Why
}

type recorder struct{ out []outcome }

func (r *recorder) Served(id int32, _, start, finish float64) {
	r.out = append(r.out, outcome{id: id, served: true, start: start, finish: finish})
}

func (r *recorder) Shed(id int32, at float64, why server.Why) {
	r.out = append(r.out, outcome{id: id, at: at, why: why})
}

func (r *recorder) of(id int32) outcome {
	for _, o := range r.out {
		if o.id == id {
			return o
		}
	}
	panic(fmt.Sprintf("no outcome for %d", id))
}

// TestQueueDefaultsServeAsServer: with every setting at its default the
// queue model starts and finishes each request as Server does, and counts
// the same requests in the system.
func TestQueueDefaultsServeAsServer(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for trial := range 300 {
		workers := 1 + trial%4
		spec := server.Spec{Workers: workers, ServiceMS: 0.5 + r.Float64()*20, DeadlineMS: 200}
		if trial%2 == 0 {
			spec.ServiceMS = float64(1 + r.IntN(20)) // releases tie with finishes
		}
		plain := server.New(spec)
		rec := &recorder{}
		q := server.NewQueue(spec, 1e9, 0, rec)
		t0 := 0.0
		want := map[int32][2]float64{}
		for i := range 200 {
			if r.IntN(3) > 0 {
				t0 += r.ExpFloat64() * spec.ServiceMS / float64(workers) * 0.9
			}
			if r.IntN(10) == 0 {
				t0 = math.Ceil(t0) // ties with finishes
			}
			if got, w := q.InSystem(t0), plain.InSystem(t0); got != w {
				t.Fatalf("trial %d request %d at %g: in system %d, want %d", trial, i, t0, got, w)
			}
			start, finish := plain.Serve(t0)
			want[int32(i)] = [2]float64{start, finish}
			if !q.Offer(int32(i), 0, t0, t0) {
				t.Fatalf("open door shed a request")
			}
		}
		q.Finish()
		if len(rec.out) != len(want) {
			t.Fatalf("trial %d: %d outcomes for %d requests", trial, len(rec.out), len(want))
		}
		last := 0.0
		for _, o := range rec.out {
			if !o.served || o.start != want[o.id][0] || o.finish != want[o.id][1] {
				t.Fatalf("trial %d (%d workers, %g ms): request %d %+v, want start %g finish %g", trial, workers, spec.ServiceMS, o.id, o, want[o.id][0], want[o.id][1])
			}
			if o.finish < last {
				t.Fatalf("finishes out of order")
			}
			last = o.finish
		}
	}
}

func TestQueueSettings(t *testing.T) {
	type req struct {
		t     float64
		class uint8
	}
	cases := []struct {
		name    string
		spec    server.Spec
		classes int
		reqs    []req
		check   func(t *testing.T, r *recorder)
	}{
		{"lifo serves the newest waiting request", server.Spec{Discipline: server.LIFO},
			0, []req{{0, 0}, {1, 0}, {2, 0}, {3, 0}},
			func(t *testing.T, r *recorder) {
				// 0 from 0; at 10 the newest (3), then 2, then 1.
				for id, start := range map[int32]float64{0: 0, 3: 10, 2: 20, 1: 30} {
					if o := r.of(id); o.start != start {
						t.Errorf("request %d starts at %g, want %g", id, o.start, start)
					}
				}
			}},
		{"tail-drop counts the request in service", server.Spec{Door: server.DoorTailDrop, Bound: 2},
			0, []req{{0, 0}, {1, 0}, {2, 0}, {10, 0}, {10, 0}},
			func(t *testing.T, r *recorder) {
				// At 2: one in service, one waiting: full. At 10 the first
				// finishes (idle at 10, one waiting): 3 enters, 4 is shed.
				if o := r.of(2); o.served || o.why != server.ShedDoor || o.at != 2 {
					t.Errorf("request 2: %+v, want shed at the door at 2", o)
				}
				if o := r.of(3); !o.served {
					t.Errorf("request 3: %+v, want served (a release exactly at a finish sees the worker idle)", o)
				}
				if o := r.of(4); o.served || o.why != server.ShedDoor {
					t.Errorf("request 4: %+v, want shed at the door", o)
				}
			}},
		{"expire discards at dequeue without using the worker", server.Spec{Expire: server.ExpireAtDequeue, DeadlineMS: 25},
			0, []req{{0, 0}, {0, 0}, {0, 0}, {0, 0}},
			func(t *testing.T, r *recorder) {
				// 0 at 0, 1 at 10 (wait 10 + 10 <= 25), 2 at 20: 20 + 10 > 25:
				// discarded at 20, and 3 too at 20; nothing else runs.
				if o := r.of(1); !o.served || o.start != 10 {
					t.Errorf("request 1: %+v", o)
				}
				for _, id := range []int32{2, 3} {
					if o := r.of(id); o.served || o.why != server.ShedExpired || o.at != 20 {
						t.Errorf("request %d: %+v, want expired at 20", id, o)
					}
				}
			}},
		{"end cut: no service starts at or after the end", server.Spec{End: server.EndCut},
			0, []req{{90, 0}, {90, 0}, {95, 0}, {99, 0}},
			func(t *testing.T, r *recorder) {
				// Window 100: 0 at 90, 1 at 100 >= end: shed at 100 with the rest.
				if o := r.of(0); !o.served || o.finish != 100 {
					t.Errorf("request 0: %+v", o)
				}
				for _, id := range []int32{1, 2, 3} {
					if o := r.of(id); o.served || o.why != server.ShedEnd || o.at != 100 {
						t.Errorf("request %d: %+v, want shed at the end (100)", id, o)
					}
				}
			}},
		{"priority: a critical request evicts the newest waiting background one", server.Spec{Door: server.DoorPriority, Bound: 3},
			2, []req{{0, 1}, {1, 1}, {2, 0}, {3, 1}, {4, 0}, {5, 0}, {6, 0}},
			func(t *testing.T, r *recorder) {
				// In the system at 3: 0 (service), 1 (bg), 2 (crit): full; 3
				// (bg) is shed. At 4, critical 4 evicts 1, the newest
				// background; at 5 and 6 no background waits: shed.
				if o := r.of(3); o.served || o.why != server.ShedDoor {
					t.Errorf("request 3: %+v, want shed at the door", o)
				}
				if o := r.of(1); o.served || o.why != server.ShedEvicted || o.at != 4 {
					t.Errorf("request 1: %+v, want evicted at 4", o)
				}
				for _, id := range []int32{5, 6} {
					if o := r.of(id); o.served || o.why != server.ShedDoor {
						t.Errorf("request %d: %+v, want shed at the door", id, o)
					}
				}
				// Served in order: 0, 2, 4 (the critical joins the back).
				var order []int32
				for _, o := range r.out {
					if o.served {
						order = append(order, o.id)
					}
				}
				if !slices.Equal(order, []int32{0, 2, 4}) {
					t.Errorf("served %v, want [0 2 4]", order)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := c.spec
			spec.Workers, spec.ServiceMS = 1, 10
			if spec.DeadlineMS == 0 {
				spec.DeadlineMS = 200
			}
			if errs := spec.Validate(""); len(errs) > 0 {
				t.Fatal(errs)
			}
			rec := &recorder{}
			q := server.NewQueue(spec, 100, c.classes, rec)
			for i, r := range c.reqs {
				q.Offer(int32(i), r.class, r.t, r.t)
			}
			q.Finish()
			if len(rec.out) != len(c.reqs) {
				t.Fatalf("%d outcomes for %d requests: %+v", len(rec.out), len(c.reqs), rec.out)
			}
			c.check(t, rec)
		})
	}
}

// Post 4's invariants at the server: fifo and lifo shed only at the end of
// the window (with wait W - a), a door shed waits 0, expire never serves a
// late request, a tail-drop bound of capacity × deadline never serves one.
func TestQueueSheddingInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const W = 3000.0
	for trial := range 200 {
		var ts []float64
		for t0 := 0.0; t0 < W; t0 += r.ExpFloat64() * 6 {
			ts = append(ts, t0)
		}
		for _, v := range []server.Spec{
			{End: server.EndCut},
			{End: server.EndCut, Discipline: server.LIFO},
			{End: server.EndCut, Door: server.DoorTailDrop},
			{End: server.EndCut, Expire: server.ExpireAtDequeue},
		} {
			v.Workers, v.ServiceMS, v.DeadlineMS = 1, 10, 200
			rec := &recorder{}
			q := server.NewQueue(v, W, 0, rec)
			for i, t0 := range ts {
				q.Offer(int32(i), 0, t0, t0)
			}
			q.Finish()
			if len(rec.out) != len(ts) {
				t.Fatalf("trial %d %+v: %d outcomes for %d arrivals", trial, v, len(rec.out), len(ts))
			}
			for _, o := range rec.out {
				a := ts[o.id]
				switch {
				case o.served && o.start >= W:
					t.Fatalf("%+v: service started at %g >= W", v, o.start)
				case o.served && (v.Door != "" || v.Expire != "") && math.Round(o.finish-a) > 200:
					t.Fatalf("%+v: served late (%g ms)", v, o.finish-a)
				case !o.served && v.Door == "" && v.Expire == "" && (o.why != server.ShedEnd || o.at != W):
					t.Fatalf("%+v: shed %+v, want only at the end", v, o)
				case !o.served && o.why == server.ShedDoor && o.at != a:
					t.Fatalf("%+v: door shed at %g of an arrival at %g", v, o.at, a)
				}
			}
		}
	}
}

func TestOptions(t *testing.T) {
	for _, o := range server.Options() {
		var empty server.Spec
		if got := empty.Option(o.Name); got != o.Choices[0].Name {
			t.Errorf("%s defaults to %q, want its first choice %q", o.Name, got, o.Choices[0].Name)
		}
		for _, c := range o.Choices {
			if c.Doc == "" {
				t.Errorf("%s %s has no doc", o.Name, c.Name)
			}
		}
	}
	base := server.Spec{Workers: 1, ServiceMS: 10, DeadlineMS: 200, End: server.EndCut}
	if !(&server.Spec{Workers: 1}).Classic() || (&base).Classic() {
		t.Error("Classic: the plain server only")
	}
	v := base.Override(server.Spec{Door: server.DoorTailDrop, DeadlineMS: 250})
	if v.Door != server.DoorTailDrop || v.DeadlineMS != 250 || v.End != server.EndCut || v.ServiceMS != 10 {
		t.Errorf("Override: %+v", v)
	}
	// capacity × deadline, rounded half up: 100 rps × 0.2 s; 1000/30 × 0.215 = 7.1666.. → 7; 2 × 1000/8 × 0.006 = 1.5 → 2.
	for _, c := range []struct {
		s    server.Spec
		want int
	}{
		{server.Spec{Workers: 1, ServiceMS: 10, DeadlineMS: 200}, 20},
		{server.Spec{Workers: 1, ServiceMS: 30, DeadlineMS: 215}, 7},
		{server.Spec{Workers: 2, ServiceMS: 8, DeadlineMS: 6}, 2},
		{server.Spec{Workers: 1, ServiceMS: 10, DeadlineMS: 200, Bound: 5}, 5},
	} {
		if got := c.s.DoorBound(); got != c.want {
			t.Errorf("DoorBound(%+v) = %d, want %d", c.s, got, c.want)
		}
	}
	for _, c := range []struct {
		s    server.Spec
		path string
	}{
		{server.Spec{Workers: 1, ServiceMS: 10, DeadlineMS: 200, Door: "closed"}, "s.door"},
		{server.Spec{Workers: 1, ServiceMS: 10, DeadlineMS: 200, Bound: 4}, "s.bound"},
		{server.Spec{Workers: 2, ServiceMS: 10, DeadlineMS: 200, Occupancy: server.OccupancyBusyCeil}, "s.occupancy"},
		{server.Spec{Workers: 1, ServiceMS: 10, DeadlineMS: 200, Occupancy: server.OccupancyBusyCeil, Discipline: server.LIFO}, "s.occupancy"},
	} {
		errs := c.s.Validate("s")
		if len(errs) != 1 || errs[0].Path != c.path {
			t.Errorf("%+v: %v, want one error at %s", c.s, errs, c.path)
		}
	}
}

// TestBusyCeil: the seed lab's in-system formula, ceil((busyUntil - t)/S) in
// float64, beside the exact count.
func TestBusyCeil(t *testing.T) {
	seed := server.New(server.Spec{Workers: 1, ServiceMS: 10, Occupancy: server.OccupancyBusyCeil})
	exact := server.New(server.Spec{Workers: 1, ServiceMS: 10})
	for _, s := range []*server.Server{seed, exact} {
		s.Serve(0)
		s.Serve(0)
		s.Serve(0) // busy until 30
	}
	for _, c := range []struct {
		t    float64
		want int
	}{{0, 3}, {5, 3}, {10, 2}, {29.9, 1}, {30, 0}} {
		if got, ex := seed.InSystem(c.t), exact.InSystem(c.t); got != c.want || ex != c.want {
			t.Errorf("at %g: busy-ceil %d, count %d, want %d", c.t, got, ex, c.want)
		}
	}
	// A fractional service: 3 × 0.1 finishes at 0.30000000000000004, and
	// (0.30000000000000004 - 0.1) / 0.1 = 2.0000000000000004: ceil 3 while
	// 2 requests (finishing at 0.2 and 0.3...) are in the system.
	f := server.New(server.Spec{Workers: 1, ServiceMS: 0.1, Occupancy: server.OccupancyBusyCeil})
	g := server.New(server.Spec{Workers: 1, ServiceMS: 0.1})
	for _, s := range []*server.Server{f, g} {
		s.Serve(0)
		s.Serve(0)
		s.Serve(0)
	}
	if a, b := f.InSystem(0.1), g.InSystem(0.1); a != 3 || b != 2 {
		t.Errorf("busy-ceil %d, count %d; want 3 and 2", a, b)
	}
}

// TestQueuePickOneAtATime: making the picks one at a time (NextPickMS,
// Pick) before each release gives the outcomes that releases alone give,
// under every discipline, door and expiry, with the end cut or not; and
// CutEnd sheds at the end what Finish would.
func TestQueuePickOneAtATime(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for trial := range 300 {
		spec := server.Spec{Workers: 1 + r.IntN(3), ServiceMS: float64(1 + r.IntN(10)), DeadlineMS: float64(10 + r.IntN(60))}
		spec.Discipline = []string{server.FIFO, server.LIFO}[r.IntN(2)]
		spec.Door = []string{server.DoorOpen, server.DoorTailDrop, server.DoorPriority}[r.IntN(3)]
		spec.Expire = []string{server.ExpireNever, server.ExpireAtDequeue}[r.IntN(2)]
		spec.End = []string{server.EndDrain, server.EndCut}[r.IntN(2)]
		spec.Normalize()
		const endMS = 300
		var a, b recorder
		qa, qb := server.NewQueue(spec, endMS, 3, &a), server.NewQueue(spec, endMS, 3, &b)
		t0 := 0.0
		for i := range 120 {
			t0 += r.ExpFloat64() * spec.ServiceMS / float64(spec.Workers) * 0.7
			if r.IntN(4) == 0 {
				t0 = math.Ceil(t0) // ties with picks
			}
			cls := uint8(r.IntN(3))
			qa.Offer(int32(i), cls, t0, t0)
			for p := qb.NextPickMS(); p < t0; p = qb.NextPickMS() {
				qb.Pick()
			}
			qb.Offer(int32(i), cls, t0, t0)
		}
		qa.Finish()
		if spec.End == server.EndCut {
			for p := qb.NextPickMS(); p < math.Inf(1); p = qb.NextPickMS() {
				qb.Pick()
			}
			qb.CutEnd()
		}
		qb.Finish()
		if !slices.Equal(a.out, b.out) {
			t.Fatalf("trial %d (%+v): picked one at a time\n%v\nby releases\n%v", trial, spec, b.out, a.out)
		}
	}
}

// TestQueueDrop: a dropped request is never served nor shed, leaves the
// system at once, and a priority door evicts around it.
func TestQueueDrop(t *testing.T) {
	for _, lifo := range []bool{false, true} {
		spec := server.Spec{Workers: 1, ServiceMS: 10, DeadlineMS: 1000, Door: server.DoorPriority, Bound: 4}
		if lifo {
			spec.Discipline = server.LIFO
		}
		spec.Normalize()
		var rec recorder
		q := server.NewQueue(spec, math.Inf(1), 2, &rec)
		q.Offer(0, 0, 0, 0) // in service until 10
		q.Offer(1, 1, 1, 1)
		q.Offer(2, 1, 2, 2)
		pos := q.LastPos()
		q.Offer(3, 1, 3, 3)
		if n := q.InSystem(3); n != 4 {
			t.Fatalf("lifo %v: %d in the system, want 4", lifo, n)
		}
		q.Drop(pos)
		if n := q.InSystem(3); n != 3 {
			t.Fatalf("lifo %v: %d in the system after the drop, want 3", lifo, n)
		}
		q.Offer(4, 1, 4, 4) // fills the door again
		q.Offer(5, 0, 5, 5) // evicts the newest of class 1: request 4
		q.Finish()
		if o := rec.of(4); o.served || o.why != server.ShedEvicted {
			t.Errorf("lifo %v: request 4 %+v, want evicted", lifo, o)
		}
		for _, o := range rec.out {
			if o.id == 2 {
				t.Errorf("lifo %v: the dropped request came out: %+v", lifo, o)
			}
		}
		if len(rec.out) != 5 {
			t.Errorf("lifo %v: %d outcomes, want 5: %+v", lifo, len(rec.out), rec.out)
		}
	}
}
