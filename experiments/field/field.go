// Package field reports validation errors with the path of the field at
// fault, such as "limiters[1].burst: must be at least 1", so a user (or a
// form) can point at the exact input that is wrong.
package field

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is one invalid field: Path in JSON notation ("workload.parts[0].rate_rps")
// and a message that says what is wrong and what is allowed.
type Error struct {
	Path string `json:"path"`
	Msg  string `json:"message"`
}

func (e Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// List collects field errors in the order they were found.
type List []Error

// Add appends an error at path.
func (l *List) Add(path, format string, args ...any) {
	*l = append(*l, Error{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// Err returns nil for an empty list, else the list as an error.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

func (l List) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Join returns path.name, or name when path is empty.
func Join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Index returns path[i].
func Index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// Errors extracts the field errors of err: a List or a single Error,
// also wrapped (errors.As), or a plain error reported without a path.
func Errors(err error) List {
	if err == nil {
		return nil
	}
	var l List
	if errors.As(err, &l) {
		return l
	}
	var e Error
	if errors.As(err, &e) {
		return List{e}
	}
	return List{{Msg: err.Error()}}
}

// Line says what is wrong with a name that must be one line of printable
// text of at most max bytes, "" when nothing is: a line break, a tab, a
// NUL or any other control or unprintable character (unicode.IsPrint; the
// ASCII space is the one space allowed) would let the name end a comment
// or a line where an export, a page or a CSV file prints it.
func Line(s string, max int) string {
	if len(s) > max {
		return fmt.Sprintf("is longer than %d characters", max)
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return fmt.Sprintf("must be UTF-8 text: byte %d is not", i)
			}
		}
		if !unicode.IsPrint(r) {
			return fmt.Sprintf("must be one line of printable text: it has %U at byte %d", r, i)
		}
	}
	return ""
}
