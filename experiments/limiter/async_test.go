package limiter_test

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// Sharing async takes only the gubernator gate, an owner among the
// instances and no scaling event; each error names its field.
func TestAsyncValidation(t *testing.T) {
	t.Parallel()
	guber := limiter.Params{limiter.ParamLimit: 10, limiter.ParamDuration: 1000}
	cases := []struct {
		name  string
		spec  *limiter.Spec
		field string
		msg   string
	}{
		{"another gate", replicated(limiter.TypeTokenBucket, 3, limiter.BalancerRoundRobin, limiter.SharingAsync,
			limiter.Params{limiter.ParamRate: 10, limiter.ParamBurst: 10}), "limiter.sharing", "takes the gubernator gate"},
		{"owner outside", replicated(limiter.TypeGubernator, 3, limiter.BalancerRoundRobin, limiter.SharingAsync,
			limiter.Params{limiter.ParamLimit: 10, limiter.ParamDuration: 1000, limiter.ParamOwner: 3}), "limiter.owner_instance", "one of the instances"},
		{"scaling", replicated(limiter.TypeGubernator, 3, limiter.BalancerRoundRobin, limiter.SharingAsync,
			limiter.Params{limiter.ParamLimit: 10, limiter.ParamDuration: 1000, limiter.ParamScaleAt: 100, limiter.ParamScaleTo: 2}), "limiter.scale_to", "no scaling event"},
		{"sync wait under local", replicated(limiter.TypeGubernator, 3, limiter.BalancerRoundRobin, limiter.SharingLocal,
			limiter.Params{limiter.ParamLimit: 10, limiter.ParamDuration: 1000, limiter.ParamSyncWait: 10}), "limiter.sync_wait_ms", `belongs to sharing "async"`},
	}
	for _, c := range cases {
		errs := c.spec.Validate("limiter")
		found := false
		for _, e := range errs {
			if e.Path == c.field && strings.Contains(e.Msg, c.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: errors %v, want one at %s saying %q", c.name, errs, c.field, c.msg)
		}
	}
	ok := replicated(limiter.TypeGubernator, 3, limiter.BalancerRoundRobin, limiter.SharingAsync, guber)
	if errs := ok.Validate("limiter"); len(errs) > 0 {
		t.Fatalf("a valid async spec: %v", errs)
	}
	if p := ok.Points()[0]; p.Get(limiter.ParamSyncWait) != 100 || p.Get(limiter.ParamBatchLimit) != 1000 || p.Get(limiter.ParamOwner) != 0 {
		t.Fatalf("async's defaults: %v, want Gubernator's sync wait 100 ms, batch limit 1000, owner 0", p)
	}
}

// A longer sync wait lets the instances' cached copies admit more: the
// count of the busiest rolling second grows with sync_wait_ms, from one
// gate's at 1 ms.
func TestAsyncOverAdmitsWithSyncWait(t *testing.T) {
	t.Parallel()
	most := func(syncMS float64) int {
		s := replicated(limiter.TypeGubernator, 3, limiter.BalancerRoundRobin, limiter.SharingAsync,
			limiter.Params{limiter.ParamLimit: 100, limiter.ParamDuration: 1000, limiter.ParamSyncWait: syncMS})
		g, err := limiter.New(s, s.Points()[0], []float64{1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var admitted []float64
		for k := range 3000 { // 300 requests/s for 10 s
			tm := float64(k) * 1000 / 300
			if _, ok := g.Offer(tm, 0); ok {
				admitted = append(admitted, tm)
			}
		}
		return mostInWindow(admitted, 999.999)
	}
	last := 0
	for _, ms := range []float64{1, 100, 500} {
		m := most(ms)
		if m <= last {
			t.Fatalf("sync_wait_ms %g: at most %d in a second, not above %d at the shorter wait", ms, m, last)
		}
		last = m
	}
}
