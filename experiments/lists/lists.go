// Package lists is how a numeric field of a config section (a workload
// part, the server) takes a list of values to sweep: in JSON the field
// holds a number or a list of numbers ("rate_rps": [50, 100, 200]). The
// section's Go struct keeps one value per field (the first of the list, so
// every rule that reads the struct sees a valid value); the lists ride
// beside it, by JSON key, and Marshal writes them back in place.
//
// Which fields take a list is a property of the field's row in its
// section's table (workload.Field.Sweep, server.Field.Sweep), never a list
// of names here: Split asks the table, Set writes any numeric field by its
// JSON key, so a field added later is swept with no other edit.
package lists

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
)

// MaxValues bounds the values of one list.
const MaxValues = 1000

// Lists are the swept fields of one section: values by JSON key, in the
// order given. A field given one value (or a list of one) is no list.
type Lists map[string][]float64

// Split takes the keys of a raw JSON object whose value is a list of
// numbers and whose field takes lists (sweepable), and returns the object
// with each such key holding the list's first value, and the lists of
// more than one value. Errors name path.key (a list that is empty, too
// long, or holds other than numbers); a list in a key that takes none is
// left for the strict decoder to refuse ("must be a number, not a list").
func Split(raw []byte, path string, sweepable func(key string) bool) ([]byte, Lists, field.List) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' || !bytes.Contains(trimmed, []byte{'['}) {
		return raw, nil, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &keys); err != nil {
		return raw, nil, nil // the strict decoder reports it
	}
	var out Lists
	var errs field.List
	changed := false
	for key, val := range keys {
		v := bytes.TrimSpace(val)
		if len(v) == 0 || v[0] != '[' || !sweepable(key) {
			continue
		}
		var xs []float64
		if err := json.Unmarshal(v, &xs); err != nil {
			errs.Add(field.Join(path, key), "must be a number or a list of numbers")
			continue
		}
		switch {
		case len(xs) == 0:
			errs.Add(field.Join(path, key), "is an empty list: give a value or a list of values")
			continue
		case len(xs) > MaxValues:
			errs.Add(field.Join(path, key), "at most %d values", MaxValues)
			continue
		}
		first, _ := json.Marshal(xs[0])
		keys[key] = first
		changed = true
		if len(xs) > 1 {
			if out == nil {
				out = Lists{}
			}
			out[key] = xs
		}
	}
	if errs != nil || !changed {
		return raw, nil, errs
	}
	b, err := json.Marshal(keys)
	if err != nil {
		panic(fmt.Sprintf("lists: marshal: %v", err)) // raw messages that parsed
	}
	return b, out, nil
}

// Marshal writes the JSON object plain (the struct v marshalled without
// its lists) with each listed key holding its list, in the order of v's
// struct fields; a listed key plain left out (a zero first value) is
// written where its field is.
func Marshal(v any, plain []byte, ls Lists) ([]byte, error) {
	if len(ls) == 0 {
		return plain, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(plain, &keys); err != nil {
		return nil, err
	}
	for name, xs := range ls {
		l, err := json.Marshal(xs)
		if err != nil {
			return nil, err
		}
		keys[name] = l
	}
	return MarshalRaw(v, keys)
}

// MarshalRaw writes the JSON object of keys in the order of v's struct
// fields (keys v has no field of are left out).
func MarshalRaw(v any, keys map[string]json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, name := range jsonNames(reflect.TypeOf(v)) {
		val, ok := keys[name]
		if !ok {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonNames lists the JSON keys of a struct type's fields in order,
// embedded structs' fields in place.
func jsonNames(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonNames(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// Set writes v to the numeric field of the struct *ptr whose JSON key is
// key (a float, an integer, or a pointer to one), and reports whether it
// found one.
func Set(ptr any, key string, v float64) bool {
	return set(reflect.ValueOf(ptr).Elem(), key, v)
}

func set(rv reflect.Value, key string, v float64) bool {
	t := rv.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			if set(rv.Field(i), key, v) {
				return true
			}
			continue
		}
		if name != key || !f.IsExported() {
			continue
		}
		fv := rv.Field(i)
		if fv.Kind() == reflect.Pointer {
			p := reflect.New(fv.Type().Elem())
			fv.Set(p)
			fv = p.Elem()
		}
		switch fv.Kind() {
		case reflect.Float64, reflect.Float32:
			fv.SetFloat(v)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			fv.SetInt(int64(math.Trunc(v)))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			fv.SetUint(uint64(math.Max(0, math.Trunc(v))))
		default:
			return false
		}
		return true
	}
	return false
}

// Count is the number of combinations of the lists (1 without any).
func (ls Lists) Count() int {
	n := 1
	for _, xs := range ls {
		n *= len(xs)
	}
	return n
}
