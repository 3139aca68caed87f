package experiments_test

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
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
	f.Add([]byte(base))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := experiments.DecodeConfig(data)
		if err != nil {
			if len(field.Errors(err)) == 0 {
				t.Fatalf("error %q is not a list of field errors", err)
			}
			return
		}
		doc := cfg.JSON()
		again, err := experiments.DecodeConfig(doc)
		if err != nil {
			t.Fatalf("the normalized document does not decode: %v\n%s", err, doc)
		}
		if !reflect.DeepEqual(cfg, again) {
			t.Fatalf("decode(JSON(cfg)) differs from cfg:\n%s\n%s", doc, again.JSON())
		}
		if !bytes.Equal(doc, again.JSON()) {
			t.Fatalf("the normalized document is not stable:\n%s\n%s", doc, again.JSON())
		}
		if cfg.Workload.Expected() > 5000 || len(cfg.Points()) > 16 || cfg.Workload.DurationMS > 1e6 {
			return
		}
		res, err := experiments.Run(context.Background(), cfg, experiments.Options{Workers: 1})
		if err != nil {
			return // for example a trace that a part's window cuts
		}
		if _, err := output.Files(res); err != nil {
			t.Fatalf("a config that ran cannot be written: %v", err)
		}
	})
}
