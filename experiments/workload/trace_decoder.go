package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// The trace format, one parser for a trace in the config (ParseTrace) and
// a trace file (TraceDecoder): an optional header line ("t_ms",
// "t_ms,client" or "t_ms,client,service_ms"), then one request a line: its
// time in ms (a finite number >= 0), an optional client name (at most
// MaxClientName bytes) and an optional service time in ms (finite, >= 0).
// Blank lines and lines starting with # are skipped; spaces around fields
// and a "\r" before the "\n" are ignored. A line is at most
// MaxTraceLineBytes long. Errors name the line, counted from 1.
const (
	MaxTraceLineBytes = 1 << 20
	MaxClientName     = 200
)

// TraceRow is one request of a trace.
type TraceRow struct {
	T float64
	// Client is the name the line gives (empty when none); its bytes are
	// valid until the next call of Next.
	Client []byte
	// ClientID, when not negative, is the parser's own number for Client
	// (0, 1, ... in order of first appearance, the same number for the
	// same name), which spares the replay a lookup by name; -1 when the
	// parser numbers none (TraceDecoder).
	ClientID int32
	// ServiceMS is the service time the line gives, NaN when none.
	ServiceMS float64
	// Line is the row's line in the text it was parsed from, counted from
	// 1: what an error about the row names.
	Line int
}

// TraceParser is what the trace replay reads: the requests of a trace in
// file order, one row at a time. Next returns the next row (reused by the
// following call) or io.EOF after the last; any other error names its
// line and ends the rows. TraceDecoder parses the CSV format; the run's
// trace spill (SpilledTraces) reads back the rows a parser gave the first
// time. A parser of another text format (an access log) implements it
// too: it turns its lines into rows (time in ms from the trace's start,
// client, service time, line) and the replay, the spill, the sort and the
// checks of order and window follow.
type TraceParser interface {
	Next() (*TraceRow, error)
}

// TraceDecoder reads a trace's requests one line at a time from any
// io.Reader (a file, a gzip stream, a network body): memory is one buffered
// line, whatever the trace's length. It opens nothing; cmd/lab and web hand
// it the bytes.
type TraceDecoder struct {
	r    *bufio.Reader
	line int
	rows int    // requests returned
	head bool   // past where a header may be: a header or a request was read
	long []byte // a line longer than the buffer, assembled
	row  TraceRow
	err  error
}

// NewTraceDecoder decodes the trace r holds.
func NewTraceDecoder(r io.Reader) *TraceDecoder {
	return &TraceDecoder{r: bufio.NewReaderSize(r, 64<<10)}
}

// Line is the number of the last line read.
func (d *TraceDecoder) Line() int { return d.line }

// Next returns the next request, or io.EOF after the last one. Any other
// error (a malformed line, a failed read) names the line and is returned
// from every later call too. The row is reused by the next call.
func (d *TraceDecoder) Next() (*TraceRow, error) {
	if d.err != nil {
		return nil, d.err
	}
	for {
		raw, err := d.readLine()
		if err != nil {
			if err != io.EOF {
				err = fmt.Errorf("line %d: %w", d.line+1, err)
			}
			d.err = err
			return nil, err
		}
		d.line++
		if err := d.parse(raw); err != nil {
			if err == errSkip {
				continue
			}
			d.err = fmt.Errorf("line %d: %w", d.line, err)
			return nil, d.err
		}
		d.rows++
		return &d.row, nil
	}
}

// errSkip marks a line that holds no request (blank, comment, header).
var errSkip = errors.New("skip")

// errLineTooLong is a line past MaxTraceLineBytes.
var errLineTooLong = fmt.Errorf("longer than %d bytes (1 MB)", MaxTraceLineBytes)

// readLine returns the next line without its "\n" (io.EOF at the end).
func (d *TraceDecoder) readLine() ([]byte, error) {
	b, err := d.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		d.long = append(d.long[:0], b...)
		for err == bufio.ErrBufferFull {
			if len(d.long) > MaxTraceLineBytes+2 { // room for "\r\n"
				return nil, errLineTooLong
			}
			b, err = d.r.ReadSlice('\n')
			d.long = append(d.long, b...)
		}
		b = d.long
	}
	switch {
	case err == io.EOF && len(b) > 0: // a last line without "\n"
	case err != nil:
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("read: %w", err)
	default:
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	if len(b) > MaxTraceLineBytes {
		return nil, errLineTooLong
	}
	return b, nil
}

// parse reads one line into d.row, or errSkip.
func (d *TraceDecoder) parse(line []byte) error {
	if d.parseCommon(line) {
		return nil
	}
	return d.parseAny(line)
}

// parseCommon reads the common line, "123.456,name", in one scan: a time
// of at most 15 digits and a point, a comma and a client name of printable
// ASCII without spaces or commas (at most MaxClientName bytes). It gives
// the row parseAny gives such a line (its time parseSimple's) and is false
// for any other line, which parseAny reads.
func (d *TraceDecoder) parseCommon(line []byte) bool {
	var m uint64
	i, digits, frac := 0, 0, -1
	for ; i < len(line); i++ {
		c := line[i]
		if '0' <= c && c <= '9' {
			m = m*10 + uint64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
			continue
		}
		if c == '.' && frac < 0 {
			frac = 0
			continue
		}
		break
	}
	if digits == 0 || digits > 15 || i == len(line) || line[i] != ',' {
		return false
	}
	client := line[i+1:]
	if len(client) == 0 || len(client) > MaxClientName {
		return false
	}
	for _, c := range client {
		if c <= ' ' || c >= 0x7f || c == ',' {
			return false
		}
	}
	d.head = true // a line that starts with a digit is no header
	d.row = TraceRow{T: float64(m) / pow10[max(frac, 0)], Client: client, ClientID: -1, ServiceMS: math.NaN(), Line: d.line}
	return true
}

// parseAny reads any line into d.row, or errSkip.
func (d *TraceDecoder) parseAny(line []byte) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] == '#' {
		return errSkip
	}
	tField, rest, hasClient := bytes.Cut(line, []byte{','})
	tField = bytes.TrimSpace(tField)
	client, service, hasService := bytes.Cut(rest, []byte{','})
	client = bytes.TrimSpace(client)
	service = bytes.TrimSpace(service)
	header := !d.head && isHeader(tField)
	d.head = true
	if header {
		if !bytes.Equal(tField, []byte("t_ms")) || hasClient && !bytes.Equal(client, []byte("client")) ||
			hasService && !bytes.Equal(service, []byte("service_ms")) {
			return fmt.Errorf("header must be \"t_ms,client,service_ms\", \"t_ms,client\" or \"t_ms\", got %q", clip(string(line)))
		}
		return errSkip
	}
	if bytes.IndexByte(service, ',') >= 0 {
		return fmt.Errorf("expected at most 3 fields \"t_ms,client,service_ms\", got %d", bytes.Count(line, []byte{','})+1)
	}
	t, ok := parseMS(tField)
	if !ok {
		return fmt.Errorf("t_ms %q is not a number", clip(string(tField)))
	}
	if t < 0 {
		return fmt.Errorf("t_ms %g is negative", t)
	}
	if len(client) > MaxClientName {
		return fmt.Errorf("client name longer than %d characters", MaxClientName)
	}
	s := math.NaN()
	if len(service) > 0 {
		if s, ok = parseMS(service); !ok {
			return fmt.Errorf("service_ms %q is not a number", clip(string(service)))
		}
		if s < 0 {
			return fmt.Errorf("service_ms %g is negative", s)
		}
	}
	d.row = TraceRow{T: t, Client: client, ClientID: -1, ServiceMS: s, Line: d.line}
	return nil
}

// parseMS reads a finite decimal number: strconv.ParseFloat's value, by a
// fast path for the common "123.456" of at most 15 digits (exact: a
// mantissa below 2^53 over an exact power of ten rounds once, as
// ParseFloat's own exact path does) and ParseFloat for anything else.
func parseMS(b []byte) (float64, bool) {
	if v, ok := parseSimple(b); ok {
		return v, true
	}
	v, err := strconv.ParseFloat(string(b), 64)
	return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseSimple reads [+-]digits[.digits] with at most 15 digits in all; ok
// is false for any other text (ParseFloat decides).
func parseSimple(b []byte) (float64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var m uint64
	digits, frac, dot := 0, 0, false
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	v := float64(m) / pow10[frac]
	if neg {
		v = -v
	}
	return v, true
}

// TraceReplay replays a trace file as a time-ordered run of arrivals, in
// one pass: it names the clients as they first appear (DefaultClient for a
// line that names none; all in one group and weight) and refuses the first
// line whose time is before the previous request's (sort the trace first:
// lab run --sort) or at or after the end of the window.
type TraceReplay struct {
	dec      TraceParser
	byID     []int32 // the parser's ClientID → the replay's client (-1: not seen)
	windowMS float64
	group    string
	weight   float64
	clients  []Client
	index    map[string]int32
	last     float64
	lastLine int
	service  float64
	count    int64
	err      error
}

// NewTraceReplay replays the trace r holds over the window [0, windowMS);
// weight 0 is 1. A reader of the run's trace spill (SpilledTraces.Open)
// is replayed from its rows, any other as CSV text (TraceDecoder).
func NewTraceReplay(r io.Reader, windowMS float64, group string, weight float64) *TraceReplay {
	if p, ok := r.(TraceParser); ok {
		return NewTraceReplayFrom(p, windowMS, group, weight)
	}
	return NewTraceReplayFrom(NewTraceDecoder(r), windowMS, group, weight)
}

// NewTraceReplayFrom replays the rows p parses over the window [0,
// windowMS); weight 0 is 1.
func NewTraceReplayFrom(p TraceParser, windowMS float64, group string, weight float64) *TraceReplay {
	if weight == 0 {
		weight = 1
	}
	return &TraceReplay{dec: p, windowMS: windowMS, group: group, weight: weight, index: map[string]int32{}}
}

// Next returns the next arrival: its time and its client (an index into
// Clients); ok is false at the end of the trace or on an error (Err).
func (r *TraceReplay) Next() (t float64, client int32, ok bool) {
	if r.err != nil {
		return 0, 0, false
	}
	row, err := r.dec.Next()
	if err != nil {
		if err != io.EOF {
			r.err = err
		} else if r.count == 0 {
			r.err = errors.New("no requests in the trace")
		}
		return 0, 0, false
	}
	if row.T < r.last {
		r.err = fmt.Errorf("line %d: t_ms %g is before t_ms %g of line %d: the trace must be sorted by time (lab run --sort sorts it)", row.Line, row.T, r.last, r.lastLine)
		return 0, 0, false
	}
	if row.T >= r.windowMS {
		r.err = fmt.Errorf("line %d: t_ms %g is at or after the end of the run (duration_ms %g)", row.Line, row.T, r.windowMS)
		return 0, 0, false
	}
	if id := row.ClientID; id >= 0 && int(id) < len(r.byID) && r.byID[id] >= 0 {
		r.last, r.lastLine, r.service = row.T, row.Line, row.ServiceMS
		r.count++
		return row.T, r.byID[id], true
	}
	name := row.Client
	if len(name) == 0 {
		name = []byte(DefaultClient)
	}
	c, known := r.index[string(name)]
	if !known {
		if len(r.clients) == MaxClients {
			r.err = fmt.Errorf("line %d: more than %d clients in the trace", row.Line, MaxClients)
			return 0, 0, false
		}
		c = int32(len(r.clients))
		r.clients = append(r.clients, Client{Name: string(name), Group: r.group, Weight: r.weight})
		r.index[string(name)] = c
	}
	if id := row.ClientID; id >= 0 {
		for int(id) >= len(r.byID) {
			r.byID = append(r.byID, -1)
		}
		r.byID[id] = c
	}
	r.last, r.lastLine, r.service = row.T, row.Line, row.ServiceMS
	r.count++
	return row.T, c, true
}

// ServiceMS is the service time the last arrival's line gives (NaN when
// none).
func (r *TraceReplay) ServiceMS() float64 { return r.service }

// Err is the error that ended the replay (nil at a clean end).
func (r *TraceReplay) Err() error { return r.err }

// Clients are the clients named so far, in order of first appearance.
func (r *TraceReplay) Clients() []Client { return r.clients }

// Count is the number of arrivals returned so far.
func (r *TraceReplay) Count() int64 { return r.count }
