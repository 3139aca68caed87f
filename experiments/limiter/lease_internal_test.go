package limiter

import "testing"

// Doorman's own algorithm tests (go/server/doorman/algorithm_test.go at
// e2b69e1, their cases of one subclient), run on the lease server: a
// store preloaded with each client's wants (has 0) or empty, then one
// request per client in order, each getting what Doorman's test says.
func TestLeaseAlgorithmsAreDoormans(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		fair    bool
		preload bool
		wants   []float64
		gets    []float64
	}{
		{"TestFairShare", true, true, []float64{1000, 60, 10}, []float64{55, 55, 10}},
		{"TestFairShareLowerExtra", true, true, []float64{1000, 50, 10}, []float64{60, 50, 10}},
		{"TestProportionalShare preloaded", false, true, []float64{60, 60, 10}, []float64{55, 55, 10}},
		{"TestProportionalShare", false, false, []float64{60, 75, 10}, []float64{60, 60, 0}},
	} {
		l := testLeases(120, len(c.wants), c.fair)
		if c.preload {
			for i, w := range c.wants {
				l.assign(i, 0, 0, w)
			}
		}
		for i, w := range c.wants {
			l.request(i, 0, w)
			if got := l.store[i].has; got != c.gets[i] {
				t.Errorf("%s: client %d wanting %g gets %g, want %g", c.name, i, w, got, c.gets[i])
			}
			if l.sumHas > 120 {
				t.Errorf("%s: the store holds %g leased, above 120", c.name, l.sumHas)
			}
		}
	}
}

// The docs' examples (doc/algorithms.md, capacity 120): after a round in
// which every client asks once and a second in which they ask again (the
// first round's grants limited by what the others held), fair gives 60,
// 50, 10 and proportional 69.69…, 40.30…, 10.
func TestLeaseAlgorithmsConverge(t *testing.T) {
	t.Parallel()
	wants := []float64{1000, 50, 10}
	for _, c := range []struct {
		fair bool
		gets []float64
	}{
		{true, []float64{60, 50, 10}},
		// equal share 40, c2 leaves 30, the need above 40 is 960 + 10.
		{false, []float64{40 + 960*30.0/970, 40 + 10*30.0/970, 10}},
	} {
		l := testLeases(120, 3, c.fair)
		for range 3 {
			for i, w := range wants {
				l.request(i, 0, w)
			}
		}
		for i := range wants {
			if got := l.store[i].has; got-c.gets[i] > 1e-9 || c.gets[i]-got > 1e-9 {
				t.Errorf("fair %v: client %d gets %g, want %g", c.fair, i, got, c.gets[i])
			}
		}
	}
}

// testLeases is a lease server of capacity (req/s) over n token buckets,
// its store empty.
func testLeases(capacity float64, n int, fair bool) *leases {
	l := &leases{capacityRPS: capacity, burst: capacity, leaseMS: 1000, refreshMS: 100, fair: fair,
		store: make([]leaseEntry, n), held: make([]heldLease, n), offered: make([]int, n)}
	for range n {
		l.buckets = append(l.buckets, NewTokenBucket(0, 0))
	}
	return l
}
