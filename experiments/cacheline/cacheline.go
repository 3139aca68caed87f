// Package cacheline keeps the state of points that run at once, on
// different cores, off each other's cache lines.
//
// A sweep's workers run points side by side, and each point writes its
// own small objects at every decision: its gate, its server, its
// counters. The Go allocator puts small objects of one size next to each
// other, so two points' gates (32 bytes each: a token bucket) can share a
// 64-byte line; each write on one core then takes the line from the
// other's cache. In the seed model's Post 3 sweep on two cores, the token
// bucket's Offer took twice its one-core time for it (docs/speed.md, the
// sixth session). A struct that begins and ends with a Pad shares no
// cache line of its fields with any other object, whatever sits beside
// it.
package cacheline

import "unsafe"

// Size is the span of memory a write on one core may take from another
// core's cache: a 64-byte line and the adjacent line that x86-64's
// spatial prefetcher fetches with it (arm64's Apple cores have 128-byte
// lines).
const Size = 128

// Pad is a field of Size bytes, never read or written.
type Pad [Size]byte

// Slice is make([]T, n) with room either side: its elements share no
// cache line with any other object.
func Slice[T any](n int) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if size == 0 {
		return make([]T, n)
	}
	k := (Size + size - 1) / size
	return make([]T, n+2*k)[k : k+n : k+n]
}
