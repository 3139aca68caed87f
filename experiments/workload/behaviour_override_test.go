package workload

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// The slots name every behaviour field, in the struct's (the document's)
// key order.
func TestBehaviourKeysAreTheFields(t *testing.T) {
	var names []string
	for _, f := range BehaviourFields() {
		names = append(names, f.Name)
	}
	keys := BehaviourKeys()
	if !slices.Equal(slices.Sorted(slices.Values(keys)), slices.Sorted(slices.Values(names))) {
		t.Fatalf("keys %v, fields %v", keys, names)
	}
	// Every field of the struct set (read by reflection, not listed here,
	// so a new field is in the document whether or not it has a slot).
	var full Behaviour
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Float64:
			f.SetFloat(1)
		case reflect.Int:
			f.SetInt(1)
		case reflect.String:
			f.SetString("x")
		default:
			t.Fatalf("Behaviour.%s is a %s: set it here", v.Type().Field(i).Name, f.Kind())
		}
	}
	b, _ := json.Marshal(full)
	var order []string
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		order = append(order, k.(string))
		var v any
		_ = dec.Decode(&v)
	}
	if !slices.Equal(order, keys) {
		t.Fatalf("struct order %v, slots %v", order, keys)
	}
}

// Property: Override replaces exactly the given fields, and with nil
// gives the fields o sets.
func TestOverrideReplacesTheGivenFields(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	random := func() Behaviour {
		var b Behaviour
		for _, s := range b.slots() {
			if rng.IntN(2) == 0 {
				continue
			}
			switch v := s.ptr.(type) {
			case *float64:
				*v = float64(rng.IntN(3))
			case *int:
				*v = rng.IntN(3)
			case *string:
				*v = []string{"", "a", "b"}[rng.IntN(3)]
			}
		}
		return b
	}
	for range 1000 {
		b, o := random(), random()
		given := map[string]bool{}
		for _, k := range BehaviourKeys() {
			given[k] = rng.IntN(2) == 0
		}
		got := b.Override(o, func(k string) bool { return given[k] })
		for _, k := range BehaviourKeys() {
			want := b.Value(k)
			if given[k] {
				want = o.Value(k)
			}
			if got.Value(k) != want {
				t.Fatalf("%s: %v, want %v (b %+v o %+v given %v)", k, got.Value(k), want, b, o, given[k])
			}
		}
		got = b.Override(o, nil)
		for _, k := range BehaviourKeys() {
			want := b.Value(k)
			if o.Sets(k) {
				want = o.Value(k)
			}
			if got.Value(k) != want {
				t.Fatalf("nil gives, %s: %v, want %v", k, got.Value(k), want)
			}
		}
	}
}
