package accesslog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// compileJSON reads a JSON log_format's object: each "key": "$var" or
// "key": $var names the variable's field; a key whose value is anything
// else (text around a variable, several variables) is read and ignored.
func (f *Format) compileJSON(text string) error {
	f.jsonKeys = map[string]int{}
	s := strings.TrimSpace(text)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return errors.New("log format: a JSON format is one object, { ... }")
	}
	s = s[1 : len(s)-1]
	for i := 0; i < len(s); {
		switch s[i] {
		case ' ', '\t', '\n', '\r', ',':
			i++
			continue
		case '"':
		default:
			return fmt.Errorf("log format: JSON: expected a quoted key at %q", clip(s[i:]))
		}
		j := strings.IndexByte(s[i+1:], '"')
		if j < 0 {
			return errors.New("log format: JSON: unterminated key")
		}
		key := s[i+1 : i+1+j]
		i += j + 2
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) || s[i] != ':' {
			return fmt.Errorf("log format: JSON: no ':' after key %q", key)
		}
		i++
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		var value string
		if i < len(s) && s[i] == '"' {
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return fmt.Errorf("log format: JSON: unterminated value of %q", key)
			}
			value = s[i+1 : i+1+j]
			i += j + 2
		} else {
			j := strings.IndexAny(s[i:], ",}")
			if j < 0 {
				j = len(s) - i
			}
			value = strings.TrimSpace(s[i : i+j])
			i += j
		}
		if _, dup := f.jsonKeys[key]; dup {
			return fmt.Errorf("log format: JSON: key %q twice", key)
		}
		if strings.HasPrefix(value, "$") {
			name, n, err := variable(value, 1)
			if err == nil && 1+n == len(value) {
				if _, logged := f.index[name]; !logged {
					f.jsonKeys[key] = f.field(name)
				}
			}
		}
	}
	if len(f.vars) == 0 {
		return errors.New("log format: JSON: no key's value is a variable")
	}
	return nil
}

// splitJSON reads one JSON object a line into fields: strings unescaped
// (into scratch when they hold escapes), numbers, true, false and null as
// written (null as empty). A nested object's keys are its path
// ("data.tags.status"), as a format names them; keys the format does not
// name, and arrays, are skipped. path is the caller's buffer.
func (f *Format) splitJSON(line []byte, fields [][]byte, scratch, path *[]byte) error {
	// Unescaped text is never longer than the line: with this capacity
	// scratch never moves, so earlier fields stay valid.
	if cap(*scratch) < len(line) {
		*scratch = make([]byte, 0, len(line))
	}
	*scratch = (*scratch)[:0]
	*path = (*path)[:0]
	end, err := f.jsonObject(line, skipSpace(line, 0), fields, scratch, path, 0)
	if err != nil {
		return err
	}
	if skipSpace(line, end) != len(line) {
		return errNotObject
	}
	return nil
}

// maxJSONDepth is the deepest nesting read.
const maxJSONDepth = 16

// jsonObject reads the object at line[i] whose path is *path, returning
// the index after it.
func (f *Format) jsonObject(line []byte, i int, fields [][]byte, scratch, path *[]byte, depth int) (int, error) {
	if i >= len(line) || line[i] != '{' || depth > maxJSONDepth {
		return 0, errNotObject
	}
	i++
	base := len(*path)
	for {
		i = skipSpace(line, i)
		if i < len(line) && line[i] == '}' {
			return i + 1, nil
		}
		if i >= len(line) || line[i] != '"' {
			return 0, errNotObject
		}
		key, n, err := jsonString(line[i:], scratch)
		if err != nil {
			return 0, err
		}
		i = skipSpace(line, i+n)
		if i >= len(line) || line[i] != ':' {
			return 0, errNotObject
		}
		i = skipSpace(line, i+1)
		if i >= len(line) {
			return 0, errNotObject
		}
		if depth > 0 {
			*path = append(append((*path)[:base], '.'), key...)
			key = *path
		}
		var value []byte
		switch line[i] {
		case '"':
			value, n, err = jsonString(line[i:], scratch)
			if err != nil {
				return 0, err
			}
		case '{':
			if depth == 0 {
				*path = append((*path)[:0], key...)
			}
			end, err := f.jsonObject(line, i, fields, scratch, path, depth+1)
			if err != nil {
				return 0, err
			}
			n, value = end-i, nil
			*path = (*path)[:base]
			i += n
			i = skipSpace(line, i)
			if i < len(line) && line[i] == ',' {
				i++
			}
			continue
		case '[':
			end, ok := skipJSONArray(line, i)
			if !ok {
				return 0, errNotObject
			}
			n, value = end-i, nil
		default:
			n = 0
			for i+n < len(line) && line[i+n] != ',' && line[i+n] != '}' && line[i+n] != ' ' && line[i+n] != ']' {
				n++
			}
			value = line[i : i+n]
			if n == 0 {
				return 0, errNotObject
			}
			if string(value) == "null" {
				value = value[:0]
			}
		}
		if value != nil {
			if fi, ok := f.jsonKeys[string(key)]; ok {
				fields[fi] = value
			}
		}
		*path = (*path)[:base]
		i = skipSpace(line, i+n)
		if i < len(line) && line[i] == ',' {
			i++
		}
	}
}

// skipJSONArray is the index after the array at line[i] (strings read
// for their quotes, nesting counted).
func skipJSONArray(line []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(line); i++ {
		switch line[i] {
		case '"':
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' {
					i++
				}
			}
			if i >= len(line) {
				return 0, false
			}
		case '[', '{':
			depth++
			if depth > maxJSONDepth {
				return 0, false
			}
		case ']', '}':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}

var (
	errNotObject = errors.New("not a JSON object of the log format's keys")
	errBadString = errors.New("a JSON string with a bad escape or no end")
)

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// jsonString reads the quoted string at b[0]: its text (b's own bytes
// when it holds no escape, else unescaped into scratch) and the bytes read.
func jsonString(b []byte, scratch *[]byte) ([]byte, int, error) {
	for j := 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return b[1:j], j + 1, nil
		case '\\':
			return jsonUnescape(b, scratch)
		}
	}
	return nil, 0, errBadString
}

func jsonUnescape(b []byte, scratch *[]byte) ([]byte, int, error) {
	start := len(*scratch)
	out := *scratch
	for j := 1; j < len(b); j++ {
		c := b[j]
		if c == '"' {
			*scratch = out
			return out[start:], j + 1, nil
		}
		if c != '\\' {
			out = append(out, c)
			continue
		}
		j++
		if j >= len(b) {
			break
		}
		switch b[j] {
		case '"', '\\', '/':
			out = append(out, b[j])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if j+4 >= len(b) {
				return nil, 0, errBadString
			}
			v, err := strconv.ParseUint(string(b[j+1:j+5]), 16, 16)
			if err != nil {
				return nil, 0, errBadString
			}
			out = utf8.AppendRune(out, rune(v))
			j += 4
		default:
			return nil, 0, errBadString
		}
	}
	return nil, 0, errBadString
}

// clip shortens text for a message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
