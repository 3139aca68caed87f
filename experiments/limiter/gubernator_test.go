package limiter

import "testing"

// TestGubernatorAlgorithms runs algorithms.go's cases event by event:
// each row applies hits at a whole-ms time (the cache read at that time
// too) and states the answer and what the item holds after it.
func TestGubernatorAlgorithms(t *testing.T) {
	t.Parallel()
	type event struct {
		now, hits int64
		drain     bool
		over      bool
		remaining float64 // the item's, after
	}
	cases := []struct {
		name            string
		algorithm       string
		limit, duration int64
		events          []event
	}{
		{"token: a window is live through its reset time", GubernatorTokenBucket, 2, 1000, []event{
			{now: 0, hits: 1, remaining: 1},
			{now: 500, hits: 1, remaining: 0},
			{now: 999, hits: 1, over: true, remaining: 0},
			{now: 1000, hits: 1, over: true, remaining: 0}, // ExpireAt 1000 is not < 1000
			{now: 1001, hits: 1, remaining: 1},             // expired: a new window from 1001
			{now: 2001, hits: 1, over: false, remaining: 0},
			{now: 2002, hits: 1, remaining: 1},
		}},
		{"token: over the limit without DRAIN_OVER_LIMIT keeps what remains", GubernatorTokenBucket, 3, 1000, []event{
			{now: 0, hits: 5, over: true, remaining: 3}, // a new item over the limit holds the limit
			{now: 1, hits: 2, remaining: 1},
			{now: 2, hits: 2, over: true, remaining: 1},
			{now: 3, hits: 1, remaining: 0}, // hits == remaining
			{now: 4, hits: 0, remaining: 0}, // a read answers the stored status
		}},
		{"token: DRAIN_OVER_LIMIT drains an existing item, never a new one", GubernatorTokenBucket, 3, 1000, []event{
			{now: 0, hits: 5, drain: true, over: true, remaining: 3},
			{now: 1, hits: 2, drain: true, remaining: 1},
			{now: 2, hits: 2, drain: true, over: true, remaining: 0},
			{now: 3, hits: 1, drain: true, over: true, remaining: 0},
			{now: 1001, hits: 1, drain: true, remaining: 2},
		}},
		{"token: once at 0 the status stays OVER_LIMIT, reads included", GubernatorTokenBucket, 1, 100, []event{
			{now: 0, hits: 1, remaining: 0},
			{now: 1, hits: 0, remaining: 0},
			{now: 2, hits: 1, over: true, remaining: 0},
			{now: 3, hits: 0, over: true, remaining: 0},
		}},
		{"leaky: leaks in whole steps, takes the fraction with it", GubernatorLeakyBucket, 10, 1000, []event{
			{now: 0, hits: 1, remaining: 9},
			{now: 50, hits: 1, remaining: 8},    // 0.5 of a leak: none
			{now: 150, hits: 1, remaining: 8.5}, // 1.5 since 0: 8 + 1.5 - 1
			{now: 2000, hits: 1, remaining: 9},  // capped at the burst (10), then one taken
		}},
		{"leaky: a hit equal to int64(remaining) drops the fraction", GubernatorLeakyBucket, 1, 1000, []event{
			{now: 0, hits: 1, remaining: 0},
			{now: 1500, hits: 1, remaining: 0},             // 1.5 leaked: int64 1 == hits: 0, the .5 lost
			{now: 2000, hits: 1, over: true, remaining: 0}, // 0.5 since 1500: no leak
			{now: 2500, hits: 1, remaining: 0},             // 1 since 1500
		}},
		{"leaky: DRAIN_OVER_LIMIT and expiry", GubernatorLeakyBucket, 4, 400, []event{
			{now: 0, hits: 3, remaining: 1},
			{now: 10, hits: 2, drain: true, over: true, remaining: 0},
			{now: 20, hits: 1, over: true, remaining: 0},
			{now: 421, hits: 1, remaining: 3}, // the last hit (20) moved ExpireAt to 420: past it, a new item
		}},
	}
	for _, c := range cases {
		g := NewGubernator(c.algorithm, c.limit, c.duration, false)
		for k, e := range c.events {
			rl := g.apply(e.now, e.now, e.hits, e.drain)
			if over := rl.status == gubernatorOver; over != e.over || g.Remaining() != e.remaining {
				t.Fatalf("%s: event %d (at %d, hits %d): over %v, remaining %g; want over %v, remaining %g", c.name, k, e.now, e.hits, over, g.Remaining(), e.over, e.remaining)
			}
		}
	}
}

// TestGubernatorOfferIsWholeMS: a request at t ms reads as floor(t).
func TestGubernatorOfferIsWholeMS(t *testing.T) {
	t.Parallel()
	g := NewGubernator(GubernatorTokenBucket, 1, 1000, false)
	if _, ok := g.Offer(0.7, 0); !ok {
		t.Fatal("the first request was refused")
	}
	if _, ok := g.Offer(1000.9, 0); ok { // ms 1000: the window from ms 0 is live
		t.Fatal("a request at 1000.9 ms (ms 1000) passed: the window of ms 0 is live through 1000")
	}
	if _, ok := g.Offer(1001.0, 0); !ok {
		t.Fatal("a request at ms 1001 was refused: the window expired")
	}
}
