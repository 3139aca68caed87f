package document

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ratelab/ratelab/experiments"
)

// TestReadStringsAsEncodingJSON: long strings of plain text, escapes of
// every kind, \u escapes and surrogate pairs, multi-byte UTF-8, read
// through buffers cut at every place, decode as encoding/json decodes them,
// and the compact copy decodes to the same string.
func TestReadStringsAsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "bc", `\n`, `\"`, `\\`, `\/`, `\t`, `\r`, `\b`, `\f`, `\u00e9`, `\u20AC`, `\ud83d\ude00`, "é", "€", "😀", "1,a", " ", `\u0000`}
	var b strings.Builder
	b.WriteByte('"')
	for b.Len() < 300_000 {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	b.WriteByte('"')
	doc := b.String()
	var want string
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatal(err)
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"halves":   iotest.HalfReader,
		"odd":      func(r io.Reader) io.Reader { return &chunks{r: r, n: 4093} },
	}
	for name, wrap := range readers {
		d := &documentReader{r: bufio.NewReaderSize(wrap(strings.NewReader(doc)), 64<<10), max: experiments.MaxConfigBytes}
		var out []byte
		if err := d.document(&out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := string(d.str); got != want {
			t.Fatalf("%s: decoded %d bytes, want %d (first difference at %d)", name, len(got), len(want), firstDiff(got, want))
		}
		var again string
		if err := json.Unmarshal(out, &again); err != nil || again != want {
			t.Fatalf("%s: the compact copy decodes to another string (%v)", name, err)
		}
	}
}

type chunks struct {
	r io.Reader
	n int
}

func (c *chunks) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestShortKeysStaySmall: reading short keys and values takes bytes for
// them, not a buffer's worth each.
func TestShortKeysStaySmall(t *testing.T) {
	doc := []byte(`{"version": 1, "seed": 1, "name": "n", "description": "d", "x": {"a": 1, "b": 2, "c": 3}}` + strings.Repeat(" ", 100_000))
	read := func() {
		d := &documentReader{r: bufio.NewReaderSize(bytes.NewReader(doc), 64<<10), max: experiments.MaxConfigBytes}
		var out []byte
		_ = d.document(&out)
	}
	read()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	read()
	runtime.ReadMemStats(&m1)
	if n := m1.TotalAlloc - m0.TotalAlloc; n > 80<<10 {
		t.Errorf("%d bytes allocated to read nine short keys (the buffer is 64 KB)", n)
	}
}
