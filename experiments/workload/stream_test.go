package workload_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/workload"
)

// readAll drains a stream in batches of size n.
func readAll(t *testing.T, s *workload.Stream, n int) ([]float64, []int32) {
	t.Helper()
	var ts []float64
	var cs []int32
	bt, bc := make([]float64, n), make([]int32, n)
	for {
		k, err := s.Read(bt, bc)
		if err != nil {
			t.Fatal(err)
		}
		if k < n && k > 0 {
			// a short batch ends the stream
			ts, cs = append(ts, bt[:k]...), append(cs, bc[:k]...)
			if k2, _ := s.Read(bt, bc); k2 != 0 {
				t.Fatalf("a short batch of %d was followed by %d more", k, k2)
			}
			break
		}
		if k == 0 {
			break
		}
		ts, cs = append(ts, bt[:k]...), append(cs, bc[:k]...)
	}
	return ts, cs
}

// randomSpec draws a valid spec using every built-in part type.
func randomSpec(rng *rand.Rand) workload.Spec {
	w := float64(100 + rng.IntN(3000))
	var parts []workload.Part
	for k := range 1 + rng.IntN(6) {
		name := fmt.Sprintf("p%d", k)
		var p workload.Part
		switch rng.IntN(7) {
		case 0:
			p = workload.Part{Type: workload.Constant, Client: name, RateRPS: float64(1+rng.IntN(200)) + rng.Float64(), StartMS: float64(rng.IntN(50))}
		case 1:
			p = workload.Part{Type: workload.Poisson, Client: name, RateRPS: float64(1 + rng.IntN(500))}
		case 2:
			p = workload.Part{Type: workload.Clients, Group: name, Clients: 1 + rng.IntN(20), RateRPS: float64(1+rng.IntN(100)) / 3,
				Arrival: []workload.Arrival{workload.ArrivalUniform, workload.ArrivalSynchronized, workload.ArrivalPoisson}[rng.IntN(3)]}
		case 3:
			var bs []workload.Burst
			for range 1 + rng.IntN(4) {
				bs = append(bs, workload.Burst{AtMS: float64(rng.IntN(int(w))), Count: 1 + rng.IntN(20), SpreadMS: float64(rng.IntN(3) * 5)})
			}
			p = workload.Part{Type: workload.Bursts, Client: name, Bursts: bs}
		case 4:
			var b strings.Builder
			for range 1 + rng.IntN(30) {
				fmt.Fprintf(&b, "%d,%s-%d\n", rng.IntN(int(w)), name, rng.IntN(3))
			}
			p = workload.Part{Type: workload.Trace, CSV: b.String()}
		case 5:
			p = workload.Part{Type: workload.FlashCrowd, Group: name, Clients: rng.IntN(4), BaseRPS: float64(1 + rng.IntN(50)),
				Multiplier: float64(1 + rng.IntN(10)), StartMS: w / 4, DurationMS: w / 3, RampMS: float64(rng.IntN(int(w / 7))),
				Arrival: []workload.Arrival{"", workload.ArrivalUniform, workload.ArrivalPoisson}[rng.IntN(3)]}
			if p.Clients == 0 {
				p.Group = ""
				p.Client = name
			}
		default:
			p = workload.Part{Type: workload.DemandCurve, Client: name, Segments: []workload.Segment{
				{RateRPS: float64(rng.IntN(100)), DurationMS: float64(1 + rng.IntN(300))},
				{RateRPS: float64(1+rng.IntN(1000)) / 7, DurationMS: float64(1+rng.IntN(100)) + 0.3},
			}}
		}
		parts = append(parts, p)
	}
	return workload.Spec{DurationMS: w, Parts: parts}
}

// TestOpenStreamsWhatGenerateGives: the stream has the same arrivals, in
// the same order, with the same float bits and clients, as the list
// Generate builds, whatever the batch size.
func TestOpenStreamsWhatGenerateGives(t *testing.T) {
	for run := range 400 {
		rng := rand.New(rand.NewPCG(77, uint64(run)))
		s := randomSpec(rng)
		if errs := s.Validate("workload"); len(errs) > 0 {
			t.Fatalf("run %d: %v", run, errs)
		}
		seed := rng.Uint64()
		want, err := workload.Generate(&s, seed)
		if err != nil {
			t.Fatal(err)
		}
		st, err := workload.Open(&s, seed)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(st.Clients, want.Clients) || !slices.Equal(st.Groups, want.Groups) {
			t.Fatalf("run %d: clients %v %v, want %v %v", run, st.Clients, st.Groups, want.Clients, want.Groups)
		}
		ts, cs := readAll(t, st, 1+rng.IntN(300))
		if len(ts) != want.Len() || st.Count() != int64(want.Len()) {
			t.Fatalf("run %d: %d arrivals streamed (count %d), %d generated", run, len(ts), st.Count(), want.Len())
		}
		for i := range ts {
			if math.Float64bits(ts[i]) != math.Float64bits(want.T[i]) || cs[i] != want.Client[i] {
				t.Fatalf("run %d: arrival %d is (%v, %d), want (%v, %d)", run, i, ts[i], cs[i], want.T[i], want.Client[i])
			}
		}
	}
}

type failingRun struct{ n int }

func (r *failingRun) Next() (float64, int32, bool) {
	if r.n == 0 {
		return 0, 0, false
	}
	r.n--
	return float64(10 - r.n), 0, true
}

func (r *failingRun) Err() error {
	if r.n == 0 {
		return errors.New("trace.csv: line 4: broken")
	}
	return nil
}

// TestNewStreamMergesRunsAndStopsOnAnError: runs from outside the package
// (a trace reader) merge by time, ties in run order; a run's error stops
// the stream and is returned.
func TestNewStreamMergesRunsAndStopsOnAnError(t *testing.T) {
	clients := []workload.Client{{Name: "a", Weight: 1}, {Name: "b", Group: "g", Weight: 1}}
	st, err := workload.NewStream(clients, []string{"g"},
		workload.SliceRun([]float64{1, 2, 2, 5}, []int32{0, 0, 0, 0}),
		workload.SliceRun([]float64{0, 2, 6}, []int32{1, 1, 1}))
	if err != nil {
		t.Fatal(err)
	}
	ts, cs := readAll(t, st, 3)
	if !slices.Equal(ts, []float64{0, 1, 2, 2, 2, 5, 6}) || !slices.Equal(cs, []int32{1, 0, 0, 0, 1, 0, 1}) {
		t.Fatalf("merged %v %v", ts, cs)
	}
	if st.Clients[1].GroupIndex() != 0 {
		t.Fatal("group index not set")
	}
	st, _ = workload.NewStream(clients, []string{"g"}, &failingRun{n: 3})
	buf, cb := make([]float64, 10), make([]int32, 10)
	if _, err := st.Read(buf, cb); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Fatalf("error %v, want the run's", err)
	}
	if _, err := workload.NewStream(clients, nil); err == nil {
		t.Fatal("a client of an unknown group was accepted")
	}
}
