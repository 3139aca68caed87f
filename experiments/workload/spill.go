package workload

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// The trace spill: a run parses each trace file once. The first open of a
// name reads its text through the run's TraceOpener, parses it (a
// TraceParser: the CSV decoder, or another format's) and writes its rows
// to a compact binary spill; every open of the name, that one included,
// then reads the spill's rows (NewTraceReplay takes the reader as a
// TraceParser): no text, no gzip, no float parsing and no lookup of client
// names on the passes after the first. The engine opens no file: where the
// spill's bytes live (a temp file in cmd/lab) is the Spill's business.
//
// A row of the spill is, little endian: uvarint head (line delta from the
// previous row << 2 | kind), then by kind: 0 a row without a service time,
// 1 a row with one: float64 t_ms, uvarint client number, [float64
// service_ms]; 2 a client name, numbered next: uvarint length, bytes
// (before the first row that names it). The error that ended the text (a
// bad line, a failed read) is kept as is and returned after the rows
// before it, so errors name the same line, spill or not.

// Spill is where a run keeps its trace files' rows between passes (cmd/lab:
// temp files removed when the run ends). Create starts the spill of a
// trace; Open reads a spill whose writer was closed, from its start, any
// number of times.
type Spill interface {
	Create(name string) (io.WriteCloser, error)
	Open(name string) (io.ReadCloser, error)
}

// SpilledTraces opens trace files through a run's spill: Open is the
// TraceOpener the run reads through.
type SpilledTraces struct {
	open    TraceOpener
	spill   Spill
	maxRows int64
	// Parser turns a trace's text into rows (nil: TraceDecoder, the CSV
	// format).
	Parser func(name string, text io.Reader) TraceParser

	mu     sync.Mutex
	traces map[string]*spilledTrace
}

// spilledTrace is one name's spill: written once (the first open), its
// end error kept.
type spilledTrace struct {
	once sync.Once
	err  error // the spill could not be made
	end  error // the parser's error after the last row (nil: io.EOF)
	rows int64
	sum  spillSummary
}

// spillSummary is what a replay's checking pass over a spill would find
// (traceRuns), kept as the spill is written: so that pass need not read
// the spill when the rows pass every check.
type spillSummary struct {
	rows     int64
	sorted   bool     // every row's time at or after the one before (the first at or after 0)
	maxT     float64  // the latest time (0 without rows)
	names    []string // the clients' names, by the spill's number (order of first appearance)
	complete bool     // the text ended cleanly (io.EOF)
}

// replayed is what a replay of the spill over [0, windowMS) for group and
// weight (NewTraceReplayFrom) would end with: its clients and its count,
// ok when it would end without an error. Not ok, only the replay can say
// which error and at which line.
func (s *spillSummary) replayed(windowMS float64, group string, weight float64) (clients []Client, count int64, ok bool) {
	if !s.complete || !s.sorted || s.rows == 0 || !(s.maxT < windowMS) {
		return nil, 0, false
	}
	if weight == 0 {
		weight = 1
	}
	seen := make(map[string]bool, len(s.names))
	for _, name := range s.names {
		if name == "" {
			name = DefaultClient
		}
		if !seen[name] {
			seen[name] = true
			clients = append(clients, Client{Name: name, Group: group, Weight: weight})
		}
	}
	if len(clients) > MaxClients {
		return nil, 0, false
	}
	return clients, s.rows, true
}

// NewSpilledTraces reads the traces open opens once each, into spill.
// maxRows bounds a spill (0: MaxTraceEvents' bound on a trace held in
// memory does not apply to a streamed one, so the caller says, from its
// work budget): a trace with more rows fails when its spill is written.
func NewSpilledTraces(open TraceOpener, spill Spill, maxRows int64) *SpilledTraces {
	return &SpilledTraces{open: open, spill: spill, maxRows: maxRows, traces: map[string]*spilledTrace{}}
}

// Open returns a reader of the rows of trace name, parsing the text into
// the spill on the first open.
func (s *SpilledTraces) Open(name string) (io.ReadCloser, error) {
	s.mu.Lock()
	tr := s.traces[name]
	if tr == nil {
		tr = &spilledTrace{}
		s.traces[name] = tr
	}
	s.mu.Unlock()
	tr.once.Do(func() { tr.err = s.write(name, tr) })
	if tr.err != nil {
		return nil, tr.err
	}
	rc, err := s.spill.Open(name)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	return &SpillReader{rc: rc, buf: make([]byte, spillBuffer), end: tr.end, row: TraceRow{ClientID: -1}, sum: &tr.sum}, nil
}

// write parses trace name's text into its spill.
func (s *SpilledTraces) write(name string, tr *spilledTrace) (err error) {
	text, err := s.open(name)
	if err != nil {
		return err
	}
	defer text.Close()
	w, err := s.spill.Create(name)
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	defer func() {
		if cerr := w.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("spill: %w", cerr)
		}
	}()
	var p TraceParser
	if s.Parser != nil {
		p = s.Parser(name, text)
	} else {
		p = NewTraceDecoder(text)
	}
	sw := spillWriter{w: w, ids: map[string]int32{}, buf: make([]byte, 0, spillBuffer)}
	sum := spillSummary{sorted: true}
	last := 0.0
	for {
		row, perr := p.Next()
		if perr != nil {
			if perr != io.EOF {
				tr.end = perr
			}
			sum.complete = perr == io.EOF
			break
		}
		// the replay's checks of order and window (TraceReplay.Next)
		if row.T < last {
			sum.sorted = false
		}
		last = row.T
		if row.T > sum.maxT {
			sum.maxT = row.T
		}
		if s.maxRows > 0 && tr.rows == s.maxRows {
			return fmt.Errorf("line %d: more than %d requests, past the run's work budget", row.Line, s.maxRows)
		}
		if err := sw.row(row); err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		tr.rows++
	}
	if err := sw.flush(); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	sum.rows, sum.names = tr.rows, sw.names
	tr.sum = sum
	return nil
}

// spillBuffer is the spill's write and read buffer.
const spillBuffer = 256 << 10

type spillWriter struct {
	w     io.Writer
	ids   map[string]int32
	names []string // by number
	line  int
	buf   []byte
}

const (
	spillRow        = 0
	spillRowService = 1
	spillName       = 2
)

func (s *spillWriter) row(r *TraceRow) error {
	if len(s.buf)+len(r.Client)+64 > cap(s.buf) {
		if err := s.flush(); err != nil {
			return err
		}
	}
	id, ok := s.ids[string(r.Client)]
	if !ok {
		id = int32(len(s.ids))
		name := string(r.Client)
		s.ids[name] = id
		s.names = append(s.names, name)
		s.buf = binary.AppendUvarint(s.buf, spillName)
		s.buf = binary.AppendUvarint(s.buf, uint64(len(r.Client)))
		s.buf = append(s.buf, r.Client...)
	}
	kind := uint64(spillRow)
	if !math.IsNaN(r.ServiceMS) {
		kind = spillRowService
	}
	s.buf = binary.AppendUvarint(s.buf, uint64(r.Line-s.line)<<2|kind)
	s.line = r.Line
	s.buf = binary.LittleEndian.AppendUint64(s.buf, math.Float64bits(r.T))
	s.buf = binary.AppendUvarint(s.buf, uint64(id))
	if kind == spillRowService {
		s.buf = binary.LittleEndian.AppendUint64(s.buf, math.Float64bits(r.ServiceMS))
	}
	return nil
}

func (s *spillWriter) flush() error {
	_, err := s.w.Write(s.buf)
	s.buf = s.buf[:0]
	return err
}

// SpillReader reads a trace's rows back from its spill: a TraceParser
// (the replay reads it so) and an io.ReadCloser (as a TraceOpener's
// reader is) whose Read refuses: its bytes are no trace text.
type SpillReader struct {
	rc       io.ReadCloser
	buf      []byte
	pos, lim int
	eof      bool
	names    [][]byte
	row      TraceRow
	end      error
	err      error
	sum      *spillSummary // the spill's, as written
}

// Read is not for a spill: replay it (NewTraceReplay).
func (r *SpillReader) Read([]byte) (int, error) {
	return 0, errors.New("a trace spill holds rows, not text: replay it")
}

// Close closes the spill's file.
func (r *SpillReader) Close() error { return r.rc.Close() }

// fill keeps at least want bytes buffered unless the spill ends first.
func (r *SpillReader) fill(want int) error {
	if r.lim-r.pos >= want || r.eof {
		return nil
	}
	if want > len(r.buf) {
		r.buf = append(r.buf, make([]byte, want-len(r.buf))...)
	}
	n := copy(r.buf, r.buf[r.pos:r.lim])
	r.pos, r.lim = 0, n
	for r.lim < want && !r.eof {
		k, err := r.rc.Read(r.buf[r.lim:])
		r.lim += k
		if err == io.EOF {
			r.eof = true
		} else if err != nil {
			return fmt.Errorf("spill: %w", err)
		}
	}
	return nil
}

var errSpillCorrupt = errors.New("spill: corrupt")

func (r *SpillReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.buf[r.pos:r.lim])
	if n <= 0 {
		return 0, errSpillCorrupt
	}
	r.pos += n
	return v, nil
}

func (r *SpillReader) float() (float64, error) {
	if r.lim-r.pos < 8 {
		return 0, errSpillCorrupt
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.buf[r.pos:]))
	r.pos += 8
	return v, nil
}

// Next returns the next row, then the text's own end: io.EOF or the error
// that ended it (as the parser gave it, naming its line).
func (r *SpillReader) Next() (*TraceRow, error) {
	if r.err != nil {
		return nil, r.err
	}
	row, err := r.next()
	if err != nil {
		r.err = err
	}
	return row, err
}

func (r *SpillReader) next() (*TraceRow, error) {
	for {
		if err := r.fill(3 * binary.MaxVarintLen64); err != nil {
			return nil, err
		}
		if r.pos == r.lim {
			if r.end != nil {
				return nil, r.end
			}
			return nil, io.EOF
		}
		head, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		if head == spillName {
			n, err := r.uvarint()
			if err != nil || n > MaxTraceLineBytes {
				return nil, errSpillCorrupt
			}
			if err := r.fill(int(n)); err != nil {
				return nil, err
			}
			if r.lim-r.pos < int(n) {
				return nil, errSpillCorrupt
			}
			r.names = append(r.names, append([]byte(nil), r.buf[r.pos:r.pos+int(n)]...))
			r.pos += int(n)
			continue
		}
		if err := r.fill(8 + binary.MaxVarintLen64 + 8); err != nil {
			return nil, err
		}
		kind := head & 3
		row := &r.row
		row.Line += int(head >> 2)
		if row.T, err = r.float(); err != nil {
			return nil, err
		}
		id, err := r.uvarint()
		if err != nil || id >= uint64(len(r.names)) {
			return nil, errSpillCorrupt
		}
		row.ClientID, row.Client = int32(id), r.names[id]
		row.ServiceMS = math.NaN()
		if kind == spillRowService {
			if row.ServiceMS, err = r.float(); err != nil {
				return nil, err
			}
		}
		return row, nil
	}
}
