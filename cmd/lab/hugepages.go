package main

import (
	"os"
	"strings"

	"github.com/ratelab/ratelab/experiments"
)

// maxHugeHeapBytes bounds the heap lab run advises for huge pages.
const maxHugeHeapBytes = 1 << 30

// heldBytes estimates what a run of cfg's points (all of them, or points
// of them: a shard's) holds in its large allocations: the arrivals of a
// load held in memory (a time and a client each) and three series of
// 4-byte counts per point and window (its offered series shared), plus
// 16 MiB for the rest; at most maxHugeHeapBytes.
func heldBytes(cfg *experiments.Config, points int) int {
	held := 16.0 * (1 << 20)
	if n := cfg.ExpectedArrivals(); n <= experiments.MaxCurveArrivals {
		held += 12 * n
	}
	windows := cfg.Workload.DurationMS / cfg.SeriesWindow()
	held += 12 * windows * float64(points*cfg.Replicas())
	return int(min(held, maxHugeHeapBytes))
}

// hugePagesOff reports whether GODEBUG turns the runtime's huge pages off
// (disablethp=1): lab run then advises none either.
func hugePagesOff() bool {
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if strings.TrimSpace(kv) == "disablethp=1" {
			return true
		}
	}
	return false
}
