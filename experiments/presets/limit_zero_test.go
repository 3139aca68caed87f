package presets_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// TestPost2LimitZero: the seed lab's Post 2 plateau sets the admission
// limit to round(capacity × deadline); with service 27 ms and deadline
// 5 ms that is round(0.185) = 0, and the seed runs it: every request is
// rejected. The document takes limit 0 and the run refuses everything.
func TestPost2LimitZero(t *testing.T) {
	t.Parallel()
	p, err := presets.Get("admission-control")
	if err != nil {
		t.Fatal(err)
	}
	doc := p.JSON
	for _, r := range [][2]string{
		{`"service_ms": 10, "deadline_ms": 200`, `"service_ms": 27, "deadline_ms": 5`},
		{`"name": "admission-limited", "limit": 20`, `"name": "admission-limited", "limit": 0`},
		{`"duration_ms": 5000`, `"duration_ms": 1201`},
	} {
		if !bytes.Contains(doc, []byte(r[0])) {
			t.Fatalf("the preset has no %s", r[0])
		}
		doc = bytes.Replace(doc, []byte(r[0]), []byte(r[1]), 1)
	}
	cfg, err := document.DecodeConfig(doc)
	if err != nil {
		t.Fatalf("limit 0: %v", err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range res.Points {
		pt := &res.Points[i]
		if pt.Limiter != "admission-limited" {
			continue
		}
		n++
		m := &pt.Metrics
		if m.Arrivals == 0 || m.Admitted != 0 || m.Rejected != m.Arrivals || m.RejectPct != 100 || m.GoodputRPS != 0 {
			t.Errorf("load %s at limit 0: %d arrivals, %d admitted, %d rejected (%g%%), goodput %g: want every request rejected",
				pt.LoadName, m.Arrivals, m.Admitted, m.Rejected, m.RejectPct, m.GoodputRPS)
		}
	}
	if n != 8 {
		t.Fatalf("%d points of admission-limited, want 8 (one a load)", n)
	}
}
