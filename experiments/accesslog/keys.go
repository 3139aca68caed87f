package accesslog

import (
	"bytes"
	"fmt"
	"strings"
)

// A value a key or filter reads from a line: a logged variable's field or
// one derived from the fields (nginx's $uri from $request, ...).
type source struct {
	field  int    // a logged field, or -1
	derive int    // what to derive (deriveNone)
	from   int    // the field it derives from
	arg    string // $arg_NAME's name
}

const (
	deriveNone = iota
	deriveMethod
	derivePath // $uri: the request's path without the query
	deriveRequestURI
	deriveArgs
	deriveArg
	deriveHost // the address of "address:port" ("[v6]:port")
)

// resolve finds how a line gives variable name: logged, or derived from a
// logged one. The error names what the format logs.
func (f *Format) resolve(name string) (source, error) {
	if i, ok := f.index[name]; ok {
		return source{field: i}, nil
	}
	from := func(v string) (int, bool) { i, ok := f.index[v]; return i, ok }
	switch {
	case name == "binary_remote_addr" || name == "remote_addr":
		// one key per address as nginx's 4 or 16 bytes are
		if i, ok := from("remote_addr"); ok {
			return source{field: i}, nil
		}
		if i, ok := from("client_port"); ok { // ALB's client:port
			return source{field: -1, derive: deriveHost, from: i}, nil
		}
	case name == "uri" || name == "document_uri":
		if i, ok := from("request_uri"); ok {
			return source{field: -1, derive: derivePath, from: i}, nil
		}
		if i, ok := from("request"); ok {
			return source{field: -1, derive: derivePath, from: i}, nil
		}
	case name == "request_uri":
		if i, ok := from("request"); ok {
			return source{field: -1, derive: deriveRequestURI, from: i}, nil
		}
	case name == "request_method":
		if i, ok := from("request"); ok {
			return source{field: -1, derive: deriveMethod, from: i}, nil
		}
	case name == "args" || name == "query_string" || strings.HasPrefix(name, "arg_"):
		src := source{field: -1, derive: deriveArgs}
		if a, ok := strings.CutPrefix(name, "arg_"); ok {
			src.derive, src.arg = deriveArg, a
		}
		if i, ok := from("args"); ok {
			src.from = i
			if src.derive == deriveArgs {
				return source{field: i}, nil
			}
			src.derive = -src.derive // from $args itself
			return src, nil
		}
		if i, ok := from("request_uri"); ok {
			src.from = i
			return src, nil
		}
		if i, ok := from("request"); ok {
			src.from = i
			return src, nil
		}
	}
	return source{}, fmt.Errorf("$%s is not in the log format, nor derived from what it logs (it logs %s)", name, f.varList())
}

func (f *Format) varList() string {
	var names []string
	for _, v := range f.vars {
		if !strings.ContainsRune(v, 0) {
			names = append(names, "$"+v)
		}
	}
	return strings.Join(names, " ")
}

// value is the source's text on a line whose fields are given ("-", what
// nginx writes for a variable without a value, is empty).
func (s *source) value(fields [][]byte) []byte {
	var v []byte
	if s.field >= 0 {
		v = fields[s.field]
	} else {
		v = derived(s, fields[s.from])
	}
	if len(v) == 1 && v[0] == '-' {
		return nil
	}
	return v
}

// derived reads a part of a request line ("GET /a?b=1 HTTP/1.1"), a
// request URI ("/a?b=1") or, with derive negated, $args itself.
func derived(s *source, v []byte) []byte {
	d := s.derive
	if d < 0 { // from $args
		return argValue(v, s.arg)
	}
	if d == deriveHost {
		if i := bytes.LastIndexByte(v, ':'); i >= 0 {
			v = v[:i]
		}
		return bytes.TrimSuffix(bytes.TrimPrefix(v, []byte{'['}), []byte{']'})
	}
	uri := v
	if d == deriveMethod || bytes.IndexByte(v, ' ') >= 0 {
		method, rest, ok := bytes.Cut(v, []byte{' '})
		if !ok {
			return nil
		}
		if d == deriveMethod {
			return method
		}
		uri, _, _ = bytes.Cut(rest, []byte{' '})
	}
	path, args, _ := bytes.Cut(uri, []byte{'?'})
	if i := bytes.Index(path, []byte("://")); i >= 0 { // an absolute URI (ALB): its path
		if j := bytes.IndexByte(path[i+3:], '/'); j >= 0 {
			path = path[i+3+j:]
		} else {
			path = []byte{'/'}
		}
	}
	switch d {
	case derivePath:
		return path
	case deriveRequestURI:
		return uri
	case deriveArgs:
		return args
	case deriveArg:
		return argValue(args, s.arg)
	}
	return nil
}

// argValue is the value of the first argument called name in args
// ("a=1&b=2"), as nginx's $arg_name (names compared case-insensitively).
func argValue(args []byte, name string) []byte {
	for len(args) > 0 {
		var pair []byte
		pair, args, _ = bytes.Cut(args, []byte{'&'})
		k, v, _ := bytes.Cut(pair, []byte{'='})
		if bytes.EqualFold(k, []byte(name)) {
			return v
		}
	}
	return nil
}

// Key is a compiled key expression: nginx's complex value syntax, literal
// text and $variables ("$binary_remote_addr", "$http_x_api_key:$uri"),
// each variable logged by the format or derived from what it logs. A line
// whose key is empty (every variable empty and no literal text) has no
// key: nginx does not look such a request up in the zone.
type Key struct {
	Expr  string
	parts []keyPart
	names map[string]int32
	list  []string
	buf   []byte
}

type keyPart struct {
	lit []byte
	src *source
}

// CompileKey compiles a key expression against the format.
func (f *Format) CompileKey(expr string) (*Key, error) {
	k := &Key{Expr: expr, names: map[string]int32{}}
	var lit []byte
	for i := 0; i < len(expr); {
		if expr[i] != '$' {
			lit = append(lit, expr[i])
			i++
			continue
		}
		name, n, err := variable(expr, i+1)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", expr, err)
		}
		src, err := f.resolve(name)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", expr, err)
		}
		if len(lit) > 0 {
			k.parts = append(k.parts, keyPart{lit: lit})
			lit = nil
		}
		k.parts = append(k.parts, keyPart{src: &src})
		i += 1 + n
	}
	if len(lit) > 0 {
		k.parts = append(k.parts, keyPart{lit: lit})
	}
	return k, nil
}

// Constant says whether the key has no variable: one key for every line.
func (k *Key) Constant() bool {
	for _, p := range k.parts {
		if p.src != nil {
			return false
		}
	}
	return true
}

// slot is the key's index on a line (0, 1, ... in order of first
// appearance), -1 when empty.
func (k *Key) slot(fields [][]byte) int32 {
	var text []byte
	if len(k.parts) == 1 && k.parts[0].src != nil {
		text = k.parts[0].src.value(fields) // one variable: its bytes as they are
	} else {
		k.buf = k.buf[:0]
		for _, p := range k.parts {
			if p.src == nil {
				k.buf = append(k.buf, p.lit...)
			} else {
				k.buf = append(k.buf, p.src.value(fields)...)
			}
		}
		text = k.buf
	}
	if len(text) == 0 {
		return -1
	}
	if i, ok := k.names[string(text)]; ok {
		return i
	}
	i := int32(len(k.list))
	s := string(text)
	k.names[s] = i
	k.list = append(k.list, s)
	return i
}

// Name is the text of key slot i.
func (k *Key) Name(i int32) string {
	if i < 0 || int(i) >= len(k.list) {
		return ""
	}
	return k.list[i]
}

// Count is the number of keys seen.
func (k *Key) Count() int { return len(k.list) }
