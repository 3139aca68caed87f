package server

import (
	"math"
	"testing"
)

// A knee at 2 with slope 0.5, power 2, on 3 workers of 10 ms: the third
// request in service at once takes 10·(1 + 0.5·1)² = 22.5 ms; one
// released at 10, when two have finished, counts the one still in service
// and itself (2: no slowdown).
func TestShapeKnee(t *testing.T) {
	s := Spec{Workers: 3, ServiceMS: 10, DeadlineMS: 200, Knee: 2, KneeSlope: 0.5, KneePower: 2}
	s.Normalize()
	if errs := s.Validate("server"); len(errs) > 0 {
		t.Fatal(errs)
	}
	srv := New(s)
	for i, want := range [][2]float64{{0, 10}, {0, 10}, {0, 22.5}, {10, 20}, {20, 30}} {
		t0 := []float64{0, 0, 0, 10, 20}[i]
		start, finish := srv.ServeFor(t0, 10)
		if start != want[0] || finish != want[1] {
			t.Fatalf("request %d at %g: start %g finish %g, want %v", i, t0, start, finish, want)
		}
	}
}

// A degrade to 1 of 2 workers over [10, 30) and a service ×3 over [40, 50).
func TestShapeDegrade(t *testing.T) {
	s := Spec{Workers: 2, ServiceMS: 10, DeadlineMS: 200, Degrade: []Degrade{{FromMS: 10, ToMS: 30, Workers: 1}, {FromMS: 40, ToMS: 50, ServiceFactor: 3}}}
	s.Normalize()
	if errs := s.Validate("server"); len(errs) > 0 {
		t.Fatal(errs)
	}
	srv := New(s)
	cases := []struct{ at, start, finish float64 }{
		{0, 0, 10},   // both workers
		{5, 5, 15},   // the second worker
		{10, 15, 25}, // at 10 one is busy (till 15): 1 worker left, wait till 15
		{12, 25, 35}, // waits for the one in service
		{26, 30, 40}, // 25: one busy till 35; the event ends at 30: the second worker serves
		{41, 41, 71}, // ×3
		{55, 55, 65},
	}
	for i, c := range cases {
		start, finish := srv.ServeFor(c.at, 10)
		if start != c.start || finish != c.finish {
			t.Fatalf("request %d at %g: start %g finish %g, want %g %g", i, c.at, start, finish, c.start, c.finish)
		}
	}
	if got := s.IdealConcurrency(20); got != 1 {
		t.Fatalf("ideal concurrency during the degrade %d, want 1", got)
	}
	if got := s.CapacityFactor(45); math.Abs(got-1.0/3) > 1e-12 {
		t.Fatalf("capacity factor %g, want 1/3", got)
	}
}

func TestShapeValidate(t *testing.T) {
	for _, c := range []struct {
		s    Spec
		want string
	}{
		{Spec{KneeSlope: 1}, "server.knee"},
		{Spec{Knee: 3}, "server.knee_slope"},
		{Spec{Degrade: []Degrade{{FromMS: 5, ToMS: 5, Workers: 1}}}, "server.degrade[0].to_ms"},
		{Spec{Degrade: []Degrade{{FromMS: 0, ToMS: 5}}}, "server.degrade[0]"},
		{Spec{Degrade: []Degrade{{FromMS: 0, ToMS: 5, Workers: 3}}}, "server.degrade[0].workers"},
		{Spec{Knee: 1, KneeSlope: 1, Discipline: "lifo"}, "server.knee"},
	} {
		s := c.s
		s.Workers = 2
		s.Normalize()
		errs := s.Validate("server")
		found := false
		for _, e := range errs {
			if e.Path == c.want {
				found = true
			}
		}
		if !found {
			t.Errorf("%+v: errors %v, want one at %s", c.s, errs, c.want)
		}
	}
}
