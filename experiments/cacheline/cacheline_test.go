package cacheline

import (
	"slices"
	"testing"
	"unsafe"
)

// TestSliceKeepsApart: the elements of Slices made one after another, of
// sizes that put several in a cache line, lie at least Size bytes from
// each other slice's: no line holds two slices' elements.
func TestSliceKeepsApart(t *testing.T) {
	type span struct{ lo, hi uintptr }
	check := func(name string, spans []span) {
		t.Helper()
		slices.SortFunc(spans, func(a, b span) int { return int(a.lo - b.lo) })
		for i := 1; i < len(spans); i++ {
			if gap := spans[i].lo - spans[i-1].hi; spans[i].lo < spans[i-1].hi || gap < Size {
				t.Fatalf("%s: slices %d bytes apart, want at least %d", name, int(spans[i].lo)-int(spans[i-1].hi), Size)
			}
		}
	}
	var keep [][]byte
	var spans []span
	for n := range 200 {
		s := Slice[byte](1 + n%7)
		if len(s) != 1+n%7 || cap(s) != len(s) {
			t.Fatalf("len %d cap %d, want %d", len(s), cap(s), 1+n%7)
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		spans, keep = append(spans, span{p, p + uintptr(len(s))}), append(keep, s)
	}
	check("bytes", spans)
	type result struct{ a, b int64 } // 16 bytes: four to a line
	var keepR [][]result
	spans = spans[:0]
	for range 200 {
		s := Slice[result](1)
		s[0].a++ // writable
		p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		spans, keepR = append(spans, span{p, p + unsafe.Sizeof(result{})}), append(keepR, s)
	}
	check("16-byte structs", spans)
	if s := Slice[struct{}](3); len(s) != 3 {
		t.Fatalf("zero-size elements: len %d", len(s))
	}
}
