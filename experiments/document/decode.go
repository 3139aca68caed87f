// Package document reads a config document: the JSON text the form
// builds, the API takes, the CLI reads and manifest.json records, strictly
// (a key given twice at any depth, text that is not UTF-8 and unknown
// fields are errors with the field's path), from an io.Reader a byte at a
// time (ReadConfig, the reader in reader.go) or from bytes (DecodeConfig),
// into an experiments.Config it normalizes and validates.
package document

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/lists"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// DecodeConfig reads a config document held in memory; see ReadConfig.
func DecodeConfig(data []byte) (*experiments.Config, error) {
	return ReadConfig(bytes.NewReader(data), Limits{})
}

// Limits bound what ReadConfig reads.
type Limits struct {
	// MaxBytes bounds the document (0: MaxConfigBytes).
	MaxBytes int64
	// MaxString bounds one string of it, in decoded bytes (0: no bound
	// but MaxBytes). A trace's CSV is the only long string of a config.
	MaxString int
}

// ReadConfig reads a config document from r a byte at a time, strictly: a key
// given twice in one object, text that is not UTF-8, unknown fields,
// fields that do not belong to a part's or limiter's type, numbers beyond
// float64, and trailing data are errors. The document is never held whole:
// each workload part and limiter is decoded as soon as it is read. The
// result is normalized and validated.
//
// Errors: a *Error when the input is not JSON text or is past a
// limit (TooLarge), a *ReadError when r fails, else a field.List naming
// each bad field. field.Errors gives the list of any of them.
func ReadConfig(r io.Reader, lim Limits) (*experiments.Config, error) {
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = experiments.MaxConfigBytes
	}
	var parts []workload.Part
	var specs []limiter.Spec
	var partErrs, limiterErrs field.List
	d := &documentReader{r: bufio.NewReaderSize(r, 64<<10), max: lim.MaxBytes, maxString: lim.MaxString}
	d.sink = func(list sinkList, i int, raw []byte) {
		switch list {
		case partsSink:
			if len(partErrs) < experiments.MaxFieldErrors {
				path := field.Index("workload.parts", i)
				raw, ls, e := splitPart(raw, path)
				v, e2 := decodeOne[workload.Part](raw, path, workload.CheckFields)
				e = append(e, e2...)
				if len(v) == 1 {
					v[0].Lists = ls
					if d.hasTrace {
						v[0].CSV = d.trace
					}
				}
				parts, partErrs = append(parts, v...), append(partErrs, e...)
			}
		case limitersSink:
			if len(limiterErrs) < experiments.MaxFieldErrors {
				v, e := decodeOne[limiter.Spec](raw, field.Index("limiters", i), limiter.CheckFields)
				specs, limiterErrs = append(specs, v...), append(limiterErrs, e...)
			}
		}
	}
	var skeleton []byte
	if err := d.document(&skeleton); err != nil {
		return nil, err
	}
	var shell struct {
		Version      int             `json:"version"`
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		Seed         json.RawMessage `json:"seed"`
		Replications *int            `json:"replications"`
		Workload     json.RawMessage `json:"workload"`
		Server       json.RawMessage `json:"server"`
		Metrics      json.RawMessage `json:"metrics"`
		Limiters     json.RawMessage `json:"limiters"`
		Reports      json.RawMessage `json:"reports"`
		Objectives   json.RawMessage `json:"objectives"`
		Decision     json.RawMessage `json:"decision"`
		Servers      json.RawMessage `json:"servers"`
		Loads        json.RawMessage `json:"loads"`
		Classes      json.RawMessage `json:"classes"`
		ClassDraw    json.RawMessage `json:"class_draw"`
		SLO          json.RawMessage `json:"slo"`
		Output       json.RawMessage `json:"output"`
		Policies     json.RawMessage `json:"policies"`
		Trigger      json.RawMessage `json:"trigger"`
	}
	if errs := strict(skeleton, &shell, ""); errs != nil {
		return nil, errs
	}
	var errs, zeros field.List
	if shell.Version != experiments.Version {
		errs.Add("version", "must be %d (this engine reads version %d documents)", experiments.Version, experiments.Version)
		return nil, errs
	}
	cfg := &experiments.Config{Version: shell.Version, Name: shell.Name, Description: shell.Description}
	errs = append(errs, decodeSeed(cfg, shell.Seed)...)
	if shell.Replications != nil {
		cfg.Replications = *shell.Replications
		if cfg.Replications == 0 {
			errs.Add("replications", "must be from 2 to %d (leave it out for one run a point)", experiments.MaxReplications)
		}
	}

	if len(shell.Workload) == 0 || string(shell.Workload) == "null" {
		errs.Add("workload", "is required")
	} else {
		var w struct {
			DurationMS float64           `json:"duration_ms"`
			Parts      []json.RawMessage `json:"parts"`
			Pacing     string            `json:"pacing"`
		}
		if e := strict(shell.Workload, &w, "workload"); e != nil {
			errs = append(errs, e...)
		} else {
			// The parts were decoded as they were read (w.Parts is empty).
			cfg.Workload.DurationMS = w.DurationMS
			cfg.Workload.Parts = parts
			cfg.Workload.Pacing = w.Pacing
			errs = append(errs, partErrs...)
		}
	}
	if len(shell.Server) > 0 {
		raw, ls, e := lists.Split(shell.Server, "server", server.Sweepable)
		errs = append(errs, e...)
		errs = append(errs, strict(raw, &cfg.Server, "server")...)
		zeros = givenZero(raw, "server")
		cfg.Server.Lists = ls
	}
	if len(shell.Metrics) > 0 {
		errs = append(errs, strict(shell.Metrics, &cfg.Metrics, "metrics")...)
	}
	var limiters []json.RawMessage
	if len(shell.Limiters) == 0 {
		errs.Add("limiters", "is required: at least one limiter")
	} else if e := strict(shell.Limiters, &limiters, "limiters"); e != nil {
		errs = append(errs, e...)
	} else {
		cfg.Limiters = specs
		errs = append(errs, limiterErrs...)
	}
	if len(shell.Reports) > 0 {
		errs = append(errs, strict(shell.Reports, &cfg.Reports, "reports")...)
	}
	if len(shell.Objectives) > 0 {
		var objs []json.RawMessage
		if e := strict(shell.Objectives, &objs, "objectives"); e != nil {
			errs = append(errs, e...)
		}
		for i, raw := range objs {
			var o experiments.Objective
			if e := strict(raw, &o, field.Index("objectives", i)); e != nil {
				errs = append(errs, e...)
			}
			cfg.Objectives = append(cfg.Objectives, o)
		}
	}
	errs = append(errs, decodeDecision(cfg, shell.Decision)...)
	errs = append(errs, decodeModelSections(cfg, shell.Servers, shell.Loads, shell.Classes, shell.ClassDraw, shell.SLO, shell.Output)...)
	errs = append(errs, decodePolicies(cfg, shell.Policies, shell.Trigger)...)
	if len(errs) > 0 {
		return nil, errorsKept(errs)
	}
	cfg.Normalize()
	// A server field given as 0 is refused beside the validation's errors
	// (Normalize has put the default in its place).
	if err := cfg.Validate(); err != nil || len(zeros) > 0 {
		return nil, errorsKept(append(zeros, field.Errors(err)...))
	}
	return cfg, nil
}

// DecodeModels decodes into cfg the sections of a config document beside
// its workload, server and limiters that one JSON object gives (the web
// form's "models" input): servers, loads, classes, class_draw, slo,
// policies, trigger and decision, strictly and with the field paths a config
// document's errors have (policies[0].jitter). An unknown key is an error
// at its own path. cfg is not normalized or validated.
func DecodeModels(cfg *experiments.Config, data []byte) field.List {
	var shell struct {
		Servers   json.RawMessage `json:"servers"`
		Loads     json.RawMessage `json:"loads"`
		Classes   json.RawMessage `json:"classes"`
		ClassDraw json.RawMessage `json:"class_draw"`
		SLO       json.RawMessage `json:"slo"`
		Policies  json.RawMessage `json:"policies"`
		Trigger   json.RawMessage `json:"trigger"`
		Decision  json.RawMessage `json:"decision"`
		// The base server's knee and degrade events (server.Shape).
		ServerShape json.RawMessage `json:"server_shape"`
	}
	if errs := strict(data, &shell, ""); errs != nil {
		return errs
	}
	errs := decodeModelSections(cfg, shell.Servers, shell.Loads, shell.Classes, shell.ClassDraw, shell.SLO, nil)
	if len(shell.ServerShape) > 0 && string(shell.ServerShape) != "null" {
		var sh server.Shape
		if e := strict(shell.ServerShape, &sh, "server_shape"); e != nil {
			errs = append(errs, e...)
		} else {
			cfg.Server.SetShape(&sh)
		}
	}
	errs = append(errs, decodeDecision(cfg, shell.Decision)...)
	return append(errs, decodePolicies(cfg, shell.Policies, shell.Trigger)...)
}

// decodeDecision decodes the decision section (objectives.go), if given.
func decodeDecision(cfg *experiments.Config, raw json.RawMessage) field.List {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	cfg.Decision = &experiments.Decision{}
	return strict(raw, cfg.Decision, "decision")
}

// decodeOne decodes one typed object (a workload part, a limiter) at path:
// check refuses the keys its type does not take, then it is decoded
// strictly.
func decodeOne[T any](raw []byte, path string, check func(path string, raw json.RawMessage) field.List) ([]T, field.List) {
	if e := check(path, raw); e != nil {
		return nil, e
	}
	var v T
	if e := strict(raw, &v, path); e != nil {
		return nil, e
	}
	return []T{v}, nil
}

// strict decodes one JSON value into dst, refusing unknown fields and
// trailing data, and turns decoding errors into field errors under path.
// givenZero refuses the server's workers, service_ms or deadline_ms given
// as 0: left out, each takes its default, but a 0 written out is a value
// the server cannot have, not a request for the default.
func givenZero(raw json.RawMessage, path string) field.List {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil // strict has said why
	}
	var errs field.List
	for _, d := range []struct {
		key string
		def float64
	}{{"workers", server.DefaultWorkers}, {"service_ms", server.DefaultServiceMS}, {"deadline_ms", server.DefaultDeadlineMS}} {
		var v float64
		if b, ok := m[d.key]; ok && json.Unmarshal(b, &v) == nil && v == 0 {
			errs.Add(field.Join(path, d.key), "must be more than 0, not 0 (leave it out for the default, %g)", d.def)
		}
	}
	return errs
}

func strict(data []byte, dst any, path string) field.List {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if err == nil {
		if _, e := dec.Token(); e != io.EOF {
			err = errors.New("unexpected data after the JSON value")
		}
	}
	if err == nil {
		return nil
	}
	var errs field.List
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		p := path
		if f := jsonPath(reflect.TypeOf(dst), typeErr.Field); f != "" {
			p = field.Join(path, f)
		}
		errs.Add(p, "must be %s, not %s", typeName(typeErr.Type), valueName(typeErr.Value))
	case errors.As(err, &syntaxErr):
		errs.Add(path, "is not valid JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		errs.Add(field.Join(path, name), "is not a known field")
	case err == io.EOF:
		errs.Add(path, "is empty")
	case err == io.ErrUnexpectedEOF:
		errs.Add(path, "is not valid JSON: it ends too early")
	default:
		errs.Add(path, "%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return errs
}

// jsonPath turns encoding/json's path of a type error (dotted, naming an
// embedded struct by its Go name: "Behaviour.retries") into the config's
// path under t ("retries"): a segment naming an embedded struct without a
// JSON name of its own is dropped.
func jsonPath(t reflect.Type, goPath string) string {
	if goPath == "" {
		return ""
	}
	var out []string
	segs := strings.Split(goPath, ".")
	for i, seg := range segs {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			t = t.Elem()
		}
		switch {
		case t == nil:
			out = append(out, segs[i:]...)
			return strings.Join(out, ".")
		case t.Kind() == reflect.Map:
			out, t = append(out, seg), t.Elem()
		case t.Kind() == reflect.Struct:
			next := reflect.Type(nil)
			embedded := false
			for j := range t.NumField() {
				f := t.Field(j)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == seg {
					next, embedded = f.Type, false
					break
				}
				if f.Anonymous && name == "" && f.Name == seg {
					next, embedded = f.Type, true
				}
			}
			if !embedded {
				out = append(out, seg)
			}
			t = next
		default:
			out, t = append(out, seg), nil
		}
	}
	return strings.Join(out, ".")
}

// typeName says what a Go type of the config takes, with its range when
// the type alone bounds it.
func typeName(t reflect.Type) string {
	if t == reflect.TypeFor[limiter.Values]() {
		return "a number or a list of numbers"
	}
	switch t.Kind() {
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a whole number from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return typeName(t.Elem())
	}
	return t.Kind().String()
}

// valueName names the JSON value encoding/json could not store: "-1" for
// a number it read, "a string" for a kind.
func valueName(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	switch v {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "number":
		return "a number"
	case "nothing":
		return "nothing"
	}
	return v
}

// decodeSeed reads the seed: a whole number or a list of them.
func decodeSeed(cfg *experiments.Config, raw json.RawMessage) field.List {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] != '[' {
		return strict(raw, &cfg.Seed, "seed")
	}
	var errs field.List
	var xs []uint64
	if json.Unmarshal(raw, &xs) != nil {
		errs.Add("seed", "must be a whole number from 0 to %d or a list of them", uint64(math.MaxUint64))
		return errs
	}
	switch {
	case len(xs) == 0:
		errs.Add("seed", "is an empty list: give a seed or a list of seeds")
	case len(xs) > lists.MaxValues:
		errs.Add("seed", "at most %d values", lists.MaxValues)
	default:
		cfg.Seed = xs[0]
		if len(xs) > 1 {
			cfg.Seeds = xs
		}
	}
	return errs
}

// splitPart takes the lists out of a raw workload part (see lists.Split).
func splitPart(raw []byte, path string) ([]byte, lists.Lists, field.List) {
	var head struct {
		Type workload.PartType `json:"type"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return raw, nil, nil
	}
	return lists.Split(raw, path, workload.Sweepable(head.Type))
}

// decodePolicies decodes the policies and the trigger strictly.
func decodePolicies(cfg *experiments.Config, policies, trigger json.RawMessage) field.List {
	var errs field.List
	given := func(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }
	if given(policies) {
		var raws []json.RawMessage
		errs = append(errs, strict(policies, &raws, "policies")...)
		for i, raw := range raws {
			var p experiments.ClientPolicy
			if e := strict(raw, &p, field.Index("policies", i)); e != nil {
				errs = append(errs, e...)
				continue
			}
			cfg.Policies = append(cfg.Policies, p)
		}
		if len(raws) == 0 && len(errs) == 0 {
			errs.Add("policies", "needs at least one policy (or leave policies out)")
		}
	}
	if given(trigger) {
		cfg.Trigger = new(experiments.TriggerSpec)
		errs = append(errs, strict(trigger, cfg.Trigger, "trigger")...)
	}
	return errs
}

// decodeModelSections decodes the optional sections of variants.go,
// classes.go and rules.go strictly, each under its path.
func decodeModelSections(cfg *experiments.Config, servers, loads, classes, classDraw, slo, out json.RawMessage) field.List {
	var errs field.List
	given := func(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }
	if given(servers) {
		var raws []json.RawMessage
		if e := strict(servers, &raws, "servers"); e != nil {
			errs = append(errs, e...)
		}
		for i, raw := range raws {
			var v experiments.ServerVariant
			if e := strict(raw, &v, field.Index("servers", i)); e != nil {
				errs = append(errs, e...)
				continue
			}
			cfg.Servers = append(cfg.Servers, v)
		}
		if len(raws) == 0 && len(errs) == 0 {
			errs.Add("servers", "needs at least one server (or leave servers out)")
		}
	}
	if given(loads) {
		var raws []json.RawMessage
		if e := strict(loads, &raws, "loads"); e != nil {
			errs = append(errs, e...)
		}
		for i, raw := range raws {
			path := field.Index("loads", i)
			var shell struct {
				Name  string            `json:"name"`
				Parts []json.RawMessage `json:"parts"`
			}
			if e := strict(raw, &shell, path); e != nil {
				errs = append(errs, e...)
				continue
			}
			var parts []workload.Part
			for j, rawPart := range shell.Parts {
				v, e := decodeOne[workload.Part](rawPart, field.Index(field.Join(path, "parts"), j), workload.CheckFields)
				parts, errs = append(parts, v...), append(errs, e...)
			}
			cfg.Loads = append(cfg.Loads, experiments.Load{Name: shell.Name, Parts: parts})
		}
		if len(raws) == 0 && len(errs) == 0 {
			errs.Add("loads", "needs at least one load (or leave loads out)")
		}
	}
	if given(classes) {
		errs = append(errs, strict(classes, &cfg.Classes, "classes")...)
	}
	if given(classDraw) {
		cfg.ClassDraw = new(experiments.ClassDraw)
		errs = append(errs, strict(classDraw, cfg.ClassDraw, "class_draw")...)
	}
	if given(slo) {
		cfg.SLO = new(experiments.SLO)
		errs = append(errs, strict(slo, cfg.SLO, "slo")...)
	}
	if given(out) {
		errs = append(errs, strict(out, &cfg.Output, "output")...)
	}
	return errs
}
