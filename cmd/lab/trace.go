package main

// Trace files from disk: lab run --trace FILE and lab serve --traces DIR.
// The engine decodes (workload.TraceDecoder on an io.Reader); here the file
// is opened, a gzip stream recognized by its magic bytes, and, with --sort,
// sorted by time in bounded memory (an external merge sort through temp
// files).

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/klauspost/compress/gzip"

	"github.com/ratelab/ratelab/experiments/workload"
)

// openTrace opens a trace file: its CSV bytes, gunzipped when the file is a
// gzip stream (klauspost/compress's decoder, in a goroutine of its own
// reading ahead of the parser); a truncated gzip stream reads as an error
// saying so.
func openTrace(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return openTraceReader(f, f)
}

// openTraceReader is openTrace of an open file's bytes r (closed by c).
func openTraceReader(r io.Reader, f io.Closer) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	magic, _ := br.Peek(2)
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return readCloser{br, f}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return newReadAhead(gzipReader{zr}, f), nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// gzipReader names a gzip stream that ends early.
type gzipReader struct{ zr *gzip.Reader }

func (g gzipReader) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err != nil && err != io.EOF {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("the gzip stream is truncated: %w", err)
		} else {
			err = fmt.Errorf("gzip: %w", err)
		}
	}
	return n, err
}

// traceFileOpener opens the trace at path, whatever name the part gives
// (lab run --trace names it by its base name). With sort, the first open
// sorts it into a temp file that later opens (the engine reads a trace
// twice: its clients, then its requests) read again; cleanup removes it.
func traceFileOpener(ctx context.Context, path string, sort bool, tmpDir string) (open workload.TraceOpener, cleanup func()) {
	if !sort {
		return func(string) (io.ReadCloser, error) { return openTrace(path) }, func() {}
	}
	var sorted *tempFile
	open = func(string) (io.ReadCloser, error) {
		if sorted == nil {
			rc, err := openTrace(path)
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			if sorted, err = sortTrace(ctx, rc, tmpDir, sortChunkBytes, sortFanIn); err != nil {
				return nil, err
			}
		}
		f, err := os.Open(sorted.Name())
		if err != nil {
			return nil, fmt.Errorf("sort: %w", err)
		}
		return f, nil
	}
	cleanup = func() {
		if sorted != nil {
			sorted.Close()
		}
	}
	return open, cleanup
}

// dirTraceOpener opens traces by name from dir (lab serve --traces DIR):
// only valid names (no path, no parent: workload.ValidTraceName), only
// regular files inside dir.
func dirTraceOpener(dir string) workload.TraceOpener {
	return func(name string) (io.ReadCloser, error) {
		if !workload.ValidTraceName(name) {
			return nil, fmt.Errorf("%q is not a trace name", name)
		}
		path := filepath.Join(dir, name)
		st, err := os.Lstat(path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("no trace %q in the lab's trace directory", name)
			}
			return nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("trace %q is not a regular file", name)
		}
		return openTrace(path)
	}
}

// listTraces names the traces in dir: the regular files with valid names,
// sorted.
func listTraces(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && workload.ValidTraceName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// The external sort's memory and fan-in: a chunk of rows up to
// sortChunkBytes is sorted in memory and written to a temp file; the chunk
// files are merged sortFanIn at a time.
const (
	sortChunkBytes = 64 << 20
	sortFanIn      = 128
	// sortCheckRows is how often the sort looks for cancellation.
	sortCheckRows = 1 << 16
)

// sortedRow is one row of a chunk in memory: its time, and its client and
// service time as text in the chunk's arena.
type sortedRow struct {
	t        float64
	off, end int
}

// sortTrace reads the trace r and returns a temp file (in dir; removed when
// closed) of its rows sorted by time, ties in file order, as CSV. Errors
// name the line of r. Memory: one chunk of about chunkBytes. It checks ctx
// every sortCheckRows rows, read or merged, and between chunks: a
// cancelled sort (Ctrl-C, SIGTERM) returns ctx's error and, like any
// failed sort, removes its files. Its folder is one of the lab's temp
// entries (tempPattern), so that a later lab removes what a killed one
// left (removeStaleTemp).
func sortTrace(ctx context.Context, r io.Reader, dir string, chunkBytes, fanIn int) (_ *tempFile, err error) {
	tmp, err := os.MkdirTemp(dir, tempPattern("sort"))
	if err != nil {
		return nil, fmt.Errorf("sort: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	var (
		chunks []string
		rows   []sortedRow
		arena  []byte
	)
	flush := func() error {
		slices.SortStableFunc(rows, func(a, b sortedRow) int { return cmp.Compare(a.t, b.t) }) // times are never NaN
		name := filepath.Join(tmp, fmt.Sprintf("chunk-%d.csv", len(chunks)))
		err := writeFile(name, func(w *bufio.Writer) error {
			var num []byte
			for _, row := range rows {
				num = strconv.AppendFloat(num[:0], row.t, 'g', -1, 64)
				w.Write(num)
				if _, err := w.Write(arena[row.off:row.end]); err != nil {
					return err
				}
			}
			return nil
		})
		chunks = append(chunks, name)
		rows, arena = rows[:0], arena[:0]
		return err
	}
	d := workload.NewTraceDecoder(r)
	for n := 1; ; n++ {
		if n%sortCheckRows == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("sort: %w", ctx.Err())
		}
		row, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		off := len(arena)
		arena = append(arena, ',')
		arena = append(arena, row.Client...)
		if !math.IsNaN(row.ServiceMS) {
			arena = append(arena, ',')
			arena = strconv.AppendFloat(arena, row.ServiceMS, 'g', -1, 64)
		}
		arena = append(arena, '\n')
		rows = append(rows, sortedRow{row.T, off, len(arena)})
		if len(arena)+len(rows)*24 >= chunkBytes {
			if err := flush(); err != nil {
				return nil, fmt.Errorf("sort: %w", err)
			}
		}
	}
	if len(rows) > 0 || len(chunks) == 0 {
		if err := flush(); err != nil {
			return nil, fmt.Errorf("sort: %w", err)
		}
	}
	rows, arena = nil, nil
	for pass := 0; len(chunks) > 1; pass++ {
		var next []string
		for lo := 0; lo < len(chunks); lo += fanIn {
			group := chunks[lo:min(lo+fanIn, len(chunks))]
			if len(group) == 1 {
				next = append(next, group[0])
				continue
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("sort: %w", ctx.Err())
			}
			name := filepath.Join(tmp, fmt.Sprintf("merge-%d-%d.csv", pass, len(next)))
			if err := mergeChunks(ctx, name, group); err != nil {
				return nil, fmt.Errorf("sort: %w", err)
			}
			next = append(next, name)
		}
		chunks = next
	}
	f, err := os.Open(chunks[0])
	if err != nil {
		return nil, fmt.Errorf("sort: %w", err)
	}
	return &tempFile{f, tmp}, nil
}

// tempFile is the sorted trace; closing it removes the sort's directory.
type tempFile struct {
	*os.File
	dir string
}

func (t *tempFile) Close() error {
	err := t.File.Close()
	if rerr := os.RemoveAll(t.dir); err == nil {
		err = rerr
	}
	return err
}

func writeFile(name string, fill func(w *bufio.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	err = fill(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mergeChunks merges sorted chunk files into one, ties in chunk order (the
// chunks are consecutive pieces of the trace, in order), and removes them.
func mergeChunks(ctx context.Context, name string, chunks []string) error {
	h := &chunkHeap{}
	for i, c := range chunks {
		f, err := os.Open(c)
		if err != nil {
			return err
		}
		defer f.Close()
		src := &chunkSource{i: i, d: workload.NewTraceDecoder(bufio.NewReaderSize(f, 64<<10))}
		if ok, err := src.next(); err != nil {
			return fmt.Errorf("%s: %w", c, err)
		} else if ok {
			h.s = append(h.s, src)
		}
	}
	heap.Init(h)
	err := writeFile(name, func(w *bufio.Writer) error {
		var num []byte
		for n := 1; h.Len() > 0; n++ {
			if n%sortCheckRows == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			src := h.s[0]
			num = strconv.AppendFloat(num[:0], src.row.T, 'g', -1, 64)
			num = append(num, ',')
			num = append(num, src.row.Client...)
			if !math.IsNaN(src.row.ServiceMS) {
				num = append(num, ',')
				num = strconv.AppendFloat(num, src.row.ServiceMS, 'g', -1, 64)
			}
			num = append(num, '\n')
			if _, err := w.Write(num); err != nil {
				return err
			}
			ok, err := src.next()
			if err != nil {
				return err
			}
			if ok {
				heap.Fix(h, 0)
			} else {
				heap.Pop(h)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range chunks {
		os.Remove(c)
	}
	return nil
}

type chunkSource struct {
	i   int
	d   *workload.TraceDecoder
	row *workload.TraceRow
}

func (c *chunkSource) next() (bool, error) {
	row, err := c.d.Next()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c.row = row
	return true, nil
}

// chunkHeap orders the chunks by their next row's time, then by chunk.
type chunkHeap struct{ s []*chunkSource }

func (h *chunkHeap) Len() int { return len(h.s) }
func (h *chunkHeap) Less(i, j int) bool {
	a, b := h.s[i], h.s[j]
	return a.row.T < b.row.T || a.row.T == b.row.T && a.i < b.i
}
func (h *chunkHeap) Swap(i, j int) { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *chunkHeap) Push(x any)    { h.s = append(h.s, x.(*chunkSource)) }
func (h *chunkHeap) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}
