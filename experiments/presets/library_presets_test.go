package presets_test

import (
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// releasedIn counts a point's releases in [fromMS, toMS) (whole 100 ms
// series windows).
func releasedIn(p *experiments.Point, fromMS, toMS int) int {
	n := 0
	for w, c := range p.Series.Released {
		if at := w * int(experiments.SeriesWindowMS); at >= fromMS && at < toMS {
			n += int(c)
		}
	}
	return n
}

// The numbers nginx-burst-503's description states.
func TestNginxBurst503Preset(t *testing.T) {
	res := runPreset(t, "nginx-burst-503")
	for _, c := range []struct {
		label                     string
		admitted, rejected, maxMS int
	}{
		{"burst=10", 33, 27, 1000},
		{"burst=10 nodelay", 33, 27, 0},
		{"burst=20 nodelay", 60, 0, 0},
	} {
		m := point(t, res, c.label).Metrics
		if m.Admitted != c.admitted || m.Rejected != c.rejected || m.GateDelay.Max != c.maxMS {
			t.Errorf("%s: admitted %d, refused %d, gate delay max %d ms; the description says %d, %d, %d",
				c.label, m.Admitted, m.Rejected, m.GateDelay.Max, c.admitted, c.rejected, c.maxMS)
		}
	}
	// burst=10: of each page load, the first at once and 10 held 100 ms apart.
	p := point(t, res, "burst=10")
	for w := 0; w <= 10; w++ {
		if got := p.Series.Released[w]; got != 1 {
			t.Errorf("burst=10: %d releases in [%d, %d) ms, want 1 (one every 100 ms)", got, w*100, w*100+100)
		}
	}
}

// The numbers guava-warming-up-half-rate's description states.
func TestGuavaWarmingUpHalfRatePreset(t *testing.T) {
	res := runPreset(t, "guava-warming-up-half-rate")
	for _, c := range []struct {
		typ           limiter.Type
		timeoutMS     float64
		first, second int
	}{
		{limiter.TypeGuavaSmoothWarmingUp, 100, 100, 200},
		{limiter.TypeGuavaSmoothWarmingUp, 0, 84, 187},
		{limiter.TypeGuavaSmoothBursty, 100, 200, 200},
	} {
		var p *experiments.Point
		for i := range res.Points {
			if res.Points[i].Type == c.typ && res.Points[i].Params[limiter.ParamTimeoutMS] == c.timeoutMS {
				p = &res.Points[i]
			}
		}
		if p == nil {
			t.Fatalf("no %s point with timeout %g ms", c.typ, c.timeoutMS)
		}
		if a, b := releasedIn(p, 0, 2000), releasedIn(p, 2000, 4000); a != c.first || b != c.second {
			t.Errorf("%s timeout %g ms: %d releases in the first 2 s, %d in the next; the description says %d and %d",
				c.typ, c.timeoutMS, a, b, c.first, c.second)
		}
	}
}
