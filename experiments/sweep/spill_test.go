package sweep_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// memSpill is a workload.Spill in memory.
type memSpill struct {
	mu    sync.Mutex
	files map[string]*bytes.Buffer
}

func (m *memSpill) Create(name string) (io.WriteCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string]*bytes.Buffer{}
	}
	b := &bytes.Buffer{}
	m.files[name] = b
	return nopWriteCloser{b}, nil
}

func (m *memSpill) Open(name string) (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[name]
	if !ok {
		return nil, fmt.Errorf("no spill %q", name)
	}
	return io.NopCloser(bytes.NewReader(b.Bytes())), nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// traceText is a trace of n requests from 37 clients, every third with a
// service time, with a header, comments and blank lines.
func traceText(n int) string {
	var b strings.Builder
	b.WriteString("t_ms,client,service_ms\n# a comment\n")
	for i := range n {
		t := float64(i) * 1.7
		if i%3 == 0 {
			fmt.Fprintf(&b, "%g,c%d,%g\n", t, (i*7)%37, float64(i%11)+0.25)
		} else {
			fmt.Fprintf(&b, " %g , c%d\r\n", t, (i*7)%37)
		}
		if i%500 == 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// countingOpener opens text under any name and counts the opens.
func countingOpener(text string, opens *int) func(string) (io.ReadCloser, error) {
	var mu sync.Mutex
	return func(string) (io.ReadCloser, error) {
		mu.Lock()
		*opens++
		mu.Unlock()
		return io.NopCloser(strings.NewReader(text)), nil
	}
}

// A sweep over a trace file writes the same bytes with the spill and
// without (held in memory or streamed, at 1 and 2 workers, with the
// empirical service column), and with the spill reads the text once.
func TestSpillWritesTheSameBytes(t *testing.T) {
	t.Parallel()
	text := traceText(6000)
	docs := map[string]string{
		"forward": `{"version": 1, "seed": 3, "workload": {"duration_ms": 11000, "parts": [{"type": "trace", "file": "t.csv"}]},
			"server": {"workers": 1, "service_ms": 2, "deadline_ms": 50},
			"limiters": [{"type": "token-bucket", "rate_rps": 400, "burst": [1, 8]}, {"type": "leaky-bucket", "rate_rps": 500, "queue": 4}]}`,
		"empirical": `{"version": 1, "workload": {"duration_ms": 11000, "parts": [{"type": "trace", "file": "t.csv"}]},
			"server": {"workers": 2, "service_ms": 2, "deadline_ms": 50, "service": "empirical"},
			"limiters": [{"type": "token-bucket", "rate_rps": 400, "burst": [1, 8]}]}`,
	}
	for name, doc := range docs {
		cfg, err := document.DecodeConfig([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		run := func(opt sweep.Options) map[string]string {
			res, err := sweep.Run(context.Background(), cfg, opt)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			files, err := output.Files(res)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, f := range files {
				out[f.Name] = string(f.Data)
			}
			return out
		}
		var opens int
		want := run(sweep.Options{Workers: 1, Traces: countingOpener(text, &opens)})
		if opens < 2 {
			t.Fatalf("%s: without the spill the text was read %d times; the test needs several passes", name, opens)
		}
		streamed := name == "forward"
		for _, workers := range []int{1, 2} {
			for _, stream := range []bool{false, true} {
				if stream && !streamed {
					continue
				}
				opens = 0
				opt := sweep.Options{Workers: workers, Traces: countingOpener(text, &opens), Spill: &memSpill{}}
				if stream {
					opt = sweep.WithStreamBatch(sweep.WithStreamCache(opt, 0), 700)
				}
				got := run(opt)
				if opens != 1 {
					t.Errorf("%s workers %d stream %v: the text was read %d times with the spill", name, workers, stream, opens)
				}
				for f, w := range want {
					if got[f] != w {
						t.Errorf("%s workers %d stream %v: %s differs with the spill", name, workers, stream, f)
					}
				}
			}
		}
	}
}

// A bad line fails the sweep with the same error, naming the same line,
// with the spill and without: a malformed line, one out of time order
// (found by the replay after the parser), one past the window.
func TestSpillKeepsLineNumbers(t *testing.T) {
	t.Parallel()
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "trace", "file": "t.csv"}]},
		"limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 5}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ text, line string }{
		{"t_ms\n1,a\n2,b\n\n3,x,oops\n4\n", "line 5:"},
		{"1,a\n5,b\n# c\n4,a\n7,zz,\n", "line 4:"},
		{"1,a\n5,b\n1000,a\n", "line 3:"},
		{"1,a\n2,b,3,4\n", "line 2:"},
	} {
		var opens int
		_, plain := sweep.Run(context.Background(), cfg, sweep.Options{Traces: countingOpener(c.text, &opens)})
		_, spilled := sweep.Run(context.Background(), cfg, sweep.Options{Traces: countingOpener(c.text, &opens), Spill: &memSpill{}})
		if plain == nil || spilled == nil || plain.Error() != spilled.Error() || !strings.Contains(plain.Error(), c.line) {
			t.Errorf("%q: without the spill %v, with it %v; want both naming %s", c.text, plain, spilled, c.line)
		}
	}
}
