package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
)

// TestAdviseHugePagesMarksTheHeap: the range adviseHugePages returns is
// in the process's mappings with the kernel's "hg" flag (MADV_HUGEPAGE),
// whole huge pages of the size asked, when the kernel has transparent
// huge pages at all.
func TestAdviseHugePagesMarksTheHeap(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages here")
	}
	const size = 16 << 20
	begin, end := adviseHugePages(size)
	if begin == 0 || end <= begin || end-begin < size-2*hugePageBytes || begin%hugePageBytes != 0 {
		t.Fatalf("advised %#x to %#x for %d bytes", begin, end, size)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	// Every mapping that overlaps [begin, end) has hg among its VmFlags.
	covered := uintptr(0)
	var lo, hi uintptr
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if r, _, ok := strings.Cut(line, " "); ok && strings.Contains(r, "-") && !strings.HasSuffix(r, ":") {
			a, b, _ := strings.Cut(r, "-")
			x, err1 := strconv.ParseUint(a, 16, 64)
			y, err2 := strconv.ParseUint(b, 16, 64)
			if err1 == nil && err2 == nil {
				lo, hi = uintptr(x), uintptr(y)
			}
			continue
		}
		if !strings.HasPrefix(line, "VmFlags:") || hi <= begin || lo >= end {
			continue
		}
		if !strings.Contains(" "+line+" ", " hg ") {
			t.Fatalf("mapping %#x-%#x in the advised range %#x-%#x: %s", lo, hi, begin, end, line)
		}
		covered += min(hi, end) - max(lo, begin)
	}
	if covered != end-begin {
		t.Fatalf("mappings cover %d of the %d bytes advised", covered, end-begin)
	}
}

// TestHeldBytesCountsArrivalsAndSeries: the seed model's Post 3 run at
// 9,900 s holds 1.16 M arrivals and 20 points' series of 99,000 windows
// (about 38 MiB with 16 MiB for the rest); a load too long to hold counts
// its series alone, and the estimate is bounded.
func TestHeldBytesCountsArrivalsAndSeries(t *testing.T) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	c := *cfg
	c.Workload.DurationMS = 9_900_000
	got := heldBytes(&c, 20)
	want := 16<<20 + 12*1_158_600 + 12*99_000*20
	if got < want*99/100 || got > want*101/100 {
		t.Errorf("Post 3 at 9,900 s: %d bytes, want about %d", got, want)
	}
	if d := got - heldBytes(&c, 2); d != 12*99_000*18 {
		t.Errorf("2 points: %d bytes fewer than 20, want 18 points' series (%d)", d, 12*99_000*18)
	}
	c.Workload.DurationMS = 9_900_000_000
	if got := heldBytes(&c, 20); got != maxHugeHeapBytes {
		t.Errorf("1,000 times longer: %d bytes, want the bound %d", got, maxHugeHeapBytes)
	}
}
