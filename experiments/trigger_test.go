package experiments_test

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
)

// TestTriggerMustBeMeasurable: a trigger recovery cannot be measured after
// (no whole second before it, or no time after it in the arrival window)
// is refused at its field; it was accepted, and the run page then said no
// point had recovered.
func TestTriggerMustBeMeasurable(t *testing.T) {
	doc := func(trigger string) string {
		return `{"version":1,"workload":{"duration_ms":5000,"parts":[{"type":"poisson","rate_rps":50,"timeout_ms":100,"retries":1}]},
			"limiters":[{"type":"token-bucket","rate_rps":60,"burst":5}],"trigger":` + trigger + `}`
	}
	for _, c := range []struct{ trigger, path string }{
		{`{"start_ms":500,"end_ms":2000}`, "trigger.start_ms"},
		{`{"start_ms":999.9,"end_ms":2000}`, "trigger.start_ms"},
		{`{"start_ms":2000,"end_ms":5000}`, "trigger.end_ms"},
		{`{"start_ms":1000,"end_ms":4999}`, ""},
	} {
		_, err := document.DecodeConfig([]byte(doc(c.trigger)))
		var paths []string
		for _, e := range field.Errors(err) {
			paths = append(paths, e.Path+": "+e.Msg)
		}
		got := strings.Join(paths, "; ")
		if c.path == "" && err != nil || c.path != "" && !strings.HasPrefix(got, c.path+":") {
			t.Errorf("trigger %s: %q, want an error at %q", c.trigger, got, c.path)
		}
	}
}
