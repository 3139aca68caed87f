package document_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// FuzzDecodeConfig: DecodeConfig never panics; it refuses with field errors
// or returns a config whose normalized document decodes to the same config
// and the same document. Small accepted configs are also run and written,
// which must not panic either. The seed corpus is in
// testdata/fuzz/FuzzDecodeConfig (the presets, testdata/all-types.json and
// near misses); run with
//
//	go test -run '^$' -fuzz FuzzDecodeConfig -fuzztime 60s ./experiments/
func FuzzDecodeConfig(f *testing.F) {
	for _, p := range presets.All() {
		f.Add(p.JSON)
	}
	f.Add([]byte(enginetest.Base))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := document.DecodeConfig(data)
		if err != nil {
			if len(field.Errors(err)) == 0 {
				t.Fatalf("error %q is not a list of field errors", err)
			}
			return
		}
		if again := decodesToItself(t, cfg); !reflect.DeepEqual(cfg, again) {
			t.Fatalf("decode(JSON(cfg)) differs from cfg:\n%s\n%s", cfg.JSON(), again.JSON())
		}
		if cfg.Workload.Expected() > 5000 || len(cfg.Points()) > 16 || cfg.Workload.DurationMS > 1e6 {
			return
		}
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
		if err != nil {
			return // for example a trace that a part's window cuts
		}
		if _, err := output.Files(res); err != nil {
			t.Fatalf("a config that ran cannot be written: %v", err)
		}
	})
}

// FuzzDecodeModels: the form's models input (DecodeModels: servers, loads,
// classes, class_draw, slo, policies, trigger as one JSON object) never
// panics; it refuses with field errors, or gives a config that, normalized
// as DecodeConfig does, validates without panicking and, when valid, whose
// document decodes to itself. Seeds: each preset's sections of that kind.
//
//	go test -run '^$' -fuzz FuzzDecodeModels -fuzztime 60s ./experiments/
func FuzzDecodeModels(f *testing.F) {
	for _, p := range presets.All() {
		var doc map[string]json.RawMessage
		if json.Unmarshal(p.JSON, &doc) != nil {
			continue
		}
		models := map[string]json.RawMessage{}
		for _, k := range []string{"servers", "loads", "classes", "class_draw", "slo", "policies", "trigger"} {
			if v, ok := doc[k]; ok {
				models[k] = v
			}
		}
		if b, err := json.Marshal(models); err == nil && len(models) > 0 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"policies": [{"name": "p", "retries": 2, "jitter": "full"}], "trigger": {"start_ms": 1000, "end_ms": 1500}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := document.DecodeConfig([]byte(enginetest.Base))
		if err != nil {
			t.Fatal(err)
		}
		if errs := document.DecodeModels(cfg, data); errs != nil {
			for _, e := range errs {
				if e.Path == "" && e.Msg == "" {
					t.Fatalf("an empty field error for %q", data)
				}
			}
			return
		}
		cfg.Normalize() // as DecodeConfig does (the form decodes the document it builds)
		if err := cfg.Validate(); err != nil {
			if len(field.Errors(err)) == 0 {
				t.Fatalf("error %q is not a list of field errors", err)
			}
			return
		}
		decodesToItself(t, cfg)
	})
}

// decodesToItself checks that cfg's document decodes and writes the same
// document again, and returns the config it decodes to.
func decodesToItself(t *testing.T, cfg *experiments.Config) *experiments.Config {
	t.Helper()
	doc := cfg.JSON()
	again, err := document.DecodeConfig(doc)
	if err != nil {
		t.Fatalf("the normalized document does not decode: %v\n%s", err, doc)
	}
	if !bytes.Equal(doc, again.JSON()) {
		t.Fatalf("the normalized document is not stable:\n%s\n%s", doc, again.JSON())
	}
	return again
}
