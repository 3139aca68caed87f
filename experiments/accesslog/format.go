// Package accesslog reads web servers' access logs as a replay's requests:
// each line's start time at the best resolution the format gives, its
// status, its logged service time and the keys a limiter would look it up
// by (nginx's variables, or a combination of them, as a limit_req_zone key
// is). It reads an io.Reader line by line in bounded memory, reorders lines
// within a window (a server writes a line when its request ends, so lines
// are out of start order by up to the request's time), counts bad lines by
// reason, and opens nothing: the caller hands it the bytes (cmd/lab
// gunzips a file).
//
// Formats: nginx's combined, any log_format given as its definition
// (format.go), nginx's JSON (escape=json) log_format (json.go).
package accesslog

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Combined is nginx's predefined combined format.
const Combined = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`

// Format is a compiled log format: where each logged variable is on a line.
type Format struct {
	// Definition is the log_format text as compiled (the concatenated
	// strings, without the directive).
	Definition string
	json       bool
	vars       []string       // the logged variables, by field index
	index      map[string]int // variable name -> field index
	tokens     []token        // text formats: literals and variables in order
	jsonKeys   map[string]int // JSON formats: a key whose value is one variable -> its field
	syslog     bool           // lines may start with a syslog header (HAProxy's)
	csv        bool           // CSV lines, column i field i (vegeta's)
	k6         bool           // k6's JSON output: http_reqs points are the requests
}

// token is a literal (field < 0) or a variable (its field index).
type token struct {
	lit   []byte
	field int
}

// Vars are the variables the format logs, in order.
func (f *Format) Vars() []string { return slices.Clone(f.vars) }

// Logs says whether the format logs the variable (name without the $).
func (f *Format) Logs(name string) bool { _, ok := f.index[name]; return ok }

// JSON says whether the format is a JSON object a line (escape=json).
func (f *Format) JSON() bool { return f.json }

// ParseFormat compiles a log format: "combined"; a log_format directive as
// written in nginx.conf ("log_format main escape=json '{...}';"); its
// quoted strings alone ('$remote_addr - ...' '"$request" ...'); or the
// definition as plain text. A definition that starts with "{" is a JSON
// format (nginx's escape=json), each key whose value is one variable
// naming that variable's field.
func ParseFormat(def string) (*Format, error) {
	text, escapeJSON, err := formatText(def)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("log format: empty")
	}
	f := &Format{Definition: text, index: map[string]int{}}
	if escapeJSON || strings.HasPrefix(strings.TrimSpace(text), "{") {
		f.json = true
		if err := f.compileJSON(text); err != nil {
			return nil, err
		}
		return f, nil
	}
	if err := f.compileText(text); err != nil {
		return nil, err
	}
	return f, nil
}

// formatText is the definition's text: the directive's or quoted strings
// concatenated as nginx does, else the text as given.
func formatText(def string) (text string, escapeJSON bool, err error) {
	s := strings.TrimSpace(def)
	if s == "combined" {
		return Combined, false, nil
	}
	if rest, ok := strings.CutPrefix(s, "log_format"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n') {
		words, err := configWords(strings.TrimSuffix(strings.TrimSpace(rest), ";"))
		if err != nil {
			return "", false, fmt.Errorf("log_format: %w", err)
		}
		if len(words) < 2 {
			return "", false, errors.New("log_format: give a name and the format's strings")
		}
		words = words[1:] // the name
		if strings.HasPrefix(words[0], "escape=") {
			switch words[0] {
			case "escape=json":
				escapeJSON = true
			case "escape=default", "escape=none":
			default:
				return "", false, fmt.Errorf("log_format: %s: nginx takes escape=default, json or none", words[0])
			}
			words = words[1:]
		}
		return strings.Join(words, ""), escapeJSON, nil
	}
	if s != "" && (s[0] == '\'' || s[0] == '"') {
		words, err := configWords(s)
		if err == nil {
			return strings.Join(words, ""), false, nil
		}
	}
	return def, false, nil
}

// configWords splits nginx config text into words, unquoting quoted ones
// (with nginx's \" \' \\ escapes) and keeping newlines out.
func configWords(s string) ([]string, error) {
	var words []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && j+1 < len(s) && (s[j+1] == c || s[j+1] == '\\') {
					j++
				}
				b.WriteByte(s[j])
			}
			if j == len(s) {
				return nil, fmt.Errorf("unterminated %c string", c)
			}
			words = append(words, b.String())
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n", rune(s[j])) {
				j++
			}
			words = append(words, s[i:j])
			i = j
		}
	}
	return words, nil
}

// field is the index of a variable, added when new.
func (f *Format) field(name string) int {
	if i, ok := f.index[name]; ok {
		return i
	}
	f.index[name] = len(f.vars)
	f.vars = append(f.vars, name)
	return len(f.vars) - 1
}

// variable reads a variable name at s[i] (just after the $): $name or
// ${name}; n is the bytes read after the $.
func variable(s string, i int) (name string, n int, err error) {
	if i < len(s) && s[i] == '{' {
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", 0, fmt.Errorf("unterminated ${ at byte %d", i)
		}
		name = s[i+1 : i+j]
		n = j + 1
	} else {
		j := i
		for j < len(s) && isVarByte(s[j]) {
			j++
		}
		name, n = s[i:j], j-i
	}
	if name == "" {
		return "", 0, fmt.Errorf("a $ with no variable name at byte %d", i)
	}
	for k := 0; k < len(name); k++ {
		if !isVarByte(name[k]) {
			return "", 0, fmt.Errorf("variable name %q: letters, digits and _ only", name)
		}
	}
	return name, n, nil
}

func isVarByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// compileText turns a text definition into literals and variables. Two
// variables with nothing between them cannot be told apart: refused.
func (f *Format) compileText(text string) error {
	var lit []byte
	for i := 0; i < len(text); {
		if text[i] != '$' {
			lit = append(lit, text[i])
			i++
			continue
		}
		name, n, err := variable(text, i+1)
		if err != nil {
			return fmt.Errorf("log format: %w", err)
		}
		if len(lit) > 0 {
			f.tokens = append(f.tokens, token{lit: lit, field: -1})
			lit = nil
		} else if len(f.tokens) > 0 && f.tokens[len(f.tokens)-1].field >= 0 {
			return fmt.Errorf("log format: $%s follows $%s with nothing between them: the lines cannot be split", name, f.vars[f.tokens[len(f.tokens)-1].field])
		}
		if _, dup := f.index[name]; dup {
			// a variable logged twice: its second place is read and
			// ignored (a field of its own nobody asks for).
			f.tokens = append(f.tokens, token{field: f.field(name + "\x00" + fmt.Sprint(len(f.tokens)))})
		} else {
			f.tokens = append(f.tokens, token{field: f.field(name)})
		}
		i += 1 + n
	}
	if len(lit) > 0 {
		f.tokens = append(f.tokens, token{lit: lit, field: -1})
	}
	if len(f.vars) == 0 {
		return errors.New("log format: no variables")
	}
	return nil
}

// errNoMatch is a line the format's literals do not match.
var errNoMatch = errors.New("does not match the log format")

// splitText cuts a text line into fields (each a slice of line).
func (f *Format) splitText(line []byte, fields [][]byte) error {
	pos := 0
	for i, t := range f.tokens {
		if t.field < 0 {
			if !bytes.HasPrefix(line[pos:], t.lit) {
				return errNoMatch
			}
			pos += len(t.lit)
			continue
		}
		if i+1 == len(f.tokens) {
			fields[t.field] = line[pos:]
			pos = len(line)
			continue
		}
		next := f.tokens[i+1].lit
		var j int
		if len(next) == 1 {
			j = bytes.IndexByte(line[pos:], next[0])
		} else {
			j = bytes.Index(line[pos:], next)
		}
		if j < 0 {
			return errNoMatch
		}
		fields[t.field] = line[pos : pos+j]
		pos += j
	}
	if pos != len(line) {
		return errNoMatch
	}
	return nil
}
