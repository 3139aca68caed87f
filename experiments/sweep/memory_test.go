package sweep_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// TestTenMillionArrivalsMemory is benchmark (c): a 10 M-arrival run
// (testdata/ten-million.json, two points) generates, runs and writes its
// outputs within 256 MB peak RSS. It takes a few seconds and the whole
// machine's attention, so it runs only when asked:
//
//	RATELAB_MEMORY_TEST=1 go test -run TestTenMillionArrivalsMemory -count 1 -v ./experiments/
//
// The peak is the process's VmHWM (Linux), test binary included.
func TestTenMillionArrivalsMemory(t *testing.T) {
	if os.Getenv("RATELAB_MEMORY_TEST") == "" {
		t.Skip("set RATELAB_MEMORY_TEST=1 to run the 10 M-arrival memory check")
	}
	cfg, _ := enginetest.ReadConfig(t, "testdata/ten-million.json")
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Arrivals < 10_000_000 {
		t.Fatalf("%d arrivals, want at least 10 M", res.Arrivals)
	}
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	peak := peakRSSKB(t)
	t.Logf("%d arrivals, %d points, %d files: peak RSS %.1f MB", res.Arrivals, len(res.Points), len(files), float64(peak)/1024)
	if peak > 256*1024 {
		t.Errorf("peak RSS %d kB, more than 256 MB", peak)
	}
}

func peakRSSKB(t *testing.T) int {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmHWM line %q: %v", line, err)
			}
			return kb
		}
	}
	t.Skip("no VmHWM in /proc/self/status")
	return 0
}
