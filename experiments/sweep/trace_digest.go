package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/workload"
)

// traceDigests wraps a run's TraceOpener: every read of a trace to its end
// is hashed, and every whole read of one name must give the same digest
// (a trace that changes while a sweep reads it, pass after pass, is an
// error rather than a result from two traces).
type traceDigests struct {
	open workload.TraceOpener
	mu   sync.Mutex
	seen map[string]experiments.Input
	err  error
}

func newTraceDigests(open workload.TraceOpener) *traceDigests {
	return &traceDigests{open: open, seen: map[string]experiments.Input{}}
}

// opener is the TraceOpener the engine reads through.
func (d *traceDigests) opener(name string) (io.ReadCloser, error) {
	rc, err := d.open(name)
	if err != nil {
		return nil, err
	}
	return &digestReader{rc: rc, d: d, name: name, h: sha256.New()}, nil
}

func (d *traceDigests) record(in experiments.Input) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if prev, ok := d.seen[in.Name]; ok && prev != in && d.err == nil {
		d.err = fmt.Errorf("trace %s changed while the run read it (sha256 %s, %d bytes; then %s, %d bytes)", in.Name, prev.SHA256, prev.Bytes, in.SHA256, in.Bytes)
	}
	if _, ok := d.seen[in.Name]; !ok {
		d.seen[in.Name] = in
	}
}

// inputs are the traces read whole, by name.
func (d *traceDigests) inputs() ([]experiments.Input, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return nil, d.err
	}
	out := make([]experiments.Input, 0, len(d.seen))
	for _, in := range d.seen {
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b experiments.Input) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// digestReader hashes what it reads; read to its end, it records the digest.
type digestReader struct {
	rc   io.ReadCloser
	d    *traceDigests
	name string
	h    hash.Hash
	n    int64
	done bool
}

func (r *digestReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.h.Write(p[:n]) // a hash.Hash never fails
	r.n += int64(n)
	if err == io.EOF && !r.done {
		r.done = true
		r.d.record(experiments.Input{Name: r.name, SHA256: hex.EncodeToString(r.h.Sum(nil)), Bytes: r.n})
	}
	return n, err
}

func (r *digestReader) Close() error { return r.rc.Close() }
