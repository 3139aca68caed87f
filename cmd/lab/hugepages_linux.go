package main

import (
	"runtime"
	"runtime/debug"
	"syscall"
	"unsafe"
)

// hugePageBytes is the size of a transparent huge page on linux/amd64
// and arm64 (with 4 KiB pages).
const hugePageBytes = 2 << 20

// adviseHugePages asks the kernel for transparent huge pages in the next
// size bytes of the Go heap, which the run's large allocations (the
// arrivals held in memory, every point's series) take next: the runtime
// maps them (an allocation of size, never touched), madvise(2) marks them
// MADV_HUGEPAGE, and the allocation is freed for the run to reuse. On the
// 2-core VM a fresh 4 KiB page costs 10 to 20 µs of CPU (the fault's trap,
// not the zeroing: a read fault costs the same), a fresh 2 MiB one (512
// of them) about as much as 12 to 65 of them: the seed model's Post 3 run at 9,900 s took
// 11,800 page faults, 2,100 with this. The Go runtime advises no heap
// memory itself (since Go 1.21.1; the kernel's THP setting is "madvise"
// there), and the advice never changes a byte the run writes. It returns
// the range advised (empty when the kernel refused it).
func adviseHugePages(size int) (begin, end uintptr) {
	if size < 2*hugePageBytes {
		return 0, 0
	}
	// No collection for the allocation's sake (it would start one: the
	// heap is a few MB), only the one below that frees it.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	b := make([]byte, size)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	begin = (p + hugePageBytes - 1) &^ (hugePageBytes - 1)
	end = (p + uintptr(size)) &^ (hugePageBytes - 1)
	if err := syscall.Madvise(b[begin-p:end-p], syscall.MADV_HUGEPAGE); err != nil {
		begin, end = 0, 0
	}
	runtime.KeepAlive(b) // b is dead after this: the GC below frees it
	// Free the allocation's pages for the run's. (The runtime clears them
	// when it hands them out again, returned to the kernel or not: it
	// counts every page below the highest it has handed out as used; a
	// clear of 50 MB is a few ms beside the faults it saves.)
	runtime.GC()
	return begin, end
}
