package experiments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/workload"
)

// DecodeConfig reads a config document strictly: unknown fields, fields that
// do not belong to a part's or limiter's type, and trailing data are errors.
// The result is normalized and validated; errors are a field.List naming
// each bad field.
func DecodeConfig(data []byte) (*Config, error) {
	if len(data) > MaxConfigBytes {
		return nil, field.List{{Msg: fmt.Sprintf("config is %d bytes; the limit is %d", len(data), MaxConfigBytes)}}
	}
	var shell struct {
		Version     int             `json:"version"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Seed        uint64          `json:"seed"`
		Workload    json.RawMessage `json:"workload"`
		Server      json.RawMessage `json:"server"`
		Metrics     json.RawMessage `json:"metrics"`
		Limiters    json.RawMessage `json:"limiters"`
		Reports     json.RawMessage `json:"reports"`
		Servers     json.RawMessage `json:"servers"`
		Loads       json.RawMessage `json:"loads"`
		Classes     json.RawMessage `json:"classes"`
		ClassDraw   json.RawMessage `json:"class_draw"`
		SLO         json.RawMessage `json:"slo"`
		Output      json.RawMessage `json:"output"`
	}
	if errs := strict(data, &shell, ""); errs != nil {
		return nil, errs
	}
	var errs field.List
	if shell.Version != Version {
		errs.Add("version", "must be %d (this engine reads version %d documents)", Version, Version)
		return nil, errs
	}
	cfg := &Config{Version: shell.Version, Name: shell.Name, Description: shell.Description, Seed: shell.Seed}

	if len(shell.Workload) == 0 || string(shell.Workload) == "null" {
		errs.Add("workload", "is required")
	} else {
		var w struct {
			DurationMS float64           `json:"duration_ms"`
			Parts      []json.RawMessage `json:"parts"`
		}
		if e := strict(shell.Workload, &w, "workload"); e != nil {
			errs = append(errs, e...)
		} else {
			cfg.Workload.DurationMS = w.DurationMS
			var e field.List
			cfg.Workload.Parts, e = decodeTyped[workload.Part](w.Parts, "workload.parts", workload.CheckFields)
			errs = append(errs, e...)
		}
	}
	if len(shell.Server) > 0 {
		errs = append(errs, strict(shell.Server, &cfg.Server, "server")...)
	}
	if len(shell.Metrics) > 0 {
		errs = append(errs, strict(shell.Metrics, &cfg.Metrics, "metrics")...)
	}
	var limiters []json.RawMessage
	if len(shell.Limiters) == 0 {
		errs.Add("limiters", "is required: at least one limiter")
	} else if e := strict(shell.Limiters, &limiters, "limiters"); e != nil {
		errs = append(errs, e...)
	}
	var e field.List
	cfg.Limiters, e = decodeTyped[limiter.Spec](limiters, "limiters", limiter.CheckFields)
	errs = append(errs, e...)
	if len(shell.Reports) > 0 {
		errs = append(errs, strict(shell.Reports, &cfg.Reports, "reports")...)
	}
	errs = append(errs, decodeSeedModels(cfg, shell.Servers, shell.Loads, shell.Classes, shell.ClassDraw, shell.SLO, shell.Output)...)
	if len(errs) > 0 {
		return nil, errs
	}
	cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// decodeTyped decodes a list of typed objects (workload parts, limiters):
// check refuses the keys an object's type does not take, then each object is
// decoded strictly under its path (base[i]).
func decodeTyped[T any](raws []json.RawMessage, base string, check func(path string, raw json.RawMessage) field.List) ([]T, field.List) {
	var out []T
	var errs field.List
	for i, raw := range raws {
		path := field.Index(base, i)
		if e := check(path, raw); e != nil {
			errs = append(errs, e...)
			continue
		}
		var v T
		if e := strict(raw, &v, path); e != nil {
			errs = append(errs, e...)
			continue
		}
		out = append(out, v)
	}
	return out, errs
}

// strict decodes one JSON value into dst, refusing unknown fields and
// trailing data, and turns decoding errors into field errors under path.
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
		if typeErr.Field != "" {
			p = field.Join(path, typeErr.Field)
		}
		what := kindName(typeErr.Type.Kind().String())
		if typeErr.Type == reflect.TypeFor[limiter.Values]() {
			what = "a number or a list of numbers"
		}
		errs.Add(p, "must be %s, not %s", what, typeErr.Value)
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

func kindName(k string) string {
	switch k {
	case "float64", "int", "uint64", "int64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "struct", "map":
		return "an object"
	}
	return k
}
