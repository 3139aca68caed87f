package form

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/web/format"
)

// What the form reads of the engine's type tables (workload.Kinds,
// limiter.Kinds), in one place: which inputs each type shows, with their
// labels, units and hints, and the conversion of a row to and from the
// engine's types. Nothing here names a type but the starting rows.

// partKind is a part type's row, or nil for an unknown type.
func partKind(typ string) *workload.Kind {
	k, _ := workload.LookupKind(workload.PartType(typ))
	return k
}

// partTypes lists the part types in the engine's order.
func partTypes() []string {
	var out []string
	for _, t := range workload.PartTypes() {
		out = append(out, string(t))
	}
	return out
}

// partTypeLabel names a part type in the type menu (an unknown one by
// itself).
func partTypeLabel(t string) string {
	if k := partKind(t); k != nil && k.Label != "" {
		return k.Label
	}
	return t
}

// partFields are the inputs a part row shows, in page order: every field
// of every part type once, each as the row's own type defines it (a
// client group's rate is per client), the others as first defined. The
// script shows only the inputs of the chosen type (data-for).
func partFields(typ string) []workload.Field {
	k := partKind(typ)
	var out []workload.Field
	for _, f := range workload.AllFields() {
		if k != nil {
			if own, ok := k.Field(f.Name); ok {
				f = *own
			}
		}
		out = append(out, f)
	}
	return out
}

// isArea reports whether a part field is a multi-line input.
func isArea(f workload.Field) bool {
	return f.Input.Items() || f.Input.Upload()
}

// fieldHint is the line under a part input: its doc, its default, and
// whether a list sweeps it.
func fieldHint(f workload.Field) string {
	h := f.Doc
	if f.Default != "" && f.Default != "0" {
		h += " (default: " + f.Default + ")"
	}
	if f.Sweep {
		h += sweepHint
	}
	return h
}

// sweepHint ends the hint of an input that takes a list.
const sweepHint = "; a list or range sweeps it"

// serverHint is the hint of a server field's input: its row's doc, and
// whether a list sweeps it.
func serverHint(name, doc string) string {
	if f, ok := server.FieldByName(name); ok && f.Sweep {
		return doc + sweepHint
	}
	return doc
}

// partTypesFor lists the part types that use an input, space separated.
func partTypesFor(name string) string {
	var out []string
	for _, t := range workload.TypesWith(name) {
		out = append(out, string(t))
	}
	return strings.Join(out, " ")
}

// limiterTypes lists the limiter types the form builds: all but compound
// ones (chains), whose stages are edited as a config document.
func limiterTypes() []string {
	var out []string
	for _, k := range limiter.Kinds() {
		if !k.Compound() {
			out = append(out, string(k.Type))
		}
	}
	return out
}

// limiterDoc is a limiter type's one-line model.
func limiterDoc(typ string) string { return limiter.Doc(limiter.Type(typ)) }

// limiterTypesFor lists the limiter types that take a parameter or an
// option of this name, space separated.
func limiterTypesFor(name string) string {
	var out []string
	for _, t := range limiter.TypesWith(name) {
		out = append(out, string(t))
	}
	return strings.Join(out, " ")
}

// replicaTypes are the types whose limiters may run as instances (every
// type but a chain), for the replica inputs' data-for.
func replicaTypes() string {
	var out []string
	for _, k := range limiter.Kinds() {
		if !k.Compound() {
			out = append(out, string(k.Type))
		}
	}
	return strings.Join(out, " ")
}

// HasChain reports whether a config has a limiter the form cannot show.
func HasChain(cfg *experiments.Config) bool {
	return slices.ContainsFunc(cfg.Limiters, func(l limiter.Spec) bool {
		k := l.Kind()
		return k != nil && k.Compound()
	})
}

// Default is the form a new user sees (presets.Start).
func Default() *Sweep { return FromConfig(presets.Start()) }

// Rows a form gains from "+ Add workload part" and "+ Add limiter".
func newPart() Part {
	p := presets.NewPart()
	return partOf(&p)
}

func newLimiter() Limiter { return limiterOf(presets.NewLimiter()) }

// limiterOf fills a limiter's inputs from its spec.
func limiterOf(s limiter.Spec) Limiter {
	l := Limiter{Type: string(s.Type), Name: s.Name, Params: map[string]string{}, Options: map[string]string{}}
	for name, vs := range s.Params {
		l.Params[name] = FormatValues(vs)
	}
	for name, v := range s.Options {
		l.Options[name] = v
	}
	return l
}

// limiter reads limiter row i into a spec, its type's parameters parsed
// and the others left out; errors land on the inputs.
func (f *Sweep) limiter(i int, lf Limiter) limiter.Spec {
	key := func(name string) string { return RowKey("limiters", i, name) }
	path := func(name string) string { return fmt.Sprintf("limiters[%d].%s", i, name) }
	l := limiter.Spec{Type: limiter.Type(strings.TrimSpace(lf.Type)), Name: strings.TrimSpace(lf.Name)}
	k := l.Kind()
	if k == nil {
		f.AddError(key("type"), path("type"), fmt.Sprintf("choose a limiter (one of %s)", limiter.TypeList()))
		return l
	}
	for _, p := range k.Params {
		vs, err := ParseValues(lf.Param(p.Name))
		if err != nil {
			f.AddError(key(p.Name), path(p.Name), err.Error())
		}
		l.SetValues(p.Name, vs)
	}
	for _, o := range k.Options {
		if v := strings.TrimSpace(lf.Option(o.Name)); v != "" {
			l.SetOption(o.Name, v)
		}
	}
	// instances and their settings, where given (none: one instance)
	for _, p := range limiter.ReplicaParams() {
		if strings.TrimSpace(lf.Param(p.Name)) == "" {
			continue
		}
		vs, err := ParseValues(lf.Param(p.Name))
		if err != nil {
			f.AddError(key(p.Name), path(p.Name), err.Error())
		}
		l.SetValues(p.Name, vs)
	}
	for _, o := range limiter.ReplicaOptions() {
		if v := strings.TrimSpace(lf.Option(o.Name)); v != "" {
			l.SetOption(o.Name, v)
		}
	}
	return l
}

// paramValue is value n of parameter name of limiter li in cfg; ok=false
// when there is no such value.
func paramValue(cfg *experiments.Config, li int, name string, n int) (v float64, ok bool) {
	if li >= len(cfg.Limiters) {
		return 0, false
	}
	vs := cfg.Limiters[li].ValuesOf(name)
	if n >= len(vs) {
		return 0, false
	}
	return vs[n], true
}

// partOf fills a part's inputs from the engine's part: each field of its
// type as the form shows it (numbers in their shortest form, lines fields
// one item a line).
func partOf(p *workload.Part) Part {
	pf := Part{Type: string(p.Type), Fields: map[string]string{}}
	k := p.Kind()
	if k == nil {
		return pf
	}
	b, err := json.Marshal(p)
	if err != nil {
		return pf // plain data: cannot happen
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(b, &raw) != nil {
		return pf
	}
	for _, fd := range k.Fields {
		v, ok := raw[fd.Name]
		if !ok {
			continue
		}
		pf.Fields[fd.Name] = fieldText(fd, v)
	}
	return pf
}

// fieldText is the input text of a part field's JSON value.
func fieldText(fd workload.Field, v json.RawMessage) string {
	switch {
	case fd.Input.Items():
		var items []map[string]float64
		if json.Unmarshal(v, &items) != nil {
			return ""
		}
		req, opt := lineKeys(fd.Line)
		lines := make([]string, len(items))
		for n, it := range items {
			cells := make([]string, 0, len(req)+len(opt))
			for _, key := range req {
				cells = append(cells, format.Num(it[key]))
			}
			for _, key := range opt {
				if it[key] == 0 {
					break
				}
				cells = append(cells, format.Num(it[key]))
			}
			lines[n] = strings.Join(cells, ",")
		}
		return strings.Join(lines, "\n")
	case fd.Input.Number():
		var xs []float64
		if json.Unmarshal(v, &xs) == nil { // a swept field's list
			return FormatValues(xs)
		}
		var x float64
		if json.Unmarshal(v, &x) != nil {
			return ""
		}
		return format.Num(x)
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// lineKeys splits a line format "at_ms,count[,spread_ms]" into its
// required and optional keys.
func lineKeys(line string) (req, opt []string) {
	head, tail, _ := strings.Cut(line, "[")
	for _, k := range strings.Split(head, ",") {
		if k = strings.TrimSpace(k); k != "" {
			req = append(req, k)
		}
	}
	for _, k := range strings.Split(strings.Trim(tail, "[]"), ",") {
		if k = strings.Trim(strings.TrimSpace(k), "[]"); k != "" {
			opt = append(opt, k)
		}
	}
	return req, opt
}

// itemName is what one line of a lines field is called: "segment" for
// segments.
func itemName(field string) string { return strings.TrimSuffix(field, "s") }

// choiceDefault is the text of a choice field's empty option: its
// default, or "" when the field has none (the first choice is shown).
func choiceDefault(fd workload.Field) string {
	if fd.Default == "" {
		return ""
	}
	return fd.Default + " (default)"
}

// optionValue is the choice a limiter row shows for an option: the typed
// one, else the first (the default).
func optionValue(l Limiter, o limiter.Option) string {
	if v := l.Option(o.Name); v != "" {
		return v
	}
	return o.Choices[0]
}

// paramVariant is how the limiter types that share a parameter name label
// and explain it: one variant per distinct label and doc, with the types
// that use it (space separated, for the script that shows the row's).
type paramVariant struct {
	Label, Doc, Types string
}

// paramVariants lists a parameter's variants over the limiter types that
// take it, in registry order.
func paramVariants(name string) []paramVariant {
	var out []paramVariant
	for _, k := range limiter.Kinds() {
		p, ok := k.Param(name)
		if !ok {
			continue
		}
		i := slices.IndexFunc(out, func(v paramVariant) bool { return v.Label == p.Label && v.Doc == p.Doc })
		if i < 0 {
			out = append(out, paramVariant{Label: p.Label, Doc: p.Doc})
			i = len(out) - 1
		}
		out[i].Types = strings.TrimSpace(out[i].Types + " " + string(k.Type))
	}
	return out
}

// shownFor reports whether a variant is the one of a row's type (the
// others start hidden; the script switches them with the type).
func (v paramVariant) shownFor(typ string) bool {
	return slices.Contains(strings.Fields(v.Types), typ)
}

// traceChoices are the lab's trace files offered by a file input, with the
// part's own value first when it is not one of them (a config from
// elsewhere), so the form shows what it names and the submission says why
// it is refused.
func traceChoices(names []string, value string) []string {
	if value == "" || slices.Contains(names, value) {
		return names
	}
	return append([]string{value}, names...)
}
