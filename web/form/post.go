package form

import (
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/web/format"
)

// Values is a submitted form: the last value of each key.
type Values map[string]string

var indexedKey = regexp.MustCompile(`^(parts|limiters)\.(\d{1,4})\.`)

// indices lists the row numbers present for a prefix, in numeric order.
func (v Values) indices(prefix string) []int {
	seen := map[int]bool{}
	for k := range v {
		if m := indexedKey.FindStringSubmatch(k); m != nil && m[1] == prefix {
			n, _ := strconv.Atoi(m[2])
			seen[n] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// eachRow calls read for the first max rows of prefix in numeric order,
// with a getter of that row's values by input name.
func (v Values) eachRow(prefix string, max int, read func(get func(name string) string)) {
	for i, n := range v.indices(prefix) {
		if i == max {
			return
		}
		read(func(name string) string { return v[RowKey(prefix, n, name)] })
	}
}

// FromValues reads a submitted form. Rows are renumbered 0..n-1 in the
// order of their numbers, so gaps left by removed rows close up.
func FromValues(v Values) *Sweep {
	f := &Sweep{
		Name: v["name"], Description: v["description"], Seed: v["seed"], Replications: v["replications"], DurationMS: v["duration_ms"],
		Workers: v["server.workers"], ServiceMS: v["server.service_ms"], DeadlineMS: v["server.deadline_ms"],
		RollingWindowMS: v["metrics.rolling_window_ms"], FairnessWindowMS: v["metrics.fairness_window_ms"],
		Reports: v["reports"], Objectives: v["objectives"], Models: v[ModelsKey], Settings: map[string]string{},
		Pick: ObjectivePick{Metric: v[PickMetricKey], Op: v[PickOpKey], Value: v[PickValueKey]},
	}
	for _, k := range settingKeys() {
		if s := v[k]; s != "" {
			f.Settings[k] = s
		}
	}
	v.eachRow("parts", maxParts, func(g func(name string) string) {
		p := Part{Type: g("type"), Fields: map[string]string{}}
		for _, fd := range workload.AllFields() {
			p.Fields[fd.Name] = g(fd.Name)
		}
		f.Parts = append(f.Parts, p)
	})
	v.eachRow("limiters", maxLimiters, func(g func(name string) string) {
		l := Limiter{Type: g("type"), Name: g("name"), Params: map[string]string{}, Options: map[string]string{}}
		for _, p := range limiter.AllParams() {
			l.Params[p.Name] = g(p.Name)
		}
		for _, p := range limiter.ReplicaParams() {
			l.Params[p.Name] = g(p.Name)
		}
		for _, o := range limiter.ReplicaOptions() {
			l.Options[o.Name] = g(o.Name)
		}
		for _, o := range limiter.AllOptions() {
			l.Options[o.Name] = g(o.Name)
		}
		f.Limiters = append(f.Limiters, l)
	})
	return f
}

// Values is the form as the browser posts it (without the button pressed).
func (f *Sweep) Values() url.Values {
	v := url.Values{}
	for k, val := range map[string]string{"name": f.Name, "description": f.Description, "seed": f.Seed, "replications": f.Replications, "duration_ms": f.DurationMS,
		"server.workers": f.Workers, "server.service_ms": f.ServiceMS, "server.deadline_ms": f.DeadlineMS,
		"metrics.rolling_window_ms": f.RollingWindowMS, "metrics.fairness_window_ms": f.FairnessWindowMS, "reports": f.Reports, "objectives": f.Objectives, ModelsKey: f.Models} {
		v.Set(k, val)
	}
	for k, val := range f.Settings {
		v.Set(k, val)
	}
	for i, p := range f.Parts {
		v.Set(RowKey("parts", i, "type"), p.Type)
		for n, val := range p.Fields {
			v.Set(RowKey("parts", i, n), val)
		}
	}
	for i, l := range f.Limiters {
		v.Set(RowKey("limiters", i, "type"), l.Type)
		v.Set(RowKey("limiters", i, "name"), l.Name)
		for n, val := range l.Params {
			v.Set(RowKey("limiters", i, n), val)
		}
		for n, val := range l.Options {
			v.Set(RowKey("limiters", i, n), val)
		}
	}
	return v
}

// Post is a new-sweep form as posted: the form, the button pressed, and
// what could not be read.
type Post struct {
	Form *Sweep
	// Action is the button pressed: "run", "add-part", "add-limiter",
	// "add-objective",
	// "remove-part:<i>", "remove-limiter:<i>" or "refresh".
	Action string
	// ReadErr is why the post could not be read whole: a
	// *http.MaxBytesError past MaxFormBytes, or a malformed body.
	ReadErr error
	// tooLarge maps the key of each field or upload past MaxTraceBytes
	// (a trace's by its text's key, "parts.<n>.<field>") to its message.
	tooLarge map[string]string
	// invalid maps the key of each value that is not UTF-8 text to its
	// message (the form shows the value with U+FFFD in place of the bad
	// bytes, and refuses it).
	invalid map[string]string
	// partRows and limiterRows are the post's row numbers, in order: the
	// form renumbers them 0..n-1.
	partRows, limiterRows []int
}

// traceKey matches the key of a part's text field ("parts.2.csv") or of
// its upload ("parts.2.csv_file"); isTraceField says which fields hold
// traces (InputCSV in the part types' tables).
var traceKey = regexp.MustCompile(`^parts\.(\d{1,4})\.([a-z_]+?)(_file)?$`)

// traceText is the text key of a trace field's key or upload key, or ""
// for a key that is neither.
func traceText(key string) (row int, name string, ok bool) {
	m := traceKey.FindStringSubmatch(key)
	if m == nil || !isTraceField(m[2]) {
		return 0, "", false
	}
	return atoi(m[1]), m[2], true
}

// isTraceField reports whether some part type takes a trace in this field.
func isTraceField(name string) bool {
	for _, fd := range workload.AllFields() {
		if fd.Name == name {
			return fd.Input.Upload()
		}
	}
	return false
}

// Read reads an urlencoded or multipart post within MaxFormBytes. Each
// field and upload may hold at most MaxTraceBytes; a larger one is
// skipped and reported by Config, and the rest of the form is still read.
// An uploaded trace replaces the pasted text of its part.
func Read(w http.ResponseWriter, r *http.Request) *Post {
	v, files, tooBig, err := readValues(w, r)
	p := &Post{ReadErr: err, tooLarge: map[string]string{}, invalid: map[string]string{}}
	for key, data := range files {
		if row, name, ok := traceText(key); ok && strings.HasSuffix(key, "_file") {
			v[RowKey("parts", row, name)] = string(data)
		}
	}
	for key, val := range v {
		if !utf8.ValidString(val) {
			v[key] = strings.ToValidUTF8(val, "\uFFFD")
			if utf8.ValidString(key) {
				p.invalid[key] = "is not valid UTF-8 text: the bad bytes are shown as \uFFFD; type or upload the text again in UTF-8"
			}
		}
	}
	for key := range v {
		if (strings.HasPrefix(key, "parts.") || strings.HasPrefix(key, "limiters.")) && !indexedKey.MatchString(key) {
			p.invalid[key] = "is no input of the form: a row's inputs are named parts.N.field or limiters.N.field, N a whole number from 0 to 9999"
		}
	}
	for _, key := range tooBig {
		row, name, ok := traceText(key)
		if !ok {
			p.tooLarge[""] = fmt.Sprintf("the field %q is larger than %s", format.Clip(key, 60), format.Bytes(MaxTraceBytes))
			continue
		}
		textKey := RowKey("parts", row, name)
		p.tooLarge[textKey] = fmt.Sprintf("the trace is larger than %s, the limit; split it or lower its rate", format.Bytes(MaxTraceBytes))
		if _, ok := v[textKey]; !ok {
			v[textKey] = "" // keep the row even when its text was the big part
		}
	}
	p.partRows, p.limiterRows = v.indices("parts"), v.indices("limiters")
	p.Form, p.Action = FromValues(v), v["action"]
	return p
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// readValues reads a post's fields and uploads, skipping (and naming in
// tooBig) those past MaxTraceBytes.
func readValues(w http.ResponseWriter, r *http.Request) (v Values, files map[string][]byte, tooBig []string, err error) {
	v, files = Values{}, map[string][]byte{}
	r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		err = r.ParseForm()
		for k, vs := range r.PostForm {
			v[k] = vs[len(vs)-1]
		}
		return v, files, nil, err
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return v, files, nil, err
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return v, files, tooBig, nil
		}
		if err != nil {
			return v, files, tooBig, err
		}
		name := part.FormName()
		data, err := io.ReadAll(io.LimitReader(part, MaxTraceBytes+1))
		if err == nil && len(data) > MaxTraceBytes {
			tooBig = append(tooBig, name)
			_, err = io.Copy(io.Discard, part)
			data = nil
		}
		if err != nil {
			return v, files, tooBig, err
		}
		if part.FileName() != "" {
			if len(data) > 0 {
				files[name] = data
			}
			continue
		}
		if data != nil {
			v[name] = string(data)
		}
	}
}

// The objective picker's inputs (ObjectivePick).
const (
	PickMetricKey = "objective_metric"
	PickOpKey     = "objective_op"
	PickValueKey  = "objective_value"
)

// TemplateIndex is the row number of the part and limiter rows the form
// carries in <template> elements: static/app.js copies one with the next
// free number in its place ("+ Add limiter" without a post), and a post
// reads rows in the order of their numbers.
const TemplateIndex = 987654

// Edit applies a row action to the form: add or remove a part or a
// limiter, or refresh (show the inputs of a changed type). It reports
// false for any other action: run the sweep.
func (p *Post) Edit() bool {
	f := p.Form
	switch a := p.Action; {
	case a == "add-part":
		f.Parts = append(f.Parts, newPart())
	case a == "add-limiter":
		f.Limiters = append(f.Limiters, newLimiter())
	case strings.HasPrefix(a, "remove-part:"):
		if i, err := strconv.Atoi(strings.TrimPrefix(a, "remove-part:")); err == nil && i >= 0 && i < len(f.Parts) {
			f.Parts = slices.Delete(f.Parts, i, i+1)
		}
	case strings.HasPrefix(a, "remove-limiter:"):
		if i, err := strconv.Atoi(strings.TrimPrefix(a, "remove-limiter:")); err == nil && i >= 0 && i < len(f.Limiters) {
			f.Limiters = slices.Delete(f.Limiters, i, i+1)
		}
	case a == "add-objective":
		if line := f.Pick.Line(); line != "" {
			if t := strings.TrimRight(f.Objectives, "\r\n"); t != "" {
				f.Objectives = t + "\n" + line + "\n"
			} else {
				f.Objectives = line + "\n"
			}
			f.Pick = ObjectivePick{}
		}
	case a == "refresh":
	default:
		return false
	}
	return true
}

// Config checks the form (see Sweep.Document) and the sizes of its
// fields: nil, with the errors on the form, when it cannot run; tooLarge
// reports a field or trace past MaxTraceBytes. A trace that was too large
// to read gets the size error alone, not the engine's word on the empty
// text read in its place.
func (p *Post) Config() (cfg *experiments.Config, tooLarge bool) {
	f := p.Form
	_, cfg = f.Document()
	for _, key := range slices.Sorted(maps.Keys(p.tooLarge)) {
		msg, path := p.tooLarge[key], key
		if row, name, ok := traceText(key); ok {
			if i := slices.Index(p.partRows, row); i >= 0 {
				key = RowKey("parts", i, name)
				path = fmt.Sprintf("workload.parts[%d].%s", i, name)
				f.dropErrors(key)
			}
		}
		f.AddError(key, path, msg)
		cfg = nil
	}
	for _, rows := range []struct {
		key  string
		n    int
		max  int
		noun string
	}{{"parts", len(p.partRows), maxParts, "workload parts"}, {"limiters", len(p.limiterRows), maxLimiters, "limiters"}} {
		if rows.n > rows.max {
			f.AddError(rows.key, rows.key, fmt.Sprintf("has %d rows: at most %d %s", rows.n, rows.max, rows.noun))
			cfg = nil
		}
	}
	for _, posted := range slices.Sorted(maps.Keys(p.invalid)) {
		key, path, ok := p.rowKey(posted)
		if !ok {
			continue
		}
		f.dropErrors(key)
		f.AddError(key, path, p.invalid[posted])
		cfg = nil
	}
	return cfg, len(p.tooLarge) > 0
}

var rowKeyOf = regexp.MustCompile(`^(parts|limiters)\.(\d{1,4})\.(.+)$`)

// rowKey maps a posted key to the form's key (rows renumbered 0..n-1) and
// the config path of its value; ok is false for a row the form dropped.
func (p *Post) rowKey(key string) (string, string, bool) {
	m := rowKeyOf.FindStringSubmatch(key)
	if m == nil {
		if key == "duration_ms" {
			return key, "workload.duration_ms", true
		}
		return key, key, true
	}
	rows, max, base := p.partRows, maxParts, "workload.parts"
	if m[1] == "limiters" {
		rows, max, base = p.limiterRows, maxLimiters, "limiters"
	}
	i := slices.Index(rows, atoi(m[2]))
	if i < 0 || i >= max {
		return "", "", false
	}
	return RowKey(m[1], i, m[3]), field.Join(field.Index(base, i), m[3]), true
}
