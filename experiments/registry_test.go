package experiments_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/limiter/limitertest"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
)

const spacerConfig = `{"version": 1, "seed": 1,
 "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 200}]},
 "limiters": [
  {"type": "test-spacer", "gap_ms": [5, 10, 20]},
  {"type": "chain", "stages": [{"type": "test-spacer", "gap_ms": 8, "edge": "open"}, {"type": "server", "workers": 1, "service_ms": 2}]}]}`

// A gate type added to the registry alone (limitertest registers one in
// this test binary) is decoded, validated, swept, bounded and written to
// results.csv with no edit anywhere else.
func TestRegisteredGateNeedsNoOtherEdit(t *testing.T) {
	if _, err := document.DecodeConfig([]byte(spacerConfig)); err == nil {
		t.Fatal("before it is registered, test-spacer is accepted")
	}
	limitertest.Register(t)

	cfg, err := document.DecodeConfig([]byte(spacerConfig))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Limiters[0].Option("edge"); got != "closed" {
		t.Errorf("edge defaults to %q, want its first choice closed", got)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{200, 100, 50, 100} { // arrivals 5 ms apart; the chain's 8 ms gap passes every other
		if got := res.Points[i].Metrics.Admitted; got != want {
			t.Errorf("point %d (%s %v): admitted %d, want %d", i, res.Points[i].Limiter, res.Points[i].Params, got, want)
		}
	}
	if b := res.Points[2].Bounds; b == nil || !b.Bounded || b.SojournBoundMS != 20 { // T + b/R = 10 + 1/0.1
		t.Errorf("point 2 (50 rps into 100 rps) has no network-calculus bound from the registered curve: %+v", b)
	}
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	// The columns every run has (the parameters whose rows say Column: the
	// textbook gates') come first, in the registry's order, then gap_ms,
	// which this sweep uses; the spacer leaves theirs empty. No other
	// gate's parameter has a column here.
	var builtin []string
	for _, q := range limiter.AllParams() {
		if q.Column {
			builtin = append(builtin, q.Name)
		}
	}
	if len(builtin) == 0 {
		t.Fatal("no parameter of the registry is a column of every run")
	}
	header, _, _ := bytes.Cut(files[0].Data, []byte("\n"))
	if !strings.Contains(string(header), ","+strings.Join(builtin, ",")+",gap_ms,arrivals,") {
		t.Errorf("results.csv header is not the parameters every run has (%v), then gap_ms: %s", builtin, header)
	}
	if !bytes.Contains(files[0].Data, []byte("\n0,test-spacer,test-spacer,"+strings.Repeat(",", len(builtin))+"5.0,")) {
		t.Errorf("results.csv has no row with gap_ms 5.0:\n%s", files[0].Data)
	}
	if got := limiter.FormatParams(limitertest.Type, res.Points[1].Params); got != "gap_ms=10" {
		t.Errorf("FormatParams = %q", got)
	}

	// Validation reads the parameter table: its range and the option's
	// choices, named by field path.
	bad := strings.Replace(spacerConfig, `"gap_ms": [5, 10, 20]`, `"gap_ms": [5, 0.1], "edge": "sideways", "burst": 3`, 1)
	_, err = document.DecodeConfig([]byte(bad))
	errs := field.Errors(err)
	if len(errs) == 0 || errs[0].Path != "limiters[0].burst" || !strings.Contains(errs[0].Msg, "is not a parameter of test-spacer (parameters: [gap_ms])") {
		t.Errorf("a built-in parameter on the new gate: %v", err)
	}
	bad = strings.Replace(spacerConfig, `"gap_ms": [5, 10, 20]`, `"gap_ms": [5, 0.1], "edge": "sideways"`, 1)
	_, err = document.DecodeConfig([]byte(bad))
	got := map[string]string{}
	for _, e := range field.Errors(err) {
		got[e.Path] = e.Msg
	}
	if !strings.Contains(got["limiters[0].gap_ms[1]"], "must be between 0.5 and 60000 ms") {
		t.Errorf("gap_ms 0.1: %v", err)
	}
	if !strings.Contains(got["limiters[0].edge"], `must be "closed" or "open"`) {
		t.Errorf("edge sideways: %v", err)
	}
}

// nginx with a key per client and delays over several clients is refused
// at its nodelay setting before the run (its releases would leave out of
// order); with nodelay on, or one client, it runs.
func TestNginxPerClientDelaysRefusedAtValidation(t *testing.T) {
	doc := `{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"clients","group":"g","clients":3,"rate_rps":20}]},
	 "limiters":[{"type":"nginx-limit-req","rate_rps":10,"burst":5,"key":"client"%s}]}`
	_, err := document.DecodeConfig([]byte(fmt.Sprintf(doc, "")))
	errs := field.Errors(err)
	if len(errs) != 1 || errs[0].Path != "limiters[0].nodelay" || !strings.Contains(errs[0].Msg, "out of arrival order") {
		t.Errorf("per-client delays: %v", err)
	}
	if _, err := document.DecodeConfig([]byte(fmt.Sprintf(doc, `,"nodelay":"on"`))); err != nil {
		t.Errorf("per-client nodelay: %v", err)
	}
}
