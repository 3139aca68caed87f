// Package deploy turns one point of a sweep (a limiter.Spec and one
// limiter.Params) into the configuration that deploys it in a real rate
// limiter: nginx, Envoy, Go (x/time/rate, redis_rate, go.uber.org/ratelimit),
// Guava, Resilience4j (Spring Boot) or Traefik.
//
// A format rarely takes the lab's parameters as they are: nginx takes whole
// requests per second or per minute, Envoy refills at most every 50 ms,
// Guava's public API fixes the burst at one second of permits, and each
// library keeps its own clock and arithmetic. An Export therefore says, in
// Notes, what was rounded and where the library's semantics differ from the
// point's model, and gives in Rerun the library-exact gate (see
// experiments/limiter) at the setting actually deployed, so that a new run
// with that limiter added shows the difference. A point whose type a
// format cannot express gets a *NotExpressible error, never a wrong config.
//
// Formats lists the formats, one file each (nginx.go, envoy.go, ...), each
// with the explicit list of limiter types it expresses. Like the rest of
// the engine the package is pure: no I/O, no clock.
package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// Format is one configuration language a point can be deployed in.
type Format struct {
	Name  string // key in URLs, the API and the CLI: "nginx"
	Label string // what the page shows: "nginx limit_req"
	Ext   string // file extension, without the dot
	File  string // the download's file name
	Doc   string // one line: what the text is and where it goes
	// Comment starts a comment line in the format ("# ", "// ").
	Comment string
	// From lists the limiter types the format expresses, each with its
	// translation.
	From []From
}

// From is one limiter type a format expresses, and its translation, which
// reads the point through the type's registry row (see reading).
type From struct {
	Type   limiter.Type
	export func(pt *reading) (*Export, error)
}

// Point is one point of a sweep: its limiter and its parameter values.
type Point struct {
	Spec   *limiter.Spec
	Params limiter.Params
}

// Export is a point deployed in a format.
type Export struct {
	Format *Format
	// Text is the configuration, ready to paste or save as Format.File.
	Text string
	// Notes say what was rounded and how the library differs from the
	// point's model, one sentence or two each.
	Notes []string
	// Rerun is the library-exact gate at the deployed setting (one value
	// per parameter): a run with it added shows what the deployment does.
	// nil when the point already is that gate at that setting (Exact), or
	// when no gate of the lab reproduces the library.
	Rerun *limiter.Spec
	// Exact reports that the point is the library-exact gate at the
	// deployed setting: the run already shows what the deployment does.
	Exact bool
}

// NotExpressible says why a format cannot deploy a point.
type NotExpressible struct {
	Format string
	Type   limiter.Type
	Reason string
}

func (e *NotExpressible) Error() string {
	return fmt.Sprintf("%s cannot express this %s point: %s", e.Format, e.Type, e.Reason)
}

// cannot is the error of a From that cannot express its point; Export
// fills in the format and the type.
func cannot(format string, args ...any) error {
	return &NotExpressible{Reason: fmt.Sprintf(format, args...)}
}

// ErrUnknownFormat is returned for a format name that is not in Formats.
var ErrUnknownFormat = errors.New("unknown export format")

// Formats lists the export formats, in the order the page and the help
// show them. Adding a format is its file and one line here.
func Formats() []*Format {
	return []*Format{
		nginxFormat(),
		envoyFormat(),
		envoyRatelimitFormat(),
		goXTimeRateFormat(),
		goRedisRateFormat(),
		goUberRateLimitFormat(),
		guavaFormat(),
		resilience4jFormat(),
		traefikFormat(),
		gubernatorFormat(),
	}
}

// Lookup finds a format by name.
func Lookup(name string) (*Format, bool) {
	i := slices.IndexFunc(Formats(), func(f *Format) bool { return f.Name == name })
	if i < 0 {
		return nil, false
	}
	return Formats()[i], true
}

// Names lists the formats' names, for messages.
func Names() []string {
	var out []string
	for _, f := range Formats() {
		out = append(out, f.Name)
	}
	return out
}

// Types lists the limiter types the format expresses.
func (f *Format) Types() []limiter.Type {
	var out []limiter.Type
	for _, from := range f.From {
		out = append(out, from.Type)
	}
	return out
}

// Render deploys the point in the named format: the text, the notes and
// the rerun. Errors: ErrUnknownFormat (wrapped), *NotExpressible.
func Render(format string, pt *Point) (*Export, error) {
	f, ok := Lookup(format)
	if !ok {
		return nil, fmt.Errorf("%w %q (one of %s)", ErrUnknownFormat, format, strings.Join(Names(), ", "))
	}
	return f.Export(pt)
}

// Export deploys the point in this format.
func (f *Format) Export(pt *Point) (*Export, error) {
	e, _, err := f.export(pt)
	return e, err
}

// export is Export and the point as the format read it.
func (f *Format) export(pt *Point) (*Export, *reading, error) {
	i := slices.IndexFunc(f.From, func(from From) bool { return from.Type == pt.Spec.Type })
	if i < 0 {
		return nil, nil, &NotExpressible{Format: f.Name, Type: pt.Spec.Type,
			Reason: fmt.Sprintf("%s expresses %s", f.Label, typeList(f.Types()))}
	}
	spec := *pt.Spec // a copy: normalizing must not touch the caller's config
	spec.Params, spec.Options = maps.Clone(pt.Spec.Params), maps.Clone(pt.Spec.Options)
	spec.Normalize() // options at their defaults
	norm := &Point{Spec: &spec, Params: pt.Params}
	r, err := newReading(norm)
	if err != nil {
		return nil, nil, err
	}
	e, err := f.From[i].export(r)
	if err != nil {
		var ne *NotExpressible
		if errors.As(err, &ne) {
			ne.Format, ne.Type = f.Name, pt.Spec.Type
		}
		return nil, r, err
	}
	e.Format = f
	e.Notes = append(e.Notes, replicaNotes(pt.Spec, pt.Params)...)
	if e.Rerun != nil && spec.Replicated() {
		e.Notes = append(e.Notes, rerunReplicas(e.Rerun, onePoint(&spec, pt.Params))...)
	}
	if e.Rerun != nil {
		e.Rerun.Normalize()
		if errs := e.Rerun.Validate("rerun"); len(errs) > 0 {
			return nil, r, &NotExpressible{Format: f.Name, Type: pt.Spec.Type,
				Reason: fmt.Sprintf("the deployed setting is outside the lab's range for %s: %v", e.Rerun.Type, errs)}
		}
		if samePoint(e.Rerun, norm) {
			e.Rerun, e.Exact = nil, true
		} else {
			e.Rerun.Name = clip(fmt.Sprintf("%s as %s", commentText(pt.Spec.Label()), f.Name), limiter.MaxNameLen)
		}
	}
	header := fmt.Sprintf("%sratelab export: %s (%s) as %s\n", f.Comment, commentText(pt.Spec.Label()),
		limiter.FormatParams(pt.Spec.Type, pt.Params), f.Label)
	e.Text = header + e.Text
	return e, r, nil
}

// commentText is a name as every format's line comment can hold it: the
// one place an export prints a name the user gave. A name is one line of
// printable text (validation refuses others), but an export may be made
// from a config stored before that rule, so here too every character that
// could end the comment line is escaped: control and unprintable
// characters (line breaks, NUL, U+2028, U+0085: line ends to YAML, Java
// and Go alike) become "[U+000A]", and a backslash is doubled, so Java's \uXXXX escapes, which javac decodes before it finds
// comments, never start in a name.
func commentText(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "[%U]", r)
		}
	}
	return b.String()
}

// Available is one format's answer for a point: an error when it cannot
// express it.
type Available struct {
	Format *Format
	Err    error
}

// Availability tries every format on the point.
func Availability(pt *Point) []Available {
	var out []Available
	for _, f := range Formats() {
		_, err := f.Export(pt)
		out = append(out, Available{Format: f, Err: err})
	}
	return out
}

// PointError is a point index that the config does not have.
type PointError struct {
	Point, Points int
}

func (e *PointError) Error() string {
	return fmt.Sprintf("point %d: the sweep has points 0 to %d", e.Point, e.Points-1)
}

// PointOf is point index of the config's sweep (in results.csv order).
func PointOf(cfg *experiments.Config, index int) (*Point, error) {
	pts := cfg.Points()
	if index < 0 || index >= len(pts) {
		return nil, &PointError{Point: index, Points: len(pts)}
	}
	p := pts[index]
	return &Point{Spec: &cfg.Limiters[p.LimiterIndex], Params: p.Params}, nil
}

// RerunConfig is the config with the export's rerun limiter added after
// the others (named apart from them), decoded and validated again: the
// sweep to run to see the deployed setting beside the point.
func RerunConfig(cfg *experiments.Config, e *Export) (*experiments.Config, error) {
	if e.Rerun == nil {
		return nil, errors.New("this export has no rerun: the point already is the deployed setting")
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(cfg.JSON(), &doc); err != nil {
		return nil, err
	}
	var lims []json.RawMessage
	if err := json.Unmarshal(doc["limiters"], &lims); err != nil {
		return nil, err
	}
	if len(lims) >= experiments.MaxLimiters {
		return nil, fmt.Errorf("the sweep already has %d limiters, the most a config takes", len(lims))
	}
	rerun := *e.Rerun
	rerun.Params = maps.Clone(e.Rerun.Params)
	rerun.Options = maps.Clone(e.Rerun.Options)
	rerun.Name = uniqueName(cfg, rerun.Label())
	one, err := json.Marshal(rerun)
	if err != nil {
		return nil, err
	}
	lims = append(lims, one)
	if doc["limiters"], err = json.Marshal(lims); err != nil {
		return nil, err
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return document.DecodeConfig(data)
}

// uniqueName is name, or name (2), (3)... when a limiter already has it.
func uniqueName(cfg *experiments.Config, name string) string {
	taken := map[string]bool{}
	for i := range cfg.Limiters {
		taken[cfg.Limiters[i].Label()] = true
	}
	out := name
	for n := 2; taken[out]; n++ {
		suffix := fmt.Sprintf(" (%d)", n)
		out = clip(name, limiter.MaxNameLen-len(suffix)) + suffix
	}
	return out
}

// samePoint reports whether the rerun gate is the point itself: same type,
// parameter values and options.
func samePoint(rerun *limiter.Spec, pt *Point) bool {
	if rerun.Type != pt.Spec.Type {
		return false
	}
	k := rerun.Kind()
	if k == nil {
		return false
	}
	for _, p := range k.Params {
		vs := rerun.Params[p.Name]
		if len(vs) != 1 || vs[0] != pt.Params[p.Name] {
			return false
		}
	}
	for _, o := range k.Options {
		if rerun.Option(o.Name) != pt.Spec.Option(o.Name) {
			return false
		}
	}
	return true
}

// spec builds a one-point limiter spec of typ.
func spec(typ limiter.Type, params limiter.Params, options map[string]string) *limiter.Spec {
	s := &limiter.Spec{Type: typ}
	for name, v := range params {
		s.SetValues(name, limiter.Values{v})
	}
	for name, v := range options {
		s.SetOption(name, v)
	}
	return s
}

func typeList(ts []limiter.Type) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return strings.Join(out, ", ")
}

// clip shortens s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
