// Package registry is the type table the engine's packages share (gate
// types in limiter, part types in workload): a list of rows in a fixed
// order, built on first use from the package's explicit list of built-in
// rows, to which a test or a program embedding the engine may add rows.
package registry

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ratelab/ratelab/experiments/field"
)

// Row is a table's row: its key is the type name a config document uses.
type Row[K ~string] interface {
	comparable
	Key() K
}

// Table is a list of rows, safe for concurrent use; the zero value is an
// empty table that fills itself from the builtin list passed to every
// call. (The list is passed in, not stored, because the rows' own
// functions look types up in the table: a package-level initializer would
// be a cycle.)
type Table[K ~string, R Row[K]] struct {
	mu   sync.Mutex
	rows []R
}

// rowsLocked is the table, built from builtin on first use. Callers hold mu.
func (t *Table[K, R]) rowsLocked(builtin func() []R) []R {
	if t.rows == nil {
		t.rows = builtin()
	}
	return t.rows
}

// Rows lists the rows in table order.
func (t *Table[K, R]) Rows(builtin func() []R) []R {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.rowsLocked(builtin))
}

// Lookup finds the row of a key.
func (t *Table[K, R]) Lookup(builtin func() []R, key K) (R, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.rowsLocked(builtin) {
		if r.Key() == key {
			return r, true
		}
	}
	var zero R
	return zero, false
}

// Register adds a row after the others and returns the function that
// removes it again. It panics on an empty key or a key already in the
// table.
func (t *Table[K, R]) Register(builtin func() []R, r R) (unregister func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.Key() == "" {
		panic("registry: a row needs a type name")
	}
	for _, have := range t.rowsLocked(builtin) {
		if have.Key() == r.Key() {
			panic(fmt.Sprintf("registry: %q is already registered", r.Key()))
		}
	}
	t.rows = append(t.rows, r)
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.rows = slices.DeleteFunc(t.rows, func(have R) bool { return have == r })
	}
}

// Keys lists the rows' keys in table order.
func (t *Table[K, R]) Keys(builtin func() []R) []K {
	rows := t.Rows(builtin)
	out := make([]K, len(rows))
	for i, r := range rows {
		out[i] = r.Key()
	}
	return out
}

// KeyList is Keys joined with commas, for messages.
func (t *Table[K, R]) KeyList(builtin func() []R) string {
	keys := t.Keys(builtin)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = string(k)
	}
	return strings.Join(out, ", ")
}

// Object reads a raw typed object of a config (a limiter, a workload
// part): its keys and the row of its "type". errs says what is wrong with
// the object or its type (missing, not a string, unknown), under path;
// what names the kind of object in messages ("limiter", "part type").
func (t *Table[K, R]) Object(builtin func() []R, path string, raw json.RawMessage, what string) (keys map[string]json.RawMessage, row R, errs field.List) {
	if err := json.Unmarshal(raw, &keys); err != nil || keys == nil {
		errs.Add(path, "must be an object")
		return nil, row, errs
	}
	typePath := field.Join(path, "type")
	rawType, ok := keys["type"]
	if !ok {
		errs.Add(typePath, "is required (one of %v)", t.Keys(builtin))
		return keys, row, errs
	}
	var name string
	if err := json.Unmarshal(rawType, &name); err != nil {
		errs.Add(typePath, "must be a string")
		return keys, row, errs
	}
	row, ok = t.Lookup(builtin, K(name))
	if !ok {
		errs.Add(typePath, "unknown %s %q (one of %v)", what, name, t.Keys(builtin))
	}
	return keys, row, errs
}

// Unique gathers the rows' entries of some list (parameters, fields), the
// first of each name, in table order.
func Unique[K ~string, R Row[K], T any](rows []R, of func(R) []T, name func(T) string) []T {
	var out []T
	seen := map[string]bool{}
	for _, r := range rows {
		for _, x := range of(r) {
			if !seen[name(x)] {
				seen[name(x)] = true
				out = append(out, x)
			}
		}
	}
	return out
}

// With lists the keys of the rows for which has is true, in table order.
func With[K ~string, R Row[K]](rows []R, has func(R) bool) []K {
	var out []K
	for _, r := range rows {
		if has(r) {
			out = append(out, r.Key())
		}
	}
	return out
}
