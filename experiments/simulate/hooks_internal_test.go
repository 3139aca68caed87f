package simulate

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// partGate is a toy part of a composite gate: it admits everything, logs
// the completions it hears and the syncs it runs (every syncMS, 0: it
// does not sync).
type partGate struct {
	name   string
	syncMS float64
	next   float64
	log    *[]string
}

func (g *partGate) Offer(t float64, _ int32) (float64, bool) { return t, true }

type observingPart struct{ *partGate }

func (g observingPart) Complete(c limiter.Completion) {
	*g.log = append(*g.log, g.name+" heard "+c.Outcome.String())
}

type syncingPart struct{ *partGate }

func (g syncingPart) NextSyncMS() float64 { return g.next }
func (g syncingPart) Sync(t float64) {
	*g.log = append(*g.log, g.name+" synced")
	g.next = t + g.syncMS
}

// composite is a toy gate made of parts (limiter.Composite, as a chain).
type composite struct{ parts []limiter.Gate }

func (c *composite) Offer(t float64, client int32) (float64, bool) { return t, true }
func (c *composite) Parts() []limiter.Gate                         { return c.parts }

// TestHooksOfParts: the hooks of a gate made of parts are its parts'
// (limiter.Composite, a chain's stages, nested included): every part that
// observes hears each completion, and each part that syncs runs at its
// own times, the gate's next sync the earliest of theirs; the decision
// diff refuses such a gate, and one with a hook of its own, with a clear
// error, and takes a gate without.
func TestHooksOfParts(t *testing.T) {
	var log []string
	a := observingPart{&partGate{name: "a", log: &log}}
	b := syncingPart{&partGate{name: "b", syncMS: 10, next: 10, log: &log}}
	c := syncingPart{&partGate{name: "c", syncMS: 25, next: 25, log: &log}}
	d := observingPart{&partGate{name: "d", log: &log}}
	gate := &composite{parts: []limiter.Gate{a, b, &composite{parts: []limiter.Gate{c, d}}}}
	h := hooksOf(gate, nil)
	if h.observer == nil || h.syncer == nil {
		t.Fatalf("hooks %+v: the parts' observers and syncers not found", h)
	}
	h.observer.Complete(limiter.Completion{Outcome: limiter.Late})
	for _, want := range []float64{10, 20, 25, 30} {
		next := h.syncer.NextSyncMS()
		if next != want {
			t.Fatalf("next sync at %g, want %g", next, want)
		}
		h.syncer.Sync(next)
	}
	want := []string{"a heard late", "d heard late", "b synced", "b synced", "c synced", "b synced"}
	if !slices.Equal(log, want) {
		t.Fatalf("the parts heard %q, want %q", log, want)
	}
	b.next = math.NaN()
	if s := h.syncer.NextSyncMS(); !math.IsNaN(s) {
		t.Errorf("a part's NaN sync is %g for the gate, want NaN (an error of the point)", s)
	}

	if err := diffable(gate); err == nil || !strings.Contains(err.Error(), "limiter.Observer") {
		t.Errorf("diff of a gate whose parts observe: %v", err)
	}
	if err := diffable(&composite{parts: []limiter.Gate{c}}); err == nil || !strings.Contains(err.Error(), "limiter.Syncer") {
		t.Errorf("diff of a gate whose part syncs: %v", err)
	}
	if err := diffable(a); err == nil {
		t.Errorf("diff of a gate that observes: no error")
	}
	if err := diffable(&composite{parts: []limiter.Gate{&partGate{}}}); err != nil {
		t.Errorf("diff of a gate without hooks: %v", err)
	}
}
