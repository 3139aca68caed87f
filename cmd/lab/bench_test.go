package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// lab bench x-time-rate prints the gate's row and, beside it, the real
// golang.org/x/time/rate AllowN on the same stream, admitting the same
// share.
func TestBenchShowsTheLibraryBesideItsGate(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "-benchtime", "20ms", "x-time-rate", "token-bucket"}, &out, &errOut); code != 0 {
		t.Fatalf("lab bench: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "\nx-time-rate ") || !strings.Contains(out.String(), "\n"+xTimeRateReferenceName+" ") {
		t.Fatalf("no x-time-rate row or no library row after it:\n%s", out.String())
	}
	if strings.Count(out.String(), "golang.org/x/time/rate") != 1 {
		t.Errorf("the library row should follow only the x-time-rate row:\n%s", out.String())
	}

	// The library decides the stream as the gate does, decision by decision.
	for _, c := range limiter.DecisionCases() {
		ref := xTimeRateReference(c)
		if ref == nil {
			continue
		}
		gate, err := c.NewReplay()
		if err != nil {
			t.Fatal(err)
		}
		lib, err := c.NewReplay()
		if err != nil {
			t.Fatal(err)
		}
		step := ref(lib)
		for i := range 3 * limiter.DecisionArrivals {
			if g, l := gate.Step(), step(); g != l {
				t.Fatalf("%s, decision %d: gate %v, library %v", c.Name, i, g, l)
			}
		}
		return
	}
	t.Fatal("no decision case has the library reference")
}
