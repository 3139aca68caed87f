package main

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"time"
)

// heapWatchEnv names the file a lab process started by a test (TestMain,
// LAB_TEST_MAIN=1) reports its live heap to (watchHeap).
const heapWatchEnv = "LAB_TEST_HEAP_FILE"

// watchHeap samples the live heap (runtime/metrics /gc/heap/live:bytes:
// what the last garbage collection found reachable) every millisecond
// and keeps its peak. When a file path+".ask" appears it removes it,
// collects, then writes "peak settled" (bytes; settled: live after that
// collection) to path. The live heap is what the code holds, which the
// runtime's soft memory limit cannot lower, where the resident size is
// what the collector lets it reach.
func watchHeap(path string) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	var peak uint64
	for i := 0; ; i++ {
		time.Sleep(time.Millisecond)
		peak = max(peak, live())
		if i%20 != 0 {
			continue
		}
		if os.Remove(path+".ask") == nil {
			runtime.GC()
			out := strconv.FormatUint(peak, 10) + " " + strconv.FormatUint(live(), 10) + "\n"
			tmp := path + ".tmp"
			if os.WriteFile(tmp, []byte(out), 0o644) == nil {
				os.Rename(tmp, path)
			}
		}
	}
}
