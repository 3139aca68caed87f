package workload

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// memSpill is a Spill in memory.
type memSpill map[string]*bytes.Buffer

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func (m memSpill) Create(name string) (io.WriteCloser, error) {
	m[name] = new(bytes.Buffer)
	return nopWriteCloser{m[name]}, nil
}

func (m memSpill) Open(name string) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(m[name].Bytes())), nil
}

// A spill's summary says what the checking pass of a replay over it ends
// with (traceRuns skips that pass when it can): the same clients and
// count when the replay ends cleanly, and nothing when it fails (out of
// order, past the window, a bad line, no rows), for any window, group and
// weight. The unnamed client and one named DefaultClient are one.
func TestSpillSummaryIsTheReplay(t *testing.T) {
	texts := map[string]string{
		"sorted":   "t_ms,client\n0,a\n1.5,b\n1.5,a\n2,c\n",
		"unnamed":  "t_ms,client\n0,\n1,client\n2,x\n3\n",
		"unsorted": "0,a\n2,b\n1,a\n",
		"late":     "0,a\n5,b\n900,c\n",
		"bad":      "0,a\n1,b\nnope,c\n",
		"empty":    "t_ms,client\n# nothing\n",
		"service":  "t_ms,client,service_ms\n0,a,2\n1,b,\n3,a,4\n",
	}
	var big strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&big, "%d.%03d,c%d\n", i, i%1000, (i*13)%101)
	}
	texts["big"] = big.String()
	for name, text := range texts {
		sp := memSpill{}
		traces := NewSpilledTraces(func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil }, sp, 0)
		for _, window := range []float64{3, 100, 10000} {
			for _, weight := range []float64{0, 2.5} {
				rc, err := traces.Open("t")
				if err != nil {
					t.Fatal(err)
				}
				clients, count, ok := rc.(*SpillReader).sum.replayed(window, "g", weight)
				r := NewTraceReplay(rc, window, "g", weight)
				for {
					if _, _, more := r.Next(); !more {
						break
					}
				}
				switch {
				case ok != (r.Err() == nil):
					t.Errorf("%s window %g: summary ok %v, replay err %v", name, window, ok, r.Err())
				case ok && (!slices.Equal(clients, r.Clients()) || count != r.Count()):
					t.Errorf("%s window %g weight %g: summary %v %d, replay %v %d", name, window, weight, clients, count, r.Clients(), r.Count())
				}
			}
		}
	}
}
