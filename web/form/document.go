package form

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/lists"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/web/format"
)

// Document turns the form into a config document and checks it with the
// engine's decoder, the same one the CLI and the JSON API use. Errors land
// on the inputs at fault (f.Errors); the returned config is nil then. The
// engine checks every input that parsed even when others did not, so every
// mistake shows at once; an input that did not parse shows only its own
// message.
func (f *Sweep) Document() ([]byte, *experiments.Config) {
	f.Errors, f.Problems = nil, nil
	cfg := experiments.Config{Version: experiments.Version, Name: strings.TrimSpace(f.Name), Description: strings.TrimSpace(f.Description)}
	f.seed(&cfg)
	if s := strings.TrimSpace(f.Replications); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			f.AddError("replications", "replications", fmt.Sprintf("%q is not a whole number", format.Clip(s, 40)))
		}
		if n == 0 && err == nil {
			f.AddError("replications", "replications", fmt.Sprintf("must be from 2 to %d (leave it empty for one run a point)", experiments.MaxReplications))
		}
		cfg.Replications = n
	}
	cfg.Workload.DurationMS = f.number("duration_ms", "workload.duration_ms", f.DurationMS)
	cfg.Server.Workers = int(f.serverValues(&cfg.Server, "workers", f.Workers))
	f.notZero("server.workers", "server.workers", f.Workers, float64(cfg.Server.Workers), "must be at least 1", strconv.Itoa(server.DefaultWorkers))
	cfg.Server.ServiceMS = f.serverValues(&cfg.Server, "service_ms", f.ServiceMS)
	f.notZero("server.service_ms", "server.service_ms", f.ServiceMS, cfg.Server.ServiceMS, "must be more than 0 ms", format.Num(server.DefaultServiceMS)+" ms")
	cfg.Server.DeadlineMS = f.serverValues(&cfg.Server, "deadline_ms", f.DeadlineMS)
	f.notZero("server.deadline_ms", "server.deadline_ms", f.DeadlineMS, cfg.Server.DeadlineMS, "must be more than 0 ms", format.Num(server.DefaultDeadlineMS)+" ms")
	// An empty field is the default: the document says so, since the
	// engine refuses these fields given as 0.
	if strings.TrimSpace(f.Workers) == "" {
		cfg.Server.Workers = server.DefaultWorkers
	}
	if strings.TrimSpace(f.ServiceMS) == "" {
		cfg.Server.ServiceMS = server.DefaultServiceMS
	}
	if strings.TrimSpace(f.DeadlineMS) == "" {
		cfg.Server.DeadlineMS = server.DefaultDeadlineMS
	}
	cfg.Metrics.RollingWindowMS = f.number("metrics.rolling_window_ms", "metrics.rolling_window_ms", f.RollingWindowMS)
	f.notZero("metrics.rolling_window_ms", "metrics.rolling_window_ms", f.RollingWindowMS, cfg.Metrics.RollingWindowMS, "must be more than 0 ms", format.Num(experiments.DefaultMetricsWindowMS)+" ms")
	cfg.Metrics.FairnessWindowMS = f.number("metrics.fairness_window_ms", "metrics.fairness_window_ms", f.FairnessWindowMS)
	f.notZero("metrics.fairness_window_ms", "metrics.fairness_window_ms", f.FairnessWindowMS, cfg.Metrics.FairnessWindowMS, "must be more than 0 ms", format.Num(experiments.DefaultMetricsWindowMS)+" ms")
	if len(f.Parts) == 0 {
		f.AddError("parts", "workload.parts", "add at least one workload part")
	}
	for i, pf := range f.Parts {
		cfg.Workload.Parts = append(cfg.Workload.Parts, f.part(i, pf))
	}
	if len(f.Limiters) == 0 {
		f.AddError("limiters", "limiters", "add at least one limiter")
	}
	for i, lf := range f.Limiters {
		cfg.Limiters = append(cfg.Limiters, f.limiter(i, lf))
	}
	f.applyModels(&cfg)
	if s := strings.TrimSpace(f.Reports); s != "" {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg.Reports); err != nil {
			f.AddError("reports", "reports", "must be a JSON list of reports: "+strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	objs, objErrs := experiments.ParseObjectives(f.Objectives)
	for _, e := range objErrs {
		f.AddError("objectives", e.Path, e.Msg)
	}
	cfg.Objectives = objs
	unparsed := map[string]bool{}
	for k := range f.Errors {
		unparsed[k] = true
	}
	doc, err := json.Marshal(&cfg)
	if err != nil {
		f.AddError("", "", fmt.Sprintf("encode the config: %v", err))
		return nil, nil
	}
	decoded, err := document.DecodeConfig(doc)
	if err != nil {
		for _, e := range field.Errors(err) {
			if key := Key(e.Path); !unparsed[key] {
				f.AddError(key, e.Path, itemPrefix(&cfg, e.Path)+e.Msg)
			}
		}
	}
	if f.HasErrors() {
		return nil, nil
	}
	return doc, decoded
}

// seed reads the seed input: a whole number, or a list or range of them
// (a swept seed).
func (f *Sweep) seed(cfg *experiments.Config) {
	s := strings.TrimSpace(f.Seed)
	if s == "" {
		return
	}
	if !strings.ContainsAny(s, ",.") {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			f.AddError("seed", "seed", fmt.Sprintf("%q is not a whole number from 0 to %d", format.Clip(s, 40), uint64(1<<64-1)))
		}
		cfg.Seed = seed
		return
	}
	vs, err := ParseValues(s)
	if err != nil {
		f.AddError("seed", "seed", err.Error())
		return
	}
	seeds := make([]uint64, 0, len(vs))
	for _, v := range vs {
		if v < 0 || v != math.Trunc(v) || v > 1<<53 {
			f.AddError("seed", "seed", fmt.Sprintf("%s is not a whole number from 0 to 2^53 (a list of seeds)", format.Num(v)))
			return
		}
		seeds = append(seeds, uint64(v))
	}
	if len(seeds) > 0 {
		cfg.Seed = seeds[0]
	}
	if len(seeds) > 1 {
		cfg.Seeds = seeds
	}
}

// serverValues reads a server field's input: one number, or a list or
// range where the field's row says it sweeps (kept in s.Lists); it returns
// the first value (0 for an empty input).
func (f *Sweep) serverValues(s *server.Spec, name, text string) float64 {
	key, path := "server."+name, "server."+name
	fd, _ := server.FieldByName(name)
	text = strings.TrimSpace(text)
	if text == "" {
		return 0
	}
	if !fd.Sweep {
		if fd.Integer {
			return float64(f.integer(key, path, text))
		}
		return f.number(key, path, text)
	}
	vs, err := ParseValues(text)
	if err != nil {
		f.AddError(key, path, err.Error())
		return 0
	}
	if len(vs) == 0 {
		return 0
	}
	if fd.Integer {
		for _, v := range vs {
			if v != math.Trunc(v) {
				f.AddError(key, path, fmt.Sprintf("%s is not a whole number", format.Num(v)))
				return 0
			}
		}
	}
	if len(vs) > 1 {
		if s.Lists == nil {
			s.Lists = lists.Lists{}
		}
		s.Lists[name] = vs
	}
	return vs[0]
}

// number parses an optional number input; empty gives 0.
func (f *Sweep) number(key, path, text string) float64 {
	text = strings.TrimSpace(text)
	if text == "" {
		return 0
	}
	v, err := parseNumber(text)
	if err != nil {
		f.AddError(key, path, err.Error())
	}
	return v
}

// integer parses an optional whole-number input; empty gives 0.
func (f *Sweep) integer(key, path, text string) int {
	text = strings.TrimSpace(text)
	if text == "" {
		return 0
	}
	v, err := strconv.Atoi(text)
	if err != nil {
		f.AddError(key, path, fmt.Sprintf("%q is not a whole number", format.Clip(text, 40)))
	}
	return v
}

// notZero refuses a typed 0 in an input whose 0 means "the default" in the
// config document, so the engine never runs the default in place of what
// the user typed. An empty input still means the default.
func (f *Sweep) notZero(key, path, text string, v float64, msg, def string) {
	if strings.TrimSpace(text) == "" || v != 0 || len(f.Errors[key]) > 0 {
		return
	}
	f.AddError(key, path, fmt.Sprintf("%s (leave it empty for the default, %s)", msg, def))
}

var (
	rowItemPath   = regexp.MustCompile(`^workload\.parts\[(\d+)\]\.([a-z_]+)\[(\d+)\]`)
	valueItemPath = regexp.MustCompile(`^limiters\[(\d+)\]\.([a-z_]+)\[(\d+)\]`)
	// serverItemPath is a value of a swept server field.
	serverItemPath = regexp.MustCompile(`^server\.([a-z0-9_]+)\[(\d+)\]$`)
)

// itemPrefix names the item of a list input that an engine error is about
// ("segment 2 (-600,200): ", "value 3 (-4): "): the input holds the whole
// list, so the message beside it says which line or value is wrong.
func itemPrefix(cfg *experiments.Config, path string) string {
	if m := rowItemPath.FindStringSubmatch(path); m != nil {
		pi, n := atoi(m[1]), atoi(m[3])
		if pi >= len(cfg.Workload.Parts) {
			return ""
		}
		p := &cfg.Workload.Parts[pi]
		k := p.Kind()
		if k == nil {
			return ""
		}
		fd, ok := k.Field(m[2])
		if xs := p.Lists[m[2]]; ok && fd.Sweep && n < len(xs) {
			return fmt.Sprintf("value %d (%s): ", n+1, format.Num(xs[n]))
		}
		if !ok || !fd.Input.Items() {
			return ""
		}
		lines := strings.Split(fieldText(*fd, partJSON(p)[fd.Name]), "\n")
		if n >= len(lines) {
			return ""
		}
		req, _ := lineKeys(fd.Line)
		cells := strings.Split(lines[n], ",")
		return fmt.Sprintf("%s %d (%s): ", itemName(fd.Name), n+1, strings.Join(cells[:min(len(req), len(cells))], ","))
	}
	if m := serverItemPath.FindStringSubmatch(path); m != nil {
		if xs, n := cfg.Server.Lists[m[1]], atoi(m[2]); n < len(xs) {
			return fmt.Sprintf("value %d (%s): ", n+1, format.Num(xs[n]))
		}
	}
	if m := valueItemPath.FindStringSubmatch(path); m != nil {
		n := atoi(m[3])
		if v, ok := paramValue(cfg, atoi(m[1]), m[2], n); ok {
			return fmt.Sprintf("value %d (%s): ", n+1, format.Num(v))
		}
	}
	return ""
}

// partJSON is a part's fields as JSON values, by key.
func partJSON(p *workload.Part) map[string]json.RawMessage {
	var raw map[string]json.RawMessage
	if b, err := json.Marshal(p); err == nil {
		_ = json.Unmarshal(b, &raw) // plain data: cannot fail
	}
	return raw
}

// part reads part row i, only the inputs its type shows, into the engine's
// part; errors land on the inputs.
func (f *Sweep) part(i int, pf Part) workload.Part {
	key := func(name string) string { return RowKey("parts", i, name) }
	path := func(name string) string { return fmt.Sprintf("workload.parts[%d].%s", i, name) }
	typ := workload.PartType(strings.TrimSpace(pf.Type))
	k, ok := workload.LookupKind(typ)
	if !ok {
		f.AddError(key("type"), path("type"), fmt.Sprintf("choose a part type (one of %s)", workload.TypeList()))
		return workload.Part{Type: typ}
	}
	obj := map[string]any{"type": typ}
	var ls lists.Lists
	for _, fd := range k.Fields {
		text := pf.Get(fd.Name)
		if fd.Sweep && fd.Input.Number() && isList(text) {
			vs, err := ParseValues(text)
			if err != nil {
				f.AddError(key(fd.Name), path(fd.Name), err.Error())
				continue
			}
			if len(vs) > 0 {
				obj[fd.Name] = vs[0]
			}
			if len(vs) > 1 {
				if ls == nil {
					ls = lists.Lists{}
				}
				ls[fd.Name] = vs
			}
			continue
		}
		if v, ok := f.fieldValue(fd, key(fd.Name), path(fd.Name), text); ok {
			obj[fd.Name] = v
		}
	}
	var p workload.Part
	b, err := json.Marshal(obj)
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil { // a value the inputs parsed but the part cannot hold
		f.AddError(key("type"), path("type"), err.Error())
	}
	p.Type = typ
	p.Lists = ls
	return p
}

// isList reports whether an input's text is a list or a range of values
// (a number alone is not).
func isList(text string) bool { return strings.Contains(text, ",") || strings.Contains(text, "..") }

// fieldValue parses a part input into its JSON value; ok=false leaves the
// field out (an empty input, or one whose error is already on the form).
func (f *Sweep) fieldValue(fd workload.Field, key, path, text string) (any, bool) {
	switch {
	case fd.Input.Number() && strings.TrimSpace(text) == "":
		return nil, false
	case fd.Input.Whole():
		v := f.integer(key, path, text)
		return v, len(f.Errors[key]) == 0
	case fd.Input.Number():
		v := f.number(key, path, text)
		if fd.Default != "" && fd.Default != "0" && droppedAtZero(fd) {
			// 0 is left out of the document, which means the default: a
			// typed 0 must not run it.
			f.notZero(key, path, text, v, "must be more than 0", fd.Default)
		}
		return v, len(f.Errors[key]) == 0
	case fd.Input.Items():
		return f.lines(fd, key, path, text)
	case fd.Input.Upload():
		if e, ok := CheckTraceSize(path, len(text)); !ok {
			f.AddError(key, e.Path, e.Msg)
			return nil, false
		}
		return text, text != ""
	}
	text = strings.TrimSpace(text)
	return text, text != ""
}

// lines parses a lines input into its list of objects: one item a line,
// the line format's keys in order (optional ones may be left off), whole
// numbers where the engine's item holds a count.
func (f *Sweep) lines(fd workload.Field, key, path, text string) (any, bool) {
	req, opt := lineKeys(fd.Line)
	rows, err := parseRows(text, len(req), len(req)+len(opt))
	if err != nil {
		f.AddError(key, path, err.Error())
	}
	keys := append(req, opt...)
	items := make([]map[string]float64, 0, len(rows))
	for n, r := range rows {
		it := map[string]float64{}
		for c, v := range r {
			if wholeKey(fd, keys[c]) && v != float64(int(v)) {
				f.AddError(key, path, fmt.Sprintf("line %d: %s %s is not a whole number", n+1, keys[c], format.Num(v)))
			}
			it[keys[c]] = v
		}
		items = append(items, it)
	}
	return items, len(items) > 0
}

// wholeKey reports whether an item key of a lines field holds a count: a
// fraction there does not fit the engine's item.
func wholeKey(fd workload.Field, key string) bool {
	probe, _ := json.Marshal(map[string]any{fd.Name: []map[string]float64{{key: 0.5}}})
	var p workload.Part
	return json.Unmarshal(probe, &p) != nil
}

// droppedAtZero reports whether the engine's part leaves a field out of
// its document when it is 0 (so 0 reads back as the field's default).
func droppedAtZero(fd workload.Field) bool {
	var p workload.Part
	if json.Unmarshal([]byte(`{"`+fd.Name+`":0}`), &p) != nil {
		return false
	}
	b, _ := json.Marshal(&p)
	return !strings.Contains(string(b), `"`+fd.Name+`"`)
}

// parseRows reads lines of comma-separated numbers (a ";" also ends a
// line), each with min to max fields. Blank lines are skipped.
func parseRows(text string, min, max int) ([][]float64, error) {
	var rows [][]float64
	lines := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ';' })
	for n, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		cells := strings.Split(line, ",")
		if len(cells) < min || len(cells) > max {
			want := strconv.Itoa(min)
			if max > min {
				want += " or " + strconv.Itoa(max)
			}
			return rows, fmt.Errorf("line %d %q: expected %s numbers separated by commas", n+1, format.Clip(line, 40), want)
		}
		row := make([]float64, len(cells))
		for c, cell := range cells {
			v, err := parseNumber(cell)
			if err != nil {
				return rows, fmt.Errorf("line %d: %w", n+1, err)
			}
			row[c] = v
		}
		rows = append(rows, row)
	}
	return rows, nil
}
