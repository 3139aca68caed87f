package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
)

// A run through Options.Traces names every trace it read with the sha256
// of its text; a trace whose text changes between two reads of one sweep
// fails it, whichever read comes first.
func TestRunRecordsItsTraces(t *testing.T) {
	const text = "t_ms,client\n0,a\n5,b\n10,a\n20,b\n"
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "workload": {"duration_ms": 100, "parts": [{"type": "trace", "file": "day.csv"}]},
		"limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": [1, 2]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), cfg, Options{Workers: 2, Traces: func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(text)), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(text))
	want := experiments.Input{Name: "day.csv", SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(text))}
	if len(res.Inputs) != 1 || res.Inputs[0] != want {
		t.Fatalf("inputs %+v, want [%+v]", res.Inputs, want)
	}

	d := newTraceDigests(nil)
	for i, s := range []string{text, text, strings.Replace(text, "20,b", "21,b", 1)} {
		d.open = func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }
		rc, err := d.opener("day.csv")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(rc); err != nil {
			t.Fatal(err)
		}
		rc.Close()
		if _, err := d.inputs(); (err != nil) != (i == 2) {
			t.Fatalf("read %d: inputs error %v", i, err)
		}
	}
	// A read cut short records nothing.
	d = newTraceDigests(func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil })
	rc, _ := d.opener("day.csv")
	rc.Read(make([]byte, 5))
	rc.Close()
	if in, err := d.inputs(); err != nil || len(in) != 0 {
		t.Fatalf("a partial read recorded %+v, %v", in, err)
	}
}
