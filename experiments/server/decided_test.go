package server_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ratelab/ratelab/experiments/server"
)

// TestDecidingAtEntryIsTheQueue: a FIFO queue that evicts nothing,
// deciding each request's fate as it enters (NewQueueDecidingAtEntry),
// tells the sink the same outcome of every request as the queue making its
// picks as time goes (every pick before a release, the rest at Finish),
// and counts the same requests in the system at every release, under
// every door but priority, expiry, an end cut, one to four workers and
// fixed or variable service with ties (whole milliseconds): 400 seeded
// runs.
func TestDecidingAtEntryIsTheQueue(t *testing.T) {
	t.Parallel()
	for run := range 400 {
		r := rand.New(rand.NewPCG(21, uint64(run)))
		spec := server.Spec{Workers: 1 + r.IntN(4), ServiceMS: float64(1 + r.IntN(20)), DeadlineMS: float64(20 + r.IntN(200))}
		if r.IntN(2) == 0 {
			spec.Door, spec.Bound = server.DoorTailDrop, 1+r.IntN(12)
		}
		if r.IntN(2) == 0 {
			spec.Expire = server.ExpireAtDequeue
		}
		if r.IntN(2) == 0 {
			spec.End = server.EndCut
		}
		variable := r.IntN(2) == 0
		if variable {
			spec.Service = "exponential"
		}
		spec.Normalize()
		if errs := spec.Validate("server"); len(errs) > 0 {
			t.Fatalf("run %d: %v", run, errs)
		}
		const endMS = 2000
		picks, decided := &recorder{}, &recorder{}
		q := server.NewQueue(spec, endMS, 0, picks)
		d := server.NewQueueDecidingAtEntry(spec, endMS, 0, decided)
		now := 0.0
		for i := range 300 {
			if r.IntN(3) > 0 {
				now += float64(r.IntN(1 + 2*int(spec.ServiceMS)/spec.Workers))
			}
			gate := float64(r.IntN(3)) // the release's delay behind its arrival
			svc := spec.ServiceMS
			if variable {
				svc = float64(1 + r.IntN(3*int(spec.ServiceMS)))
			}
			release := now + gate
			if got, want := d.InSystem(release), q.InSystem(release); got != want {
				t.Fatalf("run %d (%+v) request %d: %d in the system at %g, the queue counts %d", run, spec, i, got, release, want)
			}
			if start := d.StartAt(release); !(start >= release) {
				t.Fatalf("run %d request %d: starts at %g, before its release at %g", run, i, start, release)
			}
			if got, want := d.OfferFor(int32(i), 0, now, release, svc), q.OfferFor(int32(i), 0, now, release, svc); got != want {
				t.Fatalf("run %d (%+v) request %d at %g: entered %v, the queue %v", run, spec, i, release, got, want)
			}
			now = release
		}
		q.Finish()
		d.Finish()
		byID := func(o []outcome) []outcome {
			o = slices.Clone(o)
			slices.SortFunc(o, func(a, b outcome) int { return int(a.id - b.id) })
			return o
		}
		got, want := byID(decided.out), byID(picks.out)
		if len(got) != len(want) {
			t.Fatalf("run %d: %d outcomes, the queue %d", run, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("run %d (%+v): request %d %+v, the queue %+v", run, spec, want[i].id, got[i], want[i])
			}
		}
	}
}
