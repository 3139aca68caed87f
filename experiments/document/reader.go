package document

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// Limits of a config document's shape, checked as it is read so that a
// large document is refused before it is held.
const (
	maxDepth     = 32      // nested lists and objects
	maxKeys      = 1000    // keys of one object
	maxKeyBytes  = 1000    // one key
	maxNumberLen = 1000    // characters of one number
	maxListLen   = 100_000 // entries of a list the engine does not bound more tightly
)

// documentReader reads one JSON document from an io.Reader, a byte at a time
// through a buffer, and never holds it whole. It checks what encoding/json
// lets pass: a key given twice in an object (at any depth; keys that differ
// only in case count as the same key, as encoding/json matches them), text
// that is not UTF-8 (or a lone surrogate escape), a number beyond float64,
// and the shape limits above. It writes the document back compactly,
// except the entries of the lists that have a sink (workload.parts and
// limiters): each of those is handed to its sink as it ends, decoded and
// dropped, so the compact copy (the skeleton) stays small.
type documentReader struct {
	r         *bufio.Reader
	n, max    int64 // bytes read, and the limit
	maxString int   // decoded bytes of one string (0: no limit but max)

	stack []pathStep
	// problems are found while reading goes on: the document is refused
	// once read. malformed: one of them makes it no JSON text (not UTF-8).
	problems  field.List
	malformed bool

	// sink, when set, takes the entries of the list at a path (see sinkFor).
	sink func(list sinkList, i int, raw []byte)
	elem []byte // the entry being read for a sink
	str  []byte // scratch for strings
	// trace is the csv of the workload part being read: a long string
	// kept out of its entry's JSON (which holds "" in its place).
	trace    string
	hasTrace bool
}

// pathStep is one step of the path to the value being read: an object key, or
// a list index (key "" and index >= 0).
type pathStep struct {
	key   string
	index int
}

type sinkList int

const (
	noSink sinkList = iota
	partsSink
	limitersSink
)

func (d *documentReader) path() string {
	p := ""
	for _, s := range d.stack {
		if s.index >= 0 {
			p = field.Index(p, s.index)
		} else {
			p = field.Join(p, s.key)
		}
	}
	return p
}

// at reports whether the path is keys (matched as encoding/json matches
// field names) and indexes: "" in want stands for any index.
func (d *documentReader) at(want ...string) bool {
	if len(d.stack) != len(want) {
		return false
	}
	for i, w := range want {
		s := d.stack[i]
		if (w == "") != (s.index >= 0) || (w != "" && !strings.EqualFold(w, s.key)) {
			return false
		}
	}
	return true
}

// sinkFor says which sink takes the entries of the list being opened.
func (d *documentReader) sinkFor() sinkList {
	switch {
	case d.sink == nil:
		return noSink
	case d.at("workload", "parts"):
		return partsSink
	case d.at("limiters"):
		return limitersSink
	}
	return noSink
}

// listLimit is the most entries the list being opened may have, and what
// they are called.
func (d *documentReader) listLimit() (int, string) {
	switch {
	case d.at("limiters"):
		return experiments.MaxLimiters, "limiters"
	case d.at("limiters", "", "stages"):
		return limiter.MaxStages, "stages"
	case len(d.stack) == 3 && d.at("limiters", "", d.stack[2].key),
		len(d.stack) == 5 && d.at("limiters", "", "stages", "", d.stack[4].key):
		return limiter.MaxValues, "values"
	}
	return maxListLen, "entries"
}

// Error refuses a document that is not JSON text (a syntax error,
// text that is not UTF-8) or that is past a size limit (TooLarge); Errors
// name where. errors.As finds its field.List.
type Error struct {
	TooLarge bool
	Errors   field.List
}

func (e *Error) Error() string { return e.Errors.Error() }

// Unwrap gives the field errors.
func (e *Error) Unwrap() error { return e.Errors }

// ReadError is a failure of the reader a document came from (for example
// an HTTP body past its limit, or a connection cut): the document was not
// refused, it could not be read.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return "read the document: " + e.Err.Error() }

// Unwrap gives the reader's error.
func (e *ReadError) Unwrap() error { return e.Err }

func (d *documentReader) syntax(format string, args ...any) error {
	errs := append(field.List(nil), d.problems...)
	errs.Add(d.path(), "is not valid JSON at byte %d: %s", d.n, fmt.Sprintf(format, args...))
	return &Error{Errors: errs}
}

// refuse ends reading with a field error at the current path.
func (d *documentReader) refuse(format string, args ...any) error {
	errs := append(field.List(nil), d.problems...)
	errs.Add(d.path(), format, args...)
	return errs
}

// problem records an error and reading goes on.
func (d *documentReader) problem(path, format string, args ...any) {
	if len(d.problems) < experiments.MaxFieldErrors {
		d.problems.Add(path, format, args...)
	}
}

func (d *documentReader) tooLarge() error {
	return &Error{TooLarge: true, Errors: field.List{{Msg: fmt.Sprintf("the document is larger than %s, the limit", sizeText(d.max))}}}
}

// sizeText says n bytes in MB when it is a whole number of them.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB (%d bytes)", n>>20, n)
	}
	return fmt.Sprintf("%d bytes", n)
}

func (d *documentReader) readErr(err error) error {
	if err == io.EOF {
		return d.syntax("the document ends too early")
	}
	return &ReadError{Err: err}
}

func (d *documentReader) next() (byte, error) {
	c, err := d.r.ReadByte()
	if err != nil {
		return 0, d.readErr(err)
	}
	d.n++
	if d.n > d.max {
		return 0, d.tooLarge()
	}
	return c, nil
}

// buffered returns the bytes buffered, reading more when there are none;
// its error is the reader's (bufio reports it once).
func (d *documentReader) buffered() ([]byte, error) {
	if d.r.Buffered() == 0 {
		if _, err := d.r.Peek(1); err != nil {
			return nil, err
		}
	}
	buf, _ := d.r.Peek(d.r.Buffered())
	return buf, nil
}

// peek skips white space and returns the next byte without reading it;
// io.EOF is returned as is.
func (d *documentReader) peek() (byte, error) {
	for {
		buf, err := d.buffered()
		if err == io.EOF {
			return 0, io.EOF
		}
		if err != nil {
			return 0, &ReadError{Err: err}
		}
		i := 0
		for i < len(buf) && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r') {
			i++
		}
		if d.n+int64(i) > d.max {
			return 0, d.tooLarge()
		}
		_, _ = d.r.Discard(i)
		d.n += int64(i)
		if i < len(buf) {
			return buf[i], nil
		}
	}
}

// peekMore is peek inside a value, where the end of the input is an error.
func (d *documentReader) peekMore() (byte, error) {
	c, err := d.peek()
	if err == io.EOF {
		return 0, d.syntax("the document ends too early")
	}
	return c, err
}

// document reads the whole input: one value, then only white space.
func (d *documentReader) document(out *[]byte) error {
	if _, err := d.peek(); err == io.EOF {
		return &Error{Errors: field.List{{Msg: "is empty: a config document is a JSON object"}}}
	} else if err != nil {
		return err
	}
	if err := d.value(out, 0); err != nil {
		return err
	}
	switch _, err := d.peek(); {
	case err == io.EOF:
	case err != nil:
		return err
	default:
		return d.syntax("unexpected data after the JSON value")
	}
	if len(d.problems) > 0 {
		if d.malformed {
			return &Error{Errors: d.problems}
		}
		return d.problems
	}
	return nil
}

// value reads one value and appends it compactly to *out (out nil: the
// value is checked and dropped).
func (d *documentReader) value(out *[]byte, depth int) error {
	c, err := d.peekMore()
	if err != nil {
		return err
	}
	switch {
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return d.refuse("nests lists and objects more than %d deep, the limit", maxDepth)
		}
		if c == '{' {
			return d.object(out, depth+1)
		}
		return d.array(out, depth+1)
	case c == '"':
		d.str, err = d.string(d.str[:0], false)
		if err != nil {
			return err
		}
		if len(d.stack) == 4 && d.at("workload", "parts", "", "csv") {
			// A trace: set aside, not passed through encoding/json.
			d.trace, d.hasTrace = string(d.str), true
			if out != nil {
				*out = append(*out, `""`...)
			}
			return nil
		}
		if out != nil {
			*out = appendString(*out, d.str)
		}
		return nil
	case c == '-' || c >= '0' && c <= '9':
		return d.number(out)
	case c == 't':
		return d.literal(out, "true")
	case c == 'f':
		return d.literal(out, "false")
	case c == 'n':
		return d.literal(out, "null")
	}
	return d.syntax("unexpected character %s where a value belongs", quoteByte(c))
}

func quoteByte(c byte) string {
	if c < utf8.RuneSelf {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (d *documentReader) literal(out *[]byte, word string) error {
	for i := range len(word) {
		c, err := d.next()
		if err != nil {
			return err
		}
		if c != word[i] {
			return d.syntax("unexpected character %s in %s", quoteByte(c), word)
		}
	}
	if out != nil {
		*out = append(*out, word...)
	}
	return nil
}

func (d *documentReader) object(out *[]byte, depth int) error {
	if _, err := d.next(); err != nil { // {
		return err
	}
	if out != nil {
		*out = append(*out, '{')
	}
	var seen map[string]string // folded key → key as written
	for n := 0; ; n++ {
		c, err := d.peekMore()
		if err != nil {
			return err
		}
		if c == '}' && n == 0 {
			break
		}
		if c != '"' {
			return d.syntax("expected a key in double quotes, not %s", quoteByte(c))
		}
		if n == maxKeys {
			return d.refuse("has more than %d keys, the limit", maxKeys)
		}
		key, err := d.string(nil, true)
		if err != nil {
			return err
		}
		k := string(key)
		if seen == nil {
			seen = map[string]string{}
		}
		folded := foldKey(k)
		if first, dup := seen[folded]; dup {
			if first == k {
				d.problem(field.Join(d.path(), k), "is given twice in one object: give each key once")
			} else {
				d.problem(field.Join(d.path(), k), "is given twice in one object, also as %q (keys are matched without regard to case): give each key once", first)
			}
		} else {
			seen[folded] = k
		}
		if c, err = d.peekMore(); err != nil {
			return err
		}
		if c != ':' {
			return d.syntax("expected ':' after the key %q, not %s", k, quoteByte(c))
		}
		if _, err := d.next(); err != nil {
			return err
		}
		if out != nil {
			if n > 0 {
				*out = append(*out, ',')
			}
			*out = appendString(*out, key)
			*out = append(*out, ':')
		}
		d.stack = append(d.stack, pathStep{key: k, index: -1})
		err = d.value(out, depth)
		d.stack = d.stack[:len(d.stack)-1]
		if err != nil {
			return err
		}
		if c, err = d.peekMore(); err != nil {
			return err
		}
		if c == '}' {
			break
		}
		if c != ',' {
			return d.syntax("expected ',' or '}' after an object member, not %s", quoteByte(c))
		}
		if _, err := d.next(); err != nil {
			return err
		}
	}
	if _, err := d.next(); err != nil { // }
		return err
	}
	if out != nil {
		*out = append(*out, '}')
	}
	return nil
}

func (d *documentReader) array(out *[]byte, depth int) error {
	if _, err := d.next(); err != nil { // [
		return err
	}
	sink := d.sinkFor()
	limit, what := d.listLimit()
	if out != nil {
		*out = append(*out, '[')
	}
	for i := 0; ; i++ {
		c, err := d.peekMore()
		if err != nil {
			return err
		}
		if c == ']' && i == 0 {
			break
		}
		if i == limit {
			return d.refuse("has more than %d %s: at most %d %s are allowed", limit, what, limit, what)
		}
		d.stack = append(d.stack, pathStep{index: i})
		if sink != noSink {
			d.elem, d.trace, d.hasTrace = d.elem[:0], "", false
			if err = d.value(&d.elem, depth); err == nil && len(d.problems) == 0 {
				d.sink(sink, i, d.elem)
			}
		} else {
			if out != nil && i > 0 {
				*out = append(*out, ',')
			}
			err = d.value(out, depth)
		}
		d.stack = d.stack[:len(d.stack)-1]
		if err != nil {
			return err
		}
		if c, err = d.peekMore(); err != nil {
			return err
		}
		if c == ']' {
			break
		}
		if c != ',' {
			return d.syntax("expected ',' or ']' after a list entry, not %s", quoteByte(c))
		}
		if _, err := d.next(); err != nil {
			return err
		}
	}
	if _, err := d.next(); err != nil { // ]
		return err
	}
	if out != nil {
		*out = append(*out, ']')
	}
	return nil
}

// string reads a string (the opening quote is next), appending its decoded
// bytes to dst: a key (at most maxKeyBytes) or a value (at most maxString
// when it is set; past it the document is too large). Text that is not
// UTF-8 is a problem at the current path.
func (d *documentReader) string(dst []byte, key bool) ([]byte, error) {
	if _, err := d.next(); err != nil { // "
		return dst, err
	}
	start, limit := len(dst), d.maxString
	if key {
		limit = maxKeyBytes
	}
	bad := false
	tooLong := func() error {
		if key {
			return d.refuse("has a key longer than %d bytes, the limit", limit)
		}
		return &Error{TooLarge: true, Errors: field.List{{Path: d.path(), Msg: fmt.Sprintf("is longer than %s, the limit of one string", sizeText(int64(limit)))}}}
	}
	for {
		// Take the bytes buffered at once: plain ones, and escapes of
		// one character (a trace has a \n every few bytes).
		buf, err := d.buffered()
		if err != nil {
			return dst, d.readErr(err)
		}
		i := 0
		for i < len(buf) {
			if c := buf[i]; c >= 0x20 && c != '"' && c != '\\' {
				i++
			} else if c == '\\' && i+1 < len(buf) && shortEscape[buf[i+1]] != 0 {
				i += 2
			} else {
				break
			}
		}
		if cap(dst)-len(dst) < i {
			// Double: append grows a large slice by a quarter, and a long
			// string would be copied many times over.
			dst = append(make([]byte, 0, 2*cap(dst)+i), dst...)
		}
		for run := buf[:i]; len(run) > 0; {
			j := bytes.IndexByte(run, '\\')
			if j < 0 {
				dst = append(dst, run...)
				break
			}
			dst = append(dst, run[:j]...)
			dst = append(dst, shortEscape[run[j+1]])
			run = run[j+2:]
		}
		if d.n+int64(i) > d.max {
			return dst, d.tooLarge()
		}
		if limit > 0 && len(dst)-start > limit {
			return dst, tooLong()
		}
		_, _ = d.r.Discard(i)
		d.n += int64(i)
		c, err := d.next()
		if err != nil {
			return dst, err
		}
		switch {
		case c == '"':
			if !bad && !utf8.Valid(dst[start:]) {
				bad = true
			}
			if bad {
				d.malformed = true
				what := "is not"
				if key {
					what = "has a key that is not"
				}
				d.problem(d.path(), "%s valid UTF-8 text: a config document is UTF-8, and a string may not hold a lone surrogate (\\ud800 to \\udfff)", what)
			}
			return dst, nil
		case c < 0x20:
			return dst, d.syntax("a control character (%#x) in a string: write it as an escape such as \\n", c)
		case c == '\\':
			if dst, err = d.escape(dst, &bad); err != nil {
				return dst, err
			}
		default:
			dst = append(dst, c)
		}
		if limit > 0 && len(dst)-start > limit {
			return dst, tooLong()
		}
	}
}

// shortEscape maps the byte after a backslash to what it stands for (0:
// not an escape of one character).
var shortEscape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func (d *documentReader) escape(dst []byte, bad *bool) ([]byte, error) {
	c, err := d.next()
	if err != nil {
		return dst, err
	}
	switch c {
	case '"', '\\', '/':
		return append(dst, c), nil
	case 'b':
		return append(dst, '\b'), nil
	case 'f':
		return append(dst, '\f'), nil
	case 'n':
		return append(dst, '\n'), nil
	case 'r':
		return append(dst, '\r'), nil
	case 't':
		return append(dst, '\t'), nil
	case 'u':
		r, err := d.hex4()
		if err != nil {
			return dst, err
		}
		if utf16.IsSurrogate(r) {
			r2 := rune(-1)
			if r < 0xdc00 {
				// A high surrogate must be followed by \u and a low one.
				c, err := d.r.Peek(2)
				if err != nil && err != io.EOF {
					return dst, &ReadError{Err: err}
				}
				if err == nil && c[0] == '\\' && c[1] == 'u' {
					if _, err := d.next(); err != nil {
						return dst, err
					}
					if _, err := d.next(); err != nil {
						return dst, err
					}
					if r2, err = d.hex4(); err != nil {
						return dst, err
					}
				}
			}
			if p := utf16.DecodeRune(r, r2); p != unicode.ReplacementChar {
				return utf8.AppendRune(dst, p), nil
			}
			*bad = true
			dst = utf8.AppendRune(dst, unicode.ReplacementChar)
			if r2 >= 0 && !utf16.IsSurrogate(r2) {
				dst = utf8.AppendRune(dst, r2)
			}
			return dst, nil
		}
		return utf8.AppendRune(dst, r), nil
	}
	return dst, d.syntax("an unknown escape \\%s in a string", string(rune(c)))
}

func (d *documentReader) hex4() (rune, error) {
	var r rune
	for range 4 {
		c, err := d.next()
		if err != nil {
			return 0, err
		}
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, d.syntax("a \\u escape needs four hex digits, not %s", quoteByte(c))
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// number reads a number under JSON's grammar and refuses one beyond
// float64 (every number of a config is a float64 or fits one).
func (d *documentReader) number(out *[]byte) error {
	var b [64]byte
	num := b[:0]
	digits := func() (int, error) {
		n := 0
		for {
			c, err := d.r.ReadByte()
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, &ReadError{Err: err}
			}
			if c < '0' || c > '9' {
				_ = d.r.UnreadByte()
				return n, nil
			}
			if d.n++; d.n > d.max {
				return n, d.tooLarge()
			}
			if len(num) == maxNumberLen {
				return n, d.refuse("is a number longer than %d characters, the limit", maxNumberLen)
			}
			num = append(num, c)
			n++
		}
	}
	opt := func(set string) (bool, error) {
		c, err := d.r.ReadByte()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, &ReadError{Err: err}
		}
		if !strings.ContainsRune(set, rune(c)) {
			_ = d.r.UnreadByte()
			return false, nil
		}
		if d.n++; d.n > d.max {
			return false, d.tooLarge()
		}
		num = append(num, c)
		return true, nil
	}
	if _, err := opt("-"); err != nil {
		return err
	}
	n, err := digits()
	if err != nil {
		return err
	}
	if n == 0 {
		return d.syntax("a number needs a digit after '-'")
	}
	if n > 1 && num[len(num)-n] == '0' {
		return d.syntax("a number may not start with 0 (%s)", num)
	}
	if ok, err := opt("."); err != nil {
		return err
	} else if ok {
		if n, err := digits(); err != nil {
			return err
		} else if n == 0 {
			return d.syntax("a number needs a digit after '.'")
		}
	}
	if ok, err := opt("eE"); err != nil {
		return err
	} else if ok {
		if _, err := opt("+-"); err != nil {
			return err
		}
		if n, err := digits(); err != nil {
			return err
		} else if n == 0 {
			return d.syntax("a number needs a digit in its exponent")
		}
	}
	if v, err := strconv.ParseFloat(string(num), 64); err != nil && math.IsInf(v, 0) {
		d.problem(d.path(), "is %s, beyond the range of numbers: a number here is at most %g in magnitude", num, math.MaxFloat64)
	}
	if out != nil {
		*out = append(*out, num...)
	}
	return nil
}

// appendString appends s (UTF-8) as a JSON string.
func appendString(out, s []byte) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i, c := range s {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// foldKey maps keys that encoding/json would take for the same field
// (equal under Unicode simple case folding) to one string.
func foldKey(k string) string {
	ascii := true
	for i := range len(k) {
		if k[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(k)
	}
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, k)
}

// errorsKept trims a list of field errors to MaxFieldErrors, saying so.
func errorsKept(errs field.List) field.List {
	if len(errs) <= experiments.MaxFieldErrors {
		return errs
	}
	more := len(errs) - experiments.MaxFieldErrors
	errs = errs[:experiments.MaxFieldErrors:experiments.MaxFieldErrors]
	errs.Add("", "and %d more errors (the first %d are listed)", more, experiments.MaxFieldErrors)
	return errs
}
