package experiments_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
)

// TestSizeCountsSweptRetries: the decision budget counts a swept retries
// list at its largest value, as it counts a single value: retries [0, 100]
// was counted as one attempt per arrival and let a sweep 101 times the
// budget through.
func TestSizeCountsSweptRetries(t *testing.T) {
	var rates []string
	for r := 1000; r <= 50000; r += 1000 {
		rates = append(rates, strconv.Itoa(r))
	}
	doc := func(retries string) string {
		return `{"version":1,"workload":{"duration_ms":1000000,"parts":[{"type":"poisson","rate_rps":10000,"timeout_ms":100,"retries":` + retries + `}]},
			"limiters":[{"type":"token-bucket","rate_rps":[` + strings.Join(rates, ",") + `],"burst":[10,20]}]}`
	}
	for _, c := range []struct {
		retries string
		refused bool
	}{{"0", false}, {"100", true}, {"[0, 100]", true}, {"[100, 0]", true}} {
		_, err := document.DecodeConfig([]byte(doc(c.retries)))
		refused := false
		for _, e := range field.Errors(err) {
			refused = refused || strings.Contains(e.Msg, "decisions")
		}
		if refused != c.refused {
			t.Errorf("retries %s: refused %v (%v), want %v", c.retries, refused, err, c.refused)
		}
	}
}
