package workload_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/workload"
)

func generate(t *testing.T, durationMS float64, seed uint64, parts ...workload.Part) *workload.Arrivals {
	t.Helper()
	s := workload.Spec{DurationMS: durationMS, Parts: parts}
	if errs := s.Validate("workload"); len(errs) > 0 {
		t.Fatal(errs)
	}
	a, err := workload.Generate(&s, seed)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(a.T) {
		t.Fatal("arrivals are not sorted by time")
	}
	if len(a.Client) != len(a.T) {
		t.Fatalf("%d clients for %d times", len(a.Client), len(a.T))
	}
	return a
}

// countIn is the number of arrivals in [from, to).
func countIn(a *workload.Arrivals, from, to float64) int {
	n := 0
	for _, x := range a.T {
		if x >= from && x < to {
			n++
		}
	}
	return n
}

func ptr(x float64) *float64 { return &x }

var post3Curve = workload.Part{Type: workload.DemandCurve, Segments: []workload.Segment{
	{RateRPS: 20, DurationMS: 1000}, {RateRPS: 600, DurationMS: 200},
}}

// TestPost3DemandCurve: the seed lab's curve over 5000 ms gives 566 arrivals:
// four valleys of 20, a cut valley of 4, and spikes of 120, 121, 121 and
// 120 — the extra arrivals are the accumulated rounding of t += 1000/600.
func TestPost3DemandCurve(t *testing.T) {
	a := generate(t, 5000, 1, post3Curve)
	if a.Len() != 566 {
		t.Fatalf("%d arrivals, want 566", a.Len())
	}
	for _, c := range []struct {
		from, to float64
		want     int
	}{
		{0, 1000, 20}, {1000, 1200, 120},
		{1200, 2200, 20}, {2200, 2400, 121},
		{2400, 3400, 20}, {3400, 3600, 121},
		{3600, 4600, 20}, {4600, 4800, 120},
		{4800, 5000, 4},
	} {
		if got := countIn(a, c.from, c.to); got != c.want {
			t.Errorf("[%g, %g): %d arrivals, want %d", c.from, c.to, got, c.want)
		}
	}
	// The 121st arrival of the second spike is the rounding one, just
	// before the spike's end.
	last := 0.0
	for _, x := range a.T {
		if x < 2400 {
			last = x
		}
	}
	if !(last > 2399.99999 && last < 2400) {
		t.Errorf("last arrival of the second spike at %.12f, want just under 2400", last)
	}
	if len(a.Clients) != 1 || a.Clients[0].Name != workload.DefaultClient {
		t.Errorf("clients %+v, want one default client", a.Clients)
	}
}

func TestConstantRespectsStartAndEnd(t *testing.T) {
	a := generate(t, 1000, 1, workload.Part{Type: workload.Constant, RateRPS: 100, StartMS: 105, EndMS: ptr(505)})
	want := []float64{105, 115, 125}
	if a.Len() != 40 || !slices.Equal(a.T[:3], want) || a.T[39] >= 505 {
		t.Fatalf("%d arrivals starting %v ending %g; want 40 from 105 every 10 ms, before 505", a.Len(), a.T[:min(3, a.Len())], a.T[a.Len()-1])
	}
}

func TestPoissonMeanRate(t *testing.T) {
	for seed := range uint64(5) {
		// 1000 rps over 100 s: 100 000 expected, standard deviation 316.
		a := generate(t, 100_000, seed, workload.Part{Type: workload.Poisson, RateRPS: 1000})
		if math.Abs(float64(a.Len())-100_000) > 5*316 {
			t.Errorf("seed %d: %d arrivals, want 100000 ± 1580 (5 sd)", seed, a.Len())
		}
		// Exponential gaps: the share of gaps over the mean is e^-1.
		over := 0
		for i := 1; i < a.Len(); i++ {
			if a.T[i]-a.T[i-1] > 1 {
				over++
			}
		}
		if share := float64(over) / float64(a.Len()-1); math.Abs(share-math.Exp(-1)) > 0.01 {
			t.Errorf("seed %d: %.4f of the gaps exceed the mean, want e^-1 = 0.3679 ± 0.01", seed, share)
		}
	}
}

func TestRandomPartsAreDeterministic(t *testing.T) {
	parts := []workload.Part{
		{Type: workload.Poisson, RateRPS: 300},
		{Type: workload.Clients, Group: "g", Clients: 3, RateRPS: 20, Arrival: workload.ArrivalPoisson},
		{Type: workload.FlashCrowd, BaseRPS: 50, Multiplier: 4, StartMS: 200, DurationMS: 400, Clients: 2, Group: "crowd"},
	}
	a := generate(t, 2000, 9, parts...)
	b := generate(t, 2000, 9, parts...)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("seed 9 gave two different lists")
	}
	c := generate(t, 2000, 10, parts...)
	if slices.Equal(a.T, c.T) {
		t.Fatal("seeds 9 and 10 gave the same times")
	}
}

func TestBursts(t *testing.T) {
	a := generate(t, 1000, 1, workload.Part{Type: workload.Bursts, Group: "b", Clients: 3, Bursts: []workload.Burst{
		{AtMS: 500, Count: 5, SpreadMS: 10}, // 500, 502, ..., 508
		{AtMS: 100, Count: 4},               // all at 100, given after but earlier in time
		{AtMS: 998, Count: 4, SpreadMS: 4},  // 998, 999 fit; 1000, 1001 are past the end
	}})
	wantT := []float64{100, 100, 100, 100, 500, 502, 504, 506, 508, 998, 999}
	wantC := []int32{0, 1, 2, 0, 0, 1, 2, 0, 1, 0, 1} // round robin within each burst
	if !slices.Equal(a.T, wantT) || !slices.Equal(a.Client, wantC) {
		t.Fatalf("times %v clients %v, want %v %v", a.T, a.Client, wantT, wantC)
	}
	names := []string{a.Clients[0].Name, a.Clients[1].Name, a.Clients[2].Name}
	if !slices.Equal(names, []string{"b-1", "b-2", "b-3"}) || !slices.Equal(a.Groups, []string{"b"}) {
		t.Errorf("clients %v groups %v", names, a.Groups)
	}
}

func TestClientsUniformPhases(t *testing.T) {
	// 4 clients at 10 rps (100 ms apart each) are spread 25 ms out of phase.
	a := generate(t, 300, 1, workload.Part{Type: workload.Clients, Group: "u", Clients: 4, RateRPS: 10})
	wantT := []float64{0, 25, 50, 75, 100, 125, 150, 175, 200, 225, 250, 275}
	wantC := []int32{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}
	if !slices.Equal(a.T, wantT) || !slices.Equal(a.Client, wantC) {
		t.Fatalf("times %v clients %v, want %v %v", a.T, a.Client, wantT, wantC)
	}
	// Synchronized clients tie; ties keep client order.
	s := generate(t, 250, 1, workload.Part{Type: workload.Clients, Group: "s", Clients: 3, RateRPS: 10, Arrival: workload.ArrivalSynchronized})
	wantT = []float64{0, 0, 0, 100, 100, 100, 200, 200, 200}
	wantC = []int32{0, 1, 2, 0, 1, 2, 0, 1, 2}
	if !slices.Equal(s.T, wantT) || !slices.Equal(s.Client, wantC) {
		t.Fatalf("synchronized: times %v clients %v, want %v %v", s.T, s.Client, wantT, wantC)
	}
}

func TestFlashCrowdRamps(t *testing.T) {
	// Paced at the instantaneous rate: 10 rps, then 100 rps between 1000
	// and 2000 ms with 200 ms linear ramps at both ends.
	p := workload.Part{Type: workload.FlashCrowd, BaseRPS: 10, Multiplier: 10, StartMS: 1000, DurationMS: 1000, RampMS: 200, Arrival: workload.ArrivalUniform}
	a := generate(t, 3000, 1, p)
	if got := countIn(a, 0, 1000); got != 10 {
		t.Errorf("before the crowd: %d arrivals, want 10", got)
	}
	if got := countIn(a, 1200, 1800); got < 59 || got > 61 {
		t.Errorf("at the peak: %d arrivals in 600 ms, want 60 ± 1", got)
	}
	up, down := countIn(a, 1000, 1200), countIn(a, 1800, 2000)
	if up < 6 || up > 14 || down < 6 || down > 14 {
		t.Errorf("ramps: %d up and %d down in 200 ms, want about 11 (mean rate 55 rps)", up, down)
	}
	if got := countIn(a, 2100, 3000); got < 8 || got > 10 {
		t.Errorf("after the crowd: %d arrivals in 900 ms, want 9 ± 1", got)
	}
	// Gaps shrink along the up ramp.
	var gaps []float64
	for i := 1; i < a.Len(); i++ {
		if a.T[i] > 1000 && a.T[i] < 1200 {
			gaps = append(gaps, a.T[i]-a.T[i-1])
		}
	}
	if !slices.IsSortedFunc(gaps, func(x, y float64) int { return -cmpFloat(x, y) }) {
		t.Errorf("gaps along the up ramp do not shrink: %v", gaps)
	}

	// Poisson by thinning: the mean counts.
	p.Arrival, p.BaseRPS, p.StartMS, p.DurationMS, p.RampMS = "", 100, 10_000, 10_000, 2_000
	b := generate(t, 30_000, 3, p)
	for _, c := range []struct {
		from, to, mean float64
	}{
		{0, 10_000, 1000},      // 100 rps
		{12_000, 18_000, 6000}, // 1000 rps
		{10_000, 12_000, 1100}, // ramp: mean 550 rps
		{20_000, 30_000, 1000}, //
	} {
		if got := float64(countIn(b, c.from, c.to)); math.Abs(got-c.mean) > 5*math.Sqrt(c.mean) {
			t.Errorf("Poisson crowd [%g, %g): %g arrivals, want %g ± 5 sd", c.from, c.to, got, c.mean)
		}
	}
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func TestTraceReplay(t *testing.T) {
	csv := "t_ms,client\n30,bob\n10,alice\n# comment\n\n10,carol\n 20 , alice \r\n5\n"
	a := generate(t, 100, 1, workload.Part{Type: workload.Trace, Group: "replayed", CSV: csv})
	wantT := []float64{5, 10, 10, 20, 30}
	var names []string
	for _, c := range a.Client {
		names = append(names, a.Clients[c].Name)
	}
	wantNames := []string{workload.DefaultClient, "alice", "carol", "alice", "bob"} // sorted by time, ties in file order
	if !slices.Equal(a.T, wantT) || !slices.Equal(names, wantNames) {
		t.Fatalf("times %v clients %v, want %v %v", a.T, names, wantT, wantNames)
	}
	// Clients are declared in file order (bob first), all in the group.
	if a.Clients[0].Name != "bob" || a.Clients[0].Group != "replayed" {
		t.Errorf("first client %+v, want bob in replayed", a.Clients[0])
	}
}

// TestMergeKeepsTiesInGenerationOrder: parts emitting at the same instants
// come out in the order the parts are given.
func TestMergeKeepsTiesInGenerationOrder(t *testing.T) {
	a := generate(t, 50, 1,
		workload.Part{Type: workload.Constant, Client: "a", RateRPS: 100},
		workload.Part{Type: workload.Trace, CSV: "0,t\n20,t\n20,u\n"},
		workload.Part{Type: workload.Constant, Client: "c", RateRPS: 50},
		workload.Part{Type: workload.Bursts, Client: "b", Bursts: []workload.Burst{{AtMS: 20, Count: 2}}},
	)
	var got []string
	for i, c := range a.Client {
		if a.T[i] == 0 || a.T[i] == 20 {
			got = append(got, a.Clients[c].Name)
		}
	}
	want := []string{"a", "t", "c", "a", "t", "u", "c", "b", "b"}
	if !slices.Equal(got, want) {
		t.Fatalf("ties at 0 and 20 came out %v, want %v", got, want)
	}
}

func TestParseTraceErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ csv, want string }{
		{"t_ms,client\n1,a\nx,b\n", "line 3: t_ms \"x\" is not a number"},
		{"1,a\n-2,b\n", "line 2: t_ms -2 is negative"},
		{"1,a,2,3\n", "line 1: expected at most 3 fields"},
		{"1,a,b\n", "line 1: service_ms \"b\" is not a number"},
		{"1,a,-1\n", "line 1: service_ms -1 is negative"},
		{"t_ms,client,service\n1,a\n", "line 1: header must be"},
		{"t_ms\n1\nt_ms\n", "line 3: t_ms \"t_ms\" is not a number"},
		{"time,who\n1,a\n", "line 1: header must be"},
		{"# only a comment\n\n", "no requests"},
		{"1,a\nNaN,b\n", "line 2: t_ms \"NaN\" is not a number"},
		{"1,a\n+Inf\n", "line 2: t_ms \"+Inf\" is not a number"},
		{"1," + strings.Repeat("x", 201) + "\n", "line 1: client name longer than 200"},
	} {
		_, err := workload.ParseTrace(c.csv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTrace(%q) = %v, want an error containing %q", c.csv, err, c.want)
		}
	}
}

func TestExpectedMatchesDeterministicParts(t *testing.T) {
	s := workload.Spec{DurationMS: 5000, Parts: []workload.Part{post3Curve, {Type: workload.Constant, RateRPS: 100}}}
	a, err := workload.Generate(&s, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Expected may overcount the cut last cycle, never undercount.
	if e := s.Expected(); e < float64(a.Len()) || e > float64(a.Len())*1.5 {
		t.Errorf("Expected() = %g for %d arrivals", e, a.Len())
	}
}

// TestExpectedNeverCountsBelowZero: a part that starts after the end of the
// run emits nothing and counts nothing; it used to count a negative number
// of arrivals, which hid another part's millions from the size limit.
func TestExpectedNeverCountsBelowZero(t *testing.T) {
	late := 2000.0
	for _, p := range []workload.Part{
		{Type: workload.Constant, RateRPS: 1000, StartMS: late},
		{Type: workload.Poisson, RateRPS: 1000, StartMS: late},
		{Type: workload.Clients, Group: "g", Clients: 1000, RateRPS: 1000, StartMS: late},
		{Type: workload.Clients, Group: "g", Clients: 3, RateRPS: 1000, StartMS: 1500, EndMS: &late},
	} {
		s := workload.Spec{DurationMS: 1000, Parts: []workload.Part{p}}
		if e := s.Expected(); e != 0 {
			t.Errorf("%s starting at %g ms of a 1000 ms run: Expected() = %g, want 0", p.String(), p.StartMS, e)
		}
		a, err := workload.Generate(&s, 1)
		if err != nil {
			t.Fatal(err)
		}
		if a.Len() != 0 {
			t.Errorf("%s starting at %g ms of a 1000 ms run: %d arrivals", p.String(), p.StartMS, a.Len())
		}
	}
}

// TestMergeIsAStableSortOfTheParts generates random deterministic parts
// (whose arrivals do not depend on their index) together and one by one:
// the combined list must be the parts' lists concatenated in order and
// sorted stably by time.
func TestMergeIsAStableSortOfTheParts(t *testing.T) {
	type ev struct {
		t    float64
		name string
	}
	for run := range 300 {
		rng := rand.New(rand.NewPCG(50, uint64(run)))
		w := float64(100 + rng.IntN(2000))
		var parts []workload.Part
		for k := range 1 + rng.IntN(6) {
			name := "p" + strconv.Itoa(k)
			var p workload.Part
			switch rng.IntN(5) {
			case 0:
				p = workload.Part{Type: workload.Constant, Client: name, RateRPS: float64(1 + rng.IntN(200)), StartMS: float64(rng.IntN(50))}
			case 1:
				p = workload.Part{Type: workload.Clients, Group: name, Clients: 1 + rng.IntN(5), RateRPS: float64(1 + rng.IntN(100)),
					Arrival: []workload.Arrival{workload.ArrivalUniform, workload.ArrivalSynchronized}[rng.IntN(2)]}
			case 2:
				var bs []workload.Burst
				for range 1 + rng.IntN(4) {
					bs = append(bs, workload.Burst{AtMS: float64(rng.IntN(int(w))), Count: 1 + rng.IntN(20), SpreadMS: float64(rng.IntN(3) * 5)})
				}
				p = workload.Part{Type: workload.Bursts, Client: name, Bursts: bs}
			case 3:
				var b strings.Builder
				for range 1 + rng.IntN(30) {
					fmt.Fprintf(&b, "%d,%s-%d\n", rng.IntN(int(w)), name, rng.IntN(3))
				}
				p = workload.Part{Type: workload.Trace, CSV: b.String()}
			default:
				p = workload.Part{Type: workload.DemandCurve, Client: name, Segments: []workload.Segment{
					{RateRPS: float64(rng.IntN(100)), DurationMS: float64(1 + rng.IntN(300))},
					{RateRPS: float64(1 + rng.IntN(1000)), DurationMS: float64(1 + rng.IntN(100))},
				}}
			}
			parts = append(parts, p)
		}
		all := generate(t, w, 1, parts...)
		var want []ev
		for _, p := range parts {
			one := generate(t, w, 1, p)
			for i, x := range one.T {
				want = append(want, ev{x, one.Clients[one.Client[i]].Name})
			}
		}
		slices.SortStableFunc(want, func(a, b ev) int { return cmpFloat(a.t, b.t) })
		if len(want) != all.Len() {
			t.Fatalf("run %d: %d arrivals together, %d apart", run, all.Len(), len(want))
		}
		for i, e := range want {
			if got := (ev{all.T[i], all.Clients[all.Client[i]].Name}); got != e {
				t.Fatalf("run %d: arrival %d is %+v, want %+v", run, i, got, e)
			}
		}
	}
}

// TestExpectedIsAnUpperBoundForDemandCurves: the size check before a run
// relies on Expected never undercounting a deterministic part, including
// short segments (each started segment emits at its start) and cycles
// longer than the run (cut at the end).
func TestExpectedIsAnUpperBoundForDemandCurves(t *testing.T) {
	for run := range 500 {
		rng := rand.New(rand.NewPCG(60, uint64(run)))
		var segs []workload.Segment
		for range 1 + rng.IntN(4) {
			segs = append(segs, workload.Segment{
				RateRPS:    []float64{0, 0.5, 1, 20, 600, 1e4}[rng.IntN(6)],
				DurationMS: []float64{0.5, 1, 7.3, 200, 1000, 3_600_000}[rng.IntN(6)],
			})
		}
		s := workload.Spec{DurationMS: float64(1 + rng.IntN(20_000)), Parts: []workload.Part{{Type: workload.DemandCurve, Segments: segs}}}
		if errs := s.Validate("workload"); len(errs) > 0 {
			continue
		}
		a, err := workload.Generate(&s, 1)
		if err != nil {
			t.Fatal(err)
		}
		if e := s.Expected(); e < float64(a.Len()) || e > 3*float64(a.Len())+10 {
			t.Fatalf("run %d: Expected() = %g for %d arrivals (segments %v over %g ms)", run, e, a.Len(), segs, s.DurationMS)
		}
	}
}
