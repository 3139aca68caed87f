package main

import "os"

// writeBehindBytes is how much of an output file is written before lab
// run starts its writeback (startWriteback).
const writeBehindBytes = 8 << 20

// writeBehind is an output file that starts the writeback of each
// writeBehindBytes written as it goes (startWriteback: the kernel allocates
// their blocks and sends them to the disk beside the run). Without it,
// ext4 does that for the whole file (80 MB: series.csv of the seed model's
// Post 3 at 9,900 s) in the rename that replaces an older output (its
// auto_da_alloc), after the last point, on one core: 10 to 30 ms of the
// run's end. It changes no byte written. One goroutine writes a file.
type writeBehind struct {
	f       *os.File
	written int64
	started int64 // the bytes whose writeback was started
	// start starts the writeback of n bytes from off (nil:
	// startWriteback; a test's, to see the calls).
	start func(f *os.File, off, n int64) error
}

func (w *writeBehind) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	w.written += int64(n)
	if w.written-w.started >= writeBehindBytes {
		start := w.start
		if start == nil {
			start = startWriteback
		}
		start(w.f, w.started, w.written-w.started) // advice: an error changes nothing written
		w.started = w.written
	}
	return n, err
}
