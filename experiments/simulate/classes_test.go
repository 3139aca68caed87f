package simulate

import (
	"testing"

	"github.com/ratelab/ratelab/experiments"
)

// The first draws of java.util.Random(seed).nextDouble(), printed by OpenJDK 25.
func TestJavaRandom(t *testing.T) {
	r := newJavaRandom(23)
	for i, want := range []float64{0.7321323355141605, 0.03645927000218119, 0.22355095827054938, 0.38079650808600174, 0.7848071858565456} {
		if got := r.Float64(); got != want {
			t.Errorf("draw %d: %v, want %v", i, got, want)
		}
	}
	if got := newJavaRandom(-7).Float64(); got != 0.2691218093260761 {
		t.Errorf("seed -7: %v", got)
	}
	cfg := &experiments.Config{Classes: []experiments.Class{{Name: "critical", Share: 0.25}, {Name: "background"}}, ClassDraw: &experiments.ClassDraw{Generator: experiments.DrawJavaRandom, Seed: 23}}
	cs := DrawClasses(cfg, 5)
	if want := []uint8{1, 0, 0, 1, 1}; string(cs) != string(want) {
		t.Errorf("classes %v, want %v", cs, want)
	}
}
