package accesslog

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxKeys is the most key expressions a reader computes per line (a
// replay's stages and its report key).
const MaxKeys = 8

// MaxLineBytes is the longest line read; a longer one is a bad line.
const MaxLineBytes = 1 << 20

// DefaultWindowMS is the reorder window when Options leaves it 0.
const DefaultWindowMS = 60_000

// MaxHeldRequests is how many requests the reorder window may hold at
// once (2^21, about 150 MB of requests): a log denser than that over its
// window (34,000 requests a second for a 60 s window) is refused with an
// error naming the line, not read into unbounded memory.
const MaxHeldRequests = 1 << 21

// FirstBadLines is how many bad lines a reader keeps to show.
const FirstBadLines = 10

// Options say what a Reader reads from each line.
type Options struct {
	Format *Format
	// Keys are key expressions (see Key), at most MaxKeys: Request.Keys[i]
	// is the line's key under Keys[i].
	Keys []string
	// Route keeps only requests whose path ($uri) starts with it ("" all).
	Route string
	// Status keeps only requests whose status it matches (nil all).
	Status *StatusFilter
	// FromMS and ToMS keep requests starting in [FromMS, ToMS) (Unix ms;
	// 0 is open).
	FromMS, ToMS float64
	// WindowMS is how far a line's start may be before the latest start
	// read and still be put in order (DefaultWindowMS when 0); an earlier
	// one is a bad line, "later than the reorder window".
	WindowMS float64
	// MaxHeld is the most requests the reorder window may hold at once
	// (MaxHeldRequests when 0).
	MaxHeld int
	// Location is the time zone of times logged without one (HAProxy's
	// request date); nil is UTC.
	Location *time.Location
}

// Request is one line as a replay reads it.
type Request struct {
	// StartMS is the request's start, Unix ms: $msec - $request_time when
	// both are logged, $msec alone else; with whole-second times only, the
	// second's requests spread evenly across it (Approximate).
	StartMS float64
	// Keys are the line's key slots under Options.Keys (-1: empty).
	Keys [MaxKeys]int32
	// Status is the logged status (0 when not logged).
	Status int32
	// ServiceMS is the logged upstream time ($upstream_response_time,
	// summed over the upstreams tried), NaN when not logged.
	ServiceMS float64
	// Line is the line's number in the log, from 1.
	Line int64
	// Conn is nginx's $connection (the connection's serial number, in
	// accept order), -1 when not logged: requests that start in the same
	// ms are put in its order (their line order says when they ended).
	Conn int64
}

// BadLine is a line that was not read, with why.
type BadLine struct {
	Line   int64
	Reason string
	Text   string // clipped
}

// Stats count what a reader read.
type Stats struct {
	Lines    int64            // non-blank lines
	Requests int64            // lines read as requests (before filters)
	Filtered int64            // requests the filters left out
	Bad      int64            // lines not read
	Skipped  int64            // lines that are not requests (k6's other metrics)
	Reasons  map[string]int64 // bad lines by reason
	FirstBad []BadLine        // the first FirstBadLines bad lines
	// Approximate: the format's times are whole seconds, so a second's
	// requests were spread evenly across it.
	Approximate bool
	// StartNote says how the start time is read.
	StartNote string
}

// BadPct is the share of bad lines, in percent of the non-blank lines
// that are not skipped.
func (s *Stats) BadPct() float64 {
	if s.Lines-s.Skipped <= 0 {
		return 0
	}
	return 100 * float64(s.Bad) / float64(s.Lines-s.Skipped)
}

// The reasons a line is bad.
const (
	ReasonNoMatch   = "does not match the log format"
	ReasonTime      = "no readable time"
	ReasonStatus    = "status is not a number"
	ReasonService   = "upstream time is not a number"
	ReasonTooLong   = "longer than 1 MB"
	ReasonLate      = "later than the reorder window"
	ReasonRequest   = "request time is not a number"
	ReasonNotObject = "not a JSON object of the format's keys"
	ReasonColumns   = "not a CSV line of the format's columns"
)

// Reader reads a log's requests in start order.
type Reader struct {
	br      *bufio.Reader
	f       *Format
	opt     Options
	keys    []*Key
	same    []int // same[i]: the first key of the same expression as key i
	route   *source
	fields  [][]byte
	scr     []byte
	path    []byte
	long    []byte
	line    int64
	stats   Stats
	err     error
	eof     bool
	held    int   // requests in the reorder ring
	maxHeld int   // the most it may hold (Options.MaxHeld or MaxHeldRequests)
	full    error // the ring held maxHeld

	// time
	msec, reqTime, local, iso, status, upstream int // fields, -1 when not logged
	start, upstreamMS, conn, startLocal         int
	k6Type, k6Metric, k6Time, k6Value           int
	pending                                     Request // k6: the http_reqs point before its duration
	hasPending                                  bool
	pendingTime, pendingLine                    []byte
	startNS, serviceNS                          int
	lastLocal                                   []byte
	lastLocalSec                                int64
	loc                                         *time.Location

	// the reorder ring: one bucket per second, windowSec+2 of them
	windowSec int64
	ring      []bucket
	maxSec    int64 // the latest second read
	flushed   int64 // every second before it has been emitted
	started   bool
	out       []Request
	outAt     int
}

type bucket struct {
	sec  int64
	reqs []Request
}

// NewReader reads the log r holds with the options' format, keys and
// filters.
func NewReader(r io.Reader, opt Options) (*Reader, error) {
	f := opt.Format
	if f == nil {
		return nil, errors.New("no log format")
	}
	if len(opt.Keys) > MaxKeys {
		return nil, fmt.Errorf("%d keys: at most %d", len(opt.Keys), MaxKeys)
	}
	rd := &Reader{br: bufio.NewReaderSize(r, 256<<10), f: f, opt: opt, fields: make([][]byte, len(f.vars))}
	for i, expr := range opt.Keys {
		rd.same = append(rd.same, i)
		if j := slices.Index(opt.Keys[:i], expr); j >= 0 {
			rd.keys, rd.same[i] = append(rd.keys, rd.keys[j]), j // computed once
			continue
		}
		k, err := f.CompileKey(expr)
		if err != nil {
			return nil, err
		}
		rd.keys = append(rd.keys, k)
	}
	if opt.Route != "" {
		src, err := f.resolve("uri")
		if err != nil {
			return nil, fmt.Errorf("route filter: %w", err)
		}
		rd.route = &src
	}
	idx := func(name string) int {
		if i, ok := f.index[name]; ok {
			return i
		}
		return -1
	}
	rd.msec, rd.reqTime, rd.local, rd.iso = idx("msec"), idx("request_time"), idx("time_local"), idx("time_iso8601")
	rd.status, rd.upstream = idx("status"), idx("upstream_response_time")
	rd.start, rd.upstreamMS, rd.conn = idx("start_time"), idx("upstream_service_time_ms"), idx("connection")
	rd.startLocal, rd.loc = idx("start_local_ms"), opt.Location
	rd.startNS, rd.serviceNS = idx("start_unix_ns"), idx("service_time_ns")
	rd.k6Type, rd.k6Metric, rd.k6Time, rd.k6Value = idx("k6_type"), idx("k6_metric"), idx("k6_time"), idx("k6_value")
	if rd.loc == nil {
		rd.loc = time.UTC
	}
	switch {
	case rd.start >= 0:
		rd.stats.StartNote = "start = the logged start time (Envoy's START_TIME, ALB's request_creation_time)"
	case f.k6:
		rd.stats.StartNote = "start = k6's http_reqs time (the request's end) less its http_req_duration"
	case rd.startNS >= 0:
		rd.stats.StartNote = "start = the logged start time (vegeta's timestamp, ns)"
	case rd.startLocal >= 0:
		rd.stats.StartNote = "start = HAProxy's request date (ms), read in time zone " + rd.loc.String()
	case rd.msec >= 0 && rd.reqTime >= 0:
		rd.stats.StartNote = "start = $msec - $request_time (ms)"
	case rd.msec >= 0:
		rd.stats.StartNote = "start = $msec (the request's end: the format logs no $request_time)"
	case rd.local >= 0 || rd.iso >= 0:
		rd.stats.Approximate = true
		rd.stats.StartNote = "whole-second times: each second's requests spread evenly across it (approximate)"
	default:
		return nil, fmt.Errorf("the log format logs no time: give $msec (best with $request_time), $time_iso8601 or $time_local; HAProxy's %%tr (it logs %s)", f.varList())
	}
	if opt.Status != nil && rd.status < 0 {
		return nil, fmt.Errorf("status filter: the log format logs no $status")
	}
	if opt.MaxHeld < 0 {
		return nil, fmt.Errorf("max held %d: at least 0 (0: MaxHeldRequests)", opt.MaxHeld)
	}
	w := opt.WindowMS
	if w == 0 {
		w = DefaultWindowMS
	}
	if w < 0 || math.IsNaN(w) || w > 86_400_000 {
		return nil, fmt.Errorf("reorder window %g ms: from 0 to a day", w)
	}
	rd.windowSec = int64(math.Ceil(w / 1000))
	rd.maxHeld = cmp.Or(opt.MaxHeld, MaxHeldRequests)
	rd.ring = make([]bucket, rd.windowSec+2)
	rd.stats.Reasons = map[string]int64{}
	return rd, nil
}

// Stats are the counts so far (the whole log's after Next returned io.EOF).
func (rd *Reader) Stats() Stats { return rd.stats }

// Key is the compiled key expression i of Options.Keys.
func (rd *Reader) Key(i int) *Key { return rd.keys[i] }

// Next returns the next request in start order (ties in line order), or
// io.EOF after the last. A bad line is counted, not returned; an error is
// a failed read. The request is valid until the next call.
func (rd *Reader) Next() (*Request, error) {
	for rd.outAt >= len(rd.out) {
		if rd.err != nil {
			return nil, rd.err
		}
		if rd.eof {
			return nil, io.EOF
		}
		rd.out, rd.outAt = rd.out[:0], 0
		if err := rd.readSome(); err != nil {
			rd.err = err
		}
	}
	rd.outAt++
	return &rd.out[rd.outAt-1], nil
}

// readSome reads lines until some are ready to emit or the log ends.
func (rd *Reader) readSome() error {
	for len(rd.out) == 0 {
		if rd.full != nil {
			return rd.full
		}
		raw, err := rd.readLine()
		if err == io.EOF {
			rd.eof = true
			rd.finishPending()
			rd.flush(math.MaxInt64)
			return nil
		}
		if err != nil {
			return err
		}
		rd.line++
		if raw == nil { // too long
			rd.stats.Lines++
			rd.bad(ReasonTooLong, nil)
			continue
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		rd.stats.Lines++
		rd.parse(raw)
	}
	return nil
}

// readLine returns the next line without "\n" or "\r\n" (nil for a line
// past MaxLineBytes, read to its end; io.EOF at the end).
func (rd *Reader) readLine() ([]byte, error) {
	b, err := rd.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		rd.long = append(rd.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = rd.br.ReadSlice('\n')
			if len(rd.long) <= MaxLineBytes+2 {
				rd.long = append(rd.long, b...)
			}
		}
		if len(rd.long) > MaxLineBytes+2 {
			if err != nil && err != io.EOF {
				return nil, fmt.Errorf("line %d: read: %w", rd.line+1, err)
			}
			return nil, nil
		}
		b = rd.long
	}
	switch {
	case err == io.EOF && len(b) > 0:
	case err == io.EOF:
		return nil, io.EOF
	case err != nil:
		return nil, fmt.Errorf("line %d: read: %w", rd.line+1, err)
	default:
		b = b[:len(b)-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, nil
}

// bad counts a bad line.
func (rd *Reader) bad(reason string, line []byte) {
	rd.stats.Bad++
	rd.stats.Reasons[reason]++
	if len(rd.stats.FirstBad) < FirstBadLines {
		text := string(line)
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		rd.stats.FirstBad = append(rd.stats.FirstBad, BadLine{Line: rd.line, Reason: reason, Text: strings.ToValidUTF8(text, "?")})
	}
}

// parse reads one line into the reorder ring.
func (rd *Reader) parse(line []byte) {
	clear(rd.fields)
	if rd.f.syslog {
		line = stripSyslog(line)
	}
	var err error
	switch {
	case rd.f.json:
		err = rd.f.splitJSON(line, rd.fields, &rd.scr, &rd.path)
	case rd.f.csv:
		err = rd.f.splitCSV(line, rd.fields, &rd.scr)
	default:
		err = rd.f.splitText(line, rd.fields)
	}
	if err != nil {
		reason := ReasonNoMatch
		if rd.f.json {
			reason = ReasonNotObject
		} else if rd.f.csv {
			reason = ReasonColumns
		}
		rd.bad(reason, line)
		return
	}
	var req Request
	req.Line = rd.line
	var sec int64
	switch {
	case rd.start >= 0:
		start, ok := parseRFC3339MS(rd.fields[rd.start])
		if !ok {
			rd.bad(ReasonTime, line)
			return
		}
		req.StartMS = start
		sec = int64(math.Floor(start / 1000))
	case rd.f.k6:
		if !rd.k6Point() {
			return
		}
		end, ok := parseRFC3339MS(rd.fields[rd.k6Time])
		if !ok {
			rd.bad(ReasonTime, line)
			return
		}
		req.StartMS = end
		sec = int64(math.Floor(end / 1000))
	case rd.startNS >= 0:
		ns, ok := parseNanos(rd.fields[rd.startNS])
		if !ok {
			rd.bad(ReasonTime, line)
			return
		}
		req.StartMS = float64(ns/1e6) + float64(ns%1e6)/1e6
		sec = int64(math.Floor(req.StartMS / 1000))
	case rd.startLocal >= 0:
		start, ok := rd.localMS(rd.fields[rd.startLocal])
		if !ok {
			rd.bad(ReasonTime, line)
			return
		}
		req.StartMS = start
		sec = int64(math.Floor(start / 1000))
	case rd.msec >= 0:
		end, ok := parseDecimalMS(rd.fields[rd.msec])
		if !ok {
			rd.bad(ReasonTime, line)
			return
		}
		req.StartMS = end
		if rd.reqTime >= 0 {
			// nginx may write -0.001: $msec and the start read the wall
			// clock at different updates
			v := rd.fields[rd.reqTime]
			neg := len(v) > 1 && v[0] == '-'
			if neg {
				v = v[1:]
			}
			rt, ok := parseDecimalMS(v)
			if neg {
				rt = -rt
			}
			if !ok {
				rd.bad(ReasonRequest, line)
				return
			}
			req.StartMS = end - rt
		}
		sec = int64(math.Floor(req.StartMS / 1000))
	case rd.iso >= 0:
		s, ok := parseISO8601(rd.fields[rd.iso])
		if !ok {
			rd.bad(ReasonTime, line)
			return
		}
		sec = s
	default:
		v := rd.fields[rd.local]
		if !bytes.Equal(v, rd.lastLocal) {
			s, ok := parseTimeLocal(v)
			if !ok {
				rd.bad(ReasonTime, line)
				return
			}
			rd.lastLocal, rd.lastLocalSec = append(rd.lastLocal[:0], v...), s
		}
		sec = rd.lastLocalSec
	}
	if rd.stats.Approximate {
		req.StartMS = float64(sec * 1000)
	}
	if rd.status >= 0 {
		st, ok := parseUint(rd.fields[rd.status])
		if !ok || st > 999 {
			rd.bad(ReasonStatus, line)
			return
		}
		req.Status = int32(st)
	}
	req.ServiceMS = math.NaN()
	if rd.serviceNS >= 0 {
		if v := rd.fields[rd.serviceNS]; len(v) > 0 {
			ns, ok := parseNanos(v)
			if !ok {
				rd.bad(ReasonService, line)
				return
			}
			req.ServiceMS = float64(ns) / 1e6
		}
	} else if rd.upstreamMS >= 0 {
		if v := rd.fields[rd.upstreamMS]; len(v) > 0 && !(len(v) == 1 && v[0] == '-') && string(v) != "-1" { // -1: HAProxy's none
			ms, ok := parseDecimalMS(v) // read as seconds: the value is ms
			if !ok {
				rd.bad(ReasonService, line)
				return
			}
			req.ServiceMS = ms / 1000
		}
	} else if rd.upstream >= 0 {
		v := rd.fields[rd.upstream]
		if len(v) > 0 && !(len(v) == 1 && v[0] == '-') {
			ms, ok := upstreamMS(v)
			if !ok {
				rd.bad(ReasonService, line)
				return
			}
			req.ServiceMS = ms
		}
	}
	req.Conn = -1
	if rd.conn >= 0 {
		if c, ok := parseUint(rd.fields[rd.conn]); ok {
			req.Conn = c
		}
	}
	rd.stats.Requests++
	if rd.route != nil && !bytes.HasPrefix(rd.route.value(rd.fields), []byte(rd.opt.Route)) ||
		rd.opt.Status != nil && !rd.opt.Status.Match(int(req.Status)) ||
		!rd.f.k6 && !rd.inTime(req.StartMS) {
		rd.stats.Filtered++
		return
	}
	for i, k := range rd.keys {
		if j := rd.same[i]; j < i {
			req.Keys[i] = req.Keys[j]
		} else {
			req.Keys[i] = k.slot(rd.fields)
		}
	}
	for i := len(rd.keys); i < MaxKeys; i++ {
		req.Keys[i] = -1
	}
	if rd.f.k6 {
		// its start waits for its http_req_duration, the next line
		rd.pending, rd.hasPending = req, true
		rd.pendingTime = append(rd.pendingTime[:0], rd.fields[rd.k6Time]...)
		rd.pendingLine = append(rd.pendingLine[:0], line...)
		return
	}
	rd.place(req, sec, line)
}

// inTime says whether a start is in the time filter's range.
func (rd *Reader) inTime(startMS float64) bool {
	return !(rd.opt.FromMS != 0 && startMS < rd.opt.FromMS || rd.opt.ToMS != 0 && startMS >= rd.opt.ToMS)
}

// k6Point reads a k6 line that is not an http_reqs point (k6's other
// metrics are skipped): an http_req_duration point of the pending
// request's time gives its start (the point's time, the request's end,
// less its duration) and service time. It says whether the line is an
// http_reqs point, a request.
func (rd *Reader) k6Point() bool {
	if string(rd.fields[rd.k6Type]) == "Point" && string(rd.fields[rd.k6Metric]) == "http_reqs" {
		rd.finishPending()
		return true
	}
	rd.stats.Skipped++
	if rd.hasPending && string(rd.fields[rd.k6Metric]) == "http_req_duration" && bytes.Equal(rd.fields[rd.k6Time], rd.pendingTime) {
		v := rd.fields[rd.k6Value]
		ms, ok := parseDecimalMS(v) // read as seconds: the value is ms
		ms /= 1000
		if !ok {
			f, err := strconv.ParseFloat(string(v), 64)
			ms, ok = f, err == nil && f >= 0 && !math.IsInf(f, 0)
		}
		if ok {
			rd.pending.StartMS -= ms
			rd.pending.ServiceMS = ms
		}
		rd.finishPending()
	}
	return false
}

// finishPending places the pending k6 request (at its end when no
// http_req_duration followed it).
func (rd *Reader) finishPending() {
	if !rd.hasPending {
		return
	}
	rd.hasPending = false
	if !rd.inTime(rd.pending.StartMS) {
		rd.stats.Filtered++
		return
	}
	rd.place(rd.pending, int64(math.Floor(rd.pending.StartMS/1000)), rd.pendingLine)
}

// upstreamMS sums $upstream_response_time's values ("0.004", "0.010,
// 0.004", "0.002 : 0.003"); "-" for an upstream that gave no time counts 0.
func upstreamMS(v []byte) (float64, bool) {
	total := 0.0
	for len(v) > 0 {
		i := bytes.IndexAny(v, ",:")
		part := v
		if i >= 0 {
			part, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		part = bytes.TrimSpace(part)
		if len(part) == 1 && part[0] == '-' {
			continue
		}
		if string(part) == "-1" { // ALB: no target answered
			return math.NaN(), true
		}
		ms, ok := parseDecimalMS(part)
		if !ok {
			return 0, false
		}
		total += ms
	}
	return total, true
}

// place puts a request in its second's bucket, emitting the seconds that
// fell out of the window; a request before them is late.
func (rd *Reader) place(req Request, sec int64, line []byte) {
	if !rd.started {
		rd.started, rd.maxSec, rd.flushed = true, sec, sec
	}
	if sec < rd.flushed {
		rd.stats.Requests--
		rd.bad(ReasonLate, line)
		return
	}
	if sec > rd.maxSec {
		rd.flush(sec - rd.windowSec)
		rd.maxSec = sec
	}
	if rd.held >= rd.maxHeld {
		rd.full = fmt.Errorf("line %d: the reorder window holds %d requests, the most it may (%g s of the log, %d a second on average): lower the reorder window", rd.line, rd.held, float64(rd.windowSec), rd.held/int(max(1, rd.windowSec)))
		return
	}
	b := rd.bucket(sec)
	if len(b.reqs) == 0 {
		b.sec = sec
	}
	b.reqs = append(b.reqs, req)
	rd.held++
}

// bucket is second sec's place in the ring (a time before 1970 too).
func (rd *Reader) bucket(sec int64) *bucket {
	i := sec % int64(len(rd.ring))
	if i < 0 {
		i += int64(len(rd.ring))
	}
	return &rd.ring[i]
}

// flush emits every second before upTo (all, at the end), in order.
func (rd *Reader) flush(upTo int64) {
	if !rd.started {
		return
	}
	end := min(upTo, rd.maxSec+1)
	for s := rd.flushed; s < end; s++ {
		b := rd.bucket(s)
		if len(b.reqs) == 0 || b.sec != s {
			continue
		}
		rd.emit(b.reqs, s)
		rd.held -= len(b.reqs)
		b.reqs = b.reqs[:0]
	}
	if upTo > rd.flushed {
		rd.flushed = upTo
	}
}

// emit appends one second's requests in start order: sorted by start
// (ties by $connection when logged, else in line order), or, with whole-second times, spread evenly across
// the second in line order.
func (rd *Reader) emit(reqs []Request, sec int64) {
	if rd.stats.Approximate {
		n := float64(len(reqs))
		for i := range reqs {
			reqs[i].StartMS = float64(sec*1000) + (float64(i)+0.5)*1000/n
		}
	} else {
		slices.SortStableFunc(reqs, func(a, b Request) int {
			switch {
			case a.StartMS < b.StartMS:
				return -1
			case a.StartMS > b.StartMS:
				return 1
			case a.Conn >= 0 && b.Conn >= 0 && a.Conn != b.Conn:
				if a.Conn < b.Conn {
					return -1
				}
				return 1
			}
			return 0
		})
	}
	rd.out = append(rd.out, reqs...)
}

// StatusFilter keeps statuses by code, class or range ("2xx,404,500-504").
type StatusFilter struct {
	ranges [][2]int
	Text   string
}

// ParseStatusFilter reads "2xx,404,500-504" (and "!" before the list to
// keep everything else).
func ParseStatusFilter(s string) (*StatusFilter, error) {
	f := &StatusFilter{Text: s}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		switch {
		case len(item) == 3 && strings.HasSuffix(item, "xx") && item[0] >= '1' && item[0] <= '5':
			c := int(item[0]-'0') * 100
			f.ranges = append(f.ranges, [2]int{c, c + 99})
		case strings.Contains(item, "-"):
			a, b, _ := strings.Cut(item, "-")
			lo, err1 := strconv.Atoi(a)
			hi, err2 := strconv.Atoi(b)
			if err1 != nil || err2 != nil || lo > hi {
				return nil, fmt.Errorf("status %q: give codes (404), classes (5xx) or ranges (500-504)", item)
			}
			f.ranges = append(f.ranges, [2]int{lo, hi})
		default:
			c, err := strconv.Atoi(item)
			if err != nil || c < 100 || c > 999 {
				return nil, fmt.Errorf("status %q: give codes (404), classes (5xx) or ranges (500-504)", item)
			}
			f.ranges = append(f.ranges, [2]int{c, c})
		}
	}
	return f, nil
}

// Match says whether the filter keeps status.
func (f *StatusFilter) Match(status int) bool {
	for _, r := range f.ranges {
		if status >= r[0] && status <= r[1] {
			return true
		}
	}
	return false
}

// localMS reads HAProxy's date "01/Dec/2026:20:51:09.876" (local time,
// no zone) as Unix ms in the reader's time zone; the second is read once
// for all the lines in it.
func (rd *Reader) localMS(b []byte) (float64, bool) {
	if len(b) < 22 || b[20] != '.' {
		return 0, false
	}
	if !bytes.Equal(b[:20], rd.lastLocal) {
		sec, ok := parseDateNoZone(b[:20], rd.loc)
		if !ok {
			return 0, false
		}
		rd.lastLocal, rd.lastLocalSec = append(rd.lastLocal[:0], b[:20]...), sec
	}
	frac := b[21:]
	if len(frac) > 9 {
		return 0, false
	}
	v, ok := parseUint(frac)
	if !ok {
		return 0, false
	}
	scale := 1.0
	for range frac {
		scale *= 10
	}
	return float64(rd.lastLocalSec*1000) + float64(v)*1000/scale, true
}
