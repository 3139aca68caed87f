package simulate_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/simulate"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// TestDiffDecisions: the replay makes each point's decisions as its sweep
// did (admitted counts equal the sweep's); a point against itself never
// disagrees; the counts add up; disagreements come in arrival order and
// the timeline sums to them.
func TestDiffDecisions(t *testing.T) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.Points)
	self, err := simulate.DiffDecisions(context.Background(), simulate.DiffSide{Config: cfg, Point: 3}, simulate.DiffSide{Config: cfg, Point: 3}, 0, nil)
	if err != nil || self.Disagreements() != 0 || self.AdmittedA != int64(res.Points[3].Metrics.Admitted) {
		t.Fatalf("a point against itself: %+v, %v", self, err)
	}
	for _, pair := range [][2]int{{0, n - 1}, {1, n / 2}, {n/2 - 1, n / 2}} {
		var last float64 = math.Inf(-1)
		var got []simulate.Disagreement
		sum, err := simulate.DiffDecisions(context.Background(), simulate.DiffSide{Config: cfg, Point: pair[0]}, simulate.DiffSide{Config: cfg, Point: pair[1]}, 0,
			func(d *simulate.Disagreement) error {
				if d.TimeMS < last {
					t.Fatalf("disagreement at %g after %g", d.TimeMS, last)
				}
				last = d.TimeMS
				got = append(got, *d)
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Arrivals != int64(res.Arrivals) || sum.AdmittedA != int64(res.Points[pair[0]].Metrics.Admitted) || sum.AdmittedB != int64(res.Points[pair[1]].Metrics.Admitted) {
			t.Errorf("%v: %d arrivals, admitted %d and %d; the sweep: %d, %d and %d", pair, sum.Arrivals, sum.AdmittedA, sum.AdmittedB,
				res.Arrivals, res.Points[pair[0]].Metrics.Admitted, res.Points[pair[1]].Metrics.Admitted)
		}
		if sum.OnlyA-sum.OnlyB != sum.AdmittedA-sum.AdmittedB || int64(len(got)) != sum.Disagreements() {
			t.Errorf("%v: counts do not add up: %+v, %d streamed", pair, sum, len(got))
		}
		var perWindow int64
		for _, k := range sum.PerWindow {
			perWindow += k
		}
		if perWindow != sum.Disagreements() {
			t.Errorf("%v: the timeline holds %d of %d", pair, perWindow, sum.Disagreements())
		}
		for _, d := range got {
			if d.AdmittedA == d.AdmittedB && !(math.Abs(d.ReleaseA-d.ReleaseB) > sum.EpsMS) || !d.AdmittedA && !math.IsNaN(d.ReleaseA) {
				t.Fatalf("%v: not a disagreement: %+v", pair, d)
			}
		}
		if pair == [2]int{0, n - 1} && sum.Disagreements() == 0 {
			t.Error("a token bucket of burst 1 and a leaky bucket of queue 80 agree on every request")
		}
	}
}

// TestDiffDecisionsRefuses: other arrivals (another seed), a point past
// the sweep and a tolerance out of range are errors that say why.
func TestDiffDecisionsRefuses(t *testing.T) {
	cfg, _ := presets.Config("token-vs-leaky")
	other, _ := presets.Config("token-vs-leaky")
	other.Seed = 7
	for _, c := range []struct {
		a, b simulate.DiffSide
		eps  float64
		want string
	}{
		{simulate.DiffSide{Config: cfg, Point: 0}, simulate.DiffSide{Config: other, Point: 0}, 0, "seed 1 and 7"},
		{simulate.DiffSide{Config: cfg, Point: 0}, simulate.DiffSide{Config: cfg, Point: 999}, 0, "b: point 999"},
		{simulate.DiffSide{Config: cfg, Point: -1}, simulate.DiffSide{Config: cfg, Point: 0}, 0, "a: point -1"},
		{simulate.DiffSide{Config: cfg, Point: 0}, simulate.DiffSide{Config: cfg, Point: 1}, -1, "eps_ms"},
	} {
		if _, err := simulate.DiffDecisions(context.Background(), c.a, c.b, c.eps, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want an error naming %q", err, c.want)
		}
	}
}
