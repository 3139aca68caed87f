package workload

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/registry"
)

// PartType names a kind of workload part in a config ("demand-curve").
type PartType string

// Input is the kind of value a part's field holds: what the form shows for
// it and what the API docs call it.
type Input string

// Inputs of part fields.
const (
	InputNumber  Input = "number"       // a decimal number
	InputInteger Input = "whole number" // a count
	InputText    Input = "text"         // a name
	InputChoice  Input = "choice"       // one of Field.Choices
	InputLines   Input = "lines"        // a list of objects, one a line in the form, as Field.Line
	InputCSV     Input = "csv"          // CSV text, one record a line, as Field.Line
	InputFile    Input = "trace file"   // the name of one of the lab's trace files
)

// What an input's value is, for a form that turns text into a part's JSON
// value and back: the form asks these, never names an input.

// Number reports whether the input holds one number (a list of them where
// the field is swept).
func (i Input) Number() bool { return i == InputNumber || i == InputInteger }

// Whole reports whether the input's number is a count.
func (i Input) Whole() bool { return i == InputInteger }

// Items reports whether the input holds a list of objects, one a line in
// the form (as Field.Line).
func (i Input) Items() bool { return i == InputLines }

// Upload reports whether the input holds an uploaded file's text, which
// the lab's trace-size limit bounds.
func (i Input) Upload() bool { return i == InputCSV }

// Choice reports whether the input is one of Field.Choices.
func (i Input) Choice() bool { return i == InputChoice }

// TraceFile reports whether the input names one of the lab's trace files.
func (i Input) TraceFile() bool { return i == InputFile }

// Field is one JSON field a part type accepts (besides "type"): its key,
// what the form shows beside its input, and one line for the form's hint
// and the API docs.
type Field struct {
	Name  string // JSON key: "rate_rps"
	Label string // the form's label: "Rate"
	Unit  string // beside the input: "req/s", "ms"; "" for none
	Input Input
	// Choices are the words an InputChoice field takes.
	Choices []string
	// Line is the format of one line of an InputLines or InputCSV field,
	// its fields comma separated, optional ones in brackets:
	// "at_ms,count[,spread_ms]".
	Line string
	// Default says what a field left out means ("0", "end of the window");
	// "" when the field is required or has no default worth saying.
	Default string
	Doc     string // one line for the form's hint and the API docs
	// Sweep: the field takes a list of numbers, which the sweep expands
	// like a limiter parameter's (experiments/lists); only numeric fields.
	Sweep bool
}

// with returns a copy of the field with another doc line and default, for
// a part type whose field means something more specific than the shared
// definition says ("" keeps the shared one).
func (f Field) with(doc, def string) Field {
	if doc != "" {
		f.Doc = doc
	}
	if def != "" {
		f.Default = def
	}
	return f
}

// Kind is one part type's row in the registry: everything the rest of the
// lab knows about the type. Field checks, validation, arrival estimates,
// generation, summaries, the form and the API docs all read these rows;
// none of them switches on a type name outside the type's own file.
type Kind struct {
	Type  PartType
	Label string // the form's name for the type: "constant rate"
	Model string // one line: what arrivals the part produces
	// Fields are the JSON fields the type accepts besides "type", in the
	// order the form shows them and messages list them.
	Fields []Field
	// Validate checks the type's own rules; the checks every part gets
	// (weight, clients, names, start and end) have run before it. path is
	// the part's path in the config; durationMS the run's arrival window.
	// nil: nothing more to check.
	Validate func(p *Part, path string, durationMS float64) field.List
	// Expected estimates the arrivals the part produces in [0, windowMS):
	// exact for deterministic parts, the mean for random ones, and never
	// fewer than a deterministic part produces. nil counts 0.
	Expected func(p *Part, windowMS float64) float64
	// Level is the part's configured rate in requests/s, its time-weighted
	// mean over the window [0, windowMS) (results.csv's level_rps sums it
	// over the parts): a constant or Poisson part's rate_rps (times the
	// share of the window its start_ms and end_ms cover), a client group's
	// clients × that, a demand curve's time-weighted mean over the window.
	// nil: the part has none (a trace, bursts, a flash crowd, users), and
	// the load has no level.
	Level func(p *Part, windowMS float64) float64
	// Generate emits the part's arrivals into g, as one or more
	// time-sorted runs (see Generator). The part is valid.
	Generate func(g *Generator, p *Part) error
	// Runs streams the part: it declares the part's clients in g as
	// Generate does and returns the part's runs (see Run), in the order
	// Generate emits them, giving the same arrivals. nil: the part is
	// generated whole (Generate) when a stream is opened, which is for
	// parts bounded by their own limits (bursts, a trace in the config).
	Runs func(g *Generator, p *Part) []Run
	// Describe says what the part is in a few words, for summaries; nil
	// uses the type name.
	Describe func(p *Part) string
	// DeclareClients declares the part's clients in g in the order
	// Generate does, without generating; nil declares g.PartClients(p).
	DeclareClients func(g *Generator, p *Part)
	// Trigger is the interval of overload the part makes, after which a
	// run measures how long goodput takes to recover (flash crowds); nil for
	// parts without one.
	Trigger func(p *Part) (startMS, endMS float64)
	// CountClients bounds the clients the part declares, before any is
	// built; nil counts p.Clients, or 1 when that is 0.
	CountClients func(p *Part) int
	// Users is the closed loop of a part whose clients send their next
	// request only after the previous one ended (users.go): nil for the
	// open-loop parts, whose arrivals Generate lists.
	Users func(p *Part) *Loop
}

// Field finds one of the kind's fields by JSON key.
func (k *Kind) Field(name string) (*Field, bool) {
	for i := range k.Fields {
		if k.Fields[i].Name == name {
			return &k.Fields[i], true
		}
	}
	return nil, false
}

// Has reports whether the kind accepts a field.
func (k *Kind) Has(name string) bool {
	_, ok := k.Field(name)
	return ok
}

// Sweepable reports whether a part of type t takes a list in field key.
func Sweepable(t PartType) func(key string) bool {
	return func(key string) bool {
		k, ok := LookupKind(t)
		if !ok {
			return false
		}
		f, ok := k.Field(key)
		return ok && f.Sweep
	}
}

// FieldNames lists the JSON keys the kind accepts besides "type", in order.
func (k *Kind) FieldNames() []string {
	out := make([]string, len(k.Fields))
	for i := range k.Fields {
		out[i] = k.Fields[i].Name
	}
	return out
}

// The registry, in the order the form and the help list the types. Adding a
// part type is its file (the generator and its Kind) and one line here.
// Every built-in type takes the client behaviour fields after its own
// (BehaviourFields).
func builtinKinds() []*Kind {
	ks := []*Kind{
		demandCurveKind(),
		constantKind(),
		poissonKind(),
		burstsKind(),
		clientsKind(),
		flashCrowdKind(),
		traceKind(),
		usersKind(),
	}
	for _, k := range ks {
		k.Fields = append(k.Fields, BehaviourFields()...)
	}
	return ks
}

// kinds is the registry; builtinKinds fills it on first use.
var kinds registry.Table[PartType, *Kind]

// Key is the row's type name.
func (k *Kind) Key() PartType { return k.Type }

// Kinds lists the registered part types' rows, in registry order.
func Kinds() []*Kind { return kinds.Rows(builtinKinds) }

// LookupKind finds a part type's row.
func LookupKind(t PartType) (*Kind, bool) { return kinds.Lookup(builtinKinds, t) }

// Register adds a part type to the registry (after the built-in ones) and
// returns the function that removes it again. It is for tests and programs
// that embed the engine; a part type of the lab itself is a line of the
// registry list. A registered type can only accept fields that Part has.
// It panics on a type that is already registered or a row without a type
// or Generate.
func Register(k *Kind) (unregister func()) {
	if k.Generate == nil {
		panic(fmt.Sprintf("workload: register %q: a kind needs Generate", k.Type))
	}
	return kinds.Register(builtinKinds, k)
}

// PartTypes lists the registered part types in registry order.
func PartTypes() []PartType { return kinds.Keys(builtinKinds) }

// TypeList is PartTypes joined with commas, for messages.
func TypeList() string { return kinds.KeyList(builtinKinds) }

// AllFields lists every field of every registered part type once, in
// registry order: the inputs of the form's part row.
func AllFields() []Field {
	return registry.Unique(Kinds(), func(k *Kind) []Field { return k.Fields }, func(f Field) string { return f.Name })
}

// TypesWith lists the part types that accept a field, in registry order.
func TypesWith(name string) []PartType {
	return registry.With(Kinds(), func(k *Kind) bool { return k.Has(name) })
}
