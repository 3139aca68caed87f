package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestWriteBehindStartsWriteback: what goes through writeBehind is the
// file's bytes, and the writeback of each 8 MiB written is started once
// they are written (20 MiB in pieces of 128 KiB plus a line: two starts,
// of the bytes written up to the piece that passed each 8 MiB), with a
// call the kernel takes (startWriteback returns no error).
func TestWriteBehindStartsWriteback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "series.csv.tmp")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	piece := append(bytes.Repeat([]byte("0,token-bucket,0,20.0,20.0,0.0,1\n"), 4096), "1\n"...)
	var want bytes.Buffer
	type call struct{ off, n int64 }
	var calls []call
	w := &writeBehind{f: f, start: func(g *os.File, off, n int64) error {
		if g != f {
			t.Errorf("writeback of another file")
		}
		calls = append(calls, call{off, n})
		return startWriteback(g, off, n)
	}}
	for want.Len() < 20<<20 {
		if _, err := w.Write(piece); err != nil {
			t.Fatal(err)
		}
		want.Write(piece)
	}
	p := int64(len(piece))
	first := (8<<20 + p - 1) / p * p // the first piece's end at or past 8 MiB
	second := (first + 8<<20 + p - 1) / p * p
	if wantCalls := []call{{0, first}, {first, second - first}}; !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("writeback started for %v, want %v", calls, wantCalls)
	}
	if err := startWriteback(f, 0, int64(want.Len())); err != nil {
		t.Errorf("startWriteback: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the file differs from what was written (%d bytes, want %d)", len(got), want.Len())
	}
}
