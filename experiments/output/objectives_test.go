package output_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/output"
)

// objectivesDoc: 50 req/s, constant, through a token bucket of burst 2 at
// 20, 40 and 60 req/s admits 20, 40 and 50 req/s (rejects 60%, 20%, 0%).
// With reject_pct <= 30 and admitted_rps <= 45 only rate 40 meets both.
const objectivesDoc = `{"version":1,"seed":1,
 "workload":{"duration_ms":10000,"parts":[{"type":"constant","rate_rps":50}]},
 "server":{"workers":1,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[20,40,60],"burst":2}],
 "objectives":[{"metric":"reject_pct","op":"<=","value":30},{"metric":"admitted_rps","op":"<=","value":45}]}`

func TestResultsObjectiveColumns(t *testing.T) {
	cfg, err := experiments.DecodeConfig([]byte(objectivesDoc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(output.Results(res))), "\n")
	if !strings.HasSuffix(lines[0], ",pass_reject_pct_le_30,pass_admitted_rps_le_45,meets_all") {
		t.Fatalf("header %s", lines[0])
	}
	for i, want := range []string{",false,true,false", ",true,true,true", ",true,false,false"} {
		if !strings.HasSuffix(lines[i+1], want) {
			t.Errorf("row %d %s, want suffix %s", i, lines[i+1], want)
		}
	}
}

// TestSweptOfNoneIsEmpty: a limiter without parameters sweeps nothing, so
// a points report's swept cell is empty for it, not 0.0.
func TestSweptOfNoneIsEmpty(t *testing.T) {
	cfg, err := experiments.DecodeConfig([]byte(`{"version":1,"seed":1,
	 "workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},
	 "limiters":[{"type":"token-bucket","rate_rps":40,"burst":[2,4]},{"type":"none"}],
	 "reports":[{"type":"points","file":"p.csv","columns":[{"header":"limiter","value":"limiter"},{"header":"x","value":"swept"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiments.Run(context.Background(), cfg, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := output.Report(res, &cfg.Reports[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), "limiter,x\ntoken-bucket,2\ntoken-bucket,4\nnone,\n"; got != want {
		t.Fatalf("report\n%s\nwant\n%s", got, want)
	}
}
