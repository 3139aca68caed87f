package web

import (
	"testing"

	"github.com/ratelab/ratelab/storage"
)

// TestProgressText: a sweep's progress is its points; a replay's counts
// thousandths of its log's bytes, so it reads as the share of the log.
func TestProgressText(t *testing.T) {
	cases := []struct {
		run               storage.Run
		progress, partial string
	}{
		{storage.Run{PointsDone: 3, PointsTotal: 20}, "3 / 20", "partial: 3 of 20 points"},
		{storage.Run{Kind: storage.KindShadow, PointsDone: 426, PointsTotal: 1000}, "43% of the log", "partial: 43% of the log read"},
		{storage.Run{Kind: storage.KindShadow, PointsDone: 1000, PointsTotal: 1000}, "100% of the log", "partial: 100% of the log read"},
		{storage.Run{Kind: storage.KindShadow}, "0% of the log", "partial: 0% of the log read"},
	}
	for _, c := range cases {
		if got := progressText(c.run); got != c.progress {
			t.Errorf("progressText(%+v) = %q, want %q", c.run, got, c.progress)
		}
		if got := partialText(c.run); got != c.partial {
			t.Errorf("partialText(%+v) = %q, want %q", c.run, got, c.partial)
		}
	}
}
