package deploy_test

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// optionSettings are the option settings a test tries of a kind: every
// option at its default, then each other choice of each option with the
// rest at their defaults (as pt's name, value pairs).
func optionSettings(k *limiter.Kind) [][]string {
	out := [][]string{nil}
	for _, o := range k.Options {
		for _, c := range o.Choices[1:] {
			out = append(out, []string{o.Name, c})
		}
	}
	return out
}

// namedInNote reports whether a note names the setting as "name value".
func namedInNote(notes []string, name, value string) bool {
	return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, name+" "+value) })
}

// TestExportsReadEveryParameter: for every format, every type it
// expresses and every parameter and option of that type's registry row,
// the export of the row's example point (under each option choice) reads
// the setting through the row, or names it in a note as "name value" (a
// setting the deployment leaves out, said). A parameter added to an
// exported gate fails here until each format that expresses the gate
// uses it or says it does not.
func TestExportsReadEveryParameter(t *testing.T) {
	t.Parallel()
	for _, f := range deploy.Formats() {
		for _, typ := range f.Types() {
			k, ok := limiter.Lookup(typ)
			if !ok {
				t.Fatalf("%s expresses unregistered type %s", f.Name, typ)
			}
			covered := map[string]bool{}
			for _, opts := range optionSettings(k) {
				p := pt(typ, maps.Clone(k.Example), opts...)
				e, read, err := deploy.ExportReading(f, p)
				var ne *deploy.NotExpressible
				if err != nil && !errors.As(err, &ne) {
					t.Fatalf("%s from %s %v: %v", f.Name, typ, opts, err)
				}
				for _, name := range read {
					covered[name] = true
				}
				if e == nil {
					continue
				}
				for _, q := range k.Params {
					if namedInNote(e.Notes, q.Name, strconv.FormatFloat(p.Params[q.Name], 'f', -1, 64)) {
						covered[q.Name] = true
					}
				}
				for _, o := range k.Options {
					if namedInNote(e.Notes, o.Name, p.Spec.Option(o.Name)) {
						covered[o.Name] = true
					}
				}
			}
			for _, name := range append(k.ParamNames(), optionNames(k)...) {
				if !covered[name] {
					t.Errorf("%s exports %s without reading its %s through the registry row or naming it in a note (%q)",
						f.Name, typ, name, name+" <value>")
				}
			}
		}
	}
}

func optionNames(k *limiter.Kind) []string {
	var out []string
	for _, o := range k.Options {
		out = append(out, o.Name)
	}
	return out
}

// TestTypesNotListedAreNotExpressible: every registered type a format does
// not list (window counters, shared buckets, chains, none, and any gate
// added to the registry) gets a NotExpressible from it, never a config.
func TestTypesNotListedAreNotExpressible(t *testing.T) {
	t.Parallel()
	for _, k := range limiter.Kinds() {
		p := &deploy.Point{Spec: &limiter.Spec{Type: k.Type}, Params: k.Example}
		for _, a := range deploy.Availability(p) {
			if slices.Contains(a.Format.Types(), k.Type) {
				continue
			}
			var ne *deploy.NotExpressible
			if !errors.As(a.Err, &ne) {
				t.Errorf("%s as %s: %v, want NotExpressible", k.Type, a.Format.Name, a.Err)
			}
		}
	}
}
