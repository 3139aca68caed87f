package output_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/golden"
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
	cfg, err := document.DecodeConfig([]byte(objectivesDoc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
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
	cfg, err := document.DecodeConfig([]byte(`{"version":1,"seed":1,
	 "workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":50}]},
	 "limiters":[{"type":"token-bucket","rate_rps":40,"burst":[2,4]},{"type":"none"}],
	 "reports":[{"type":"points","file":"p.csv","columns":[{"header":"limiter","value":"limiter"},{"header":"x","value":"swept"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
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

// settings.csv: a row per setting with its worst values, pass columns
// named as results.csv names them, margin, binding objective and
// scenario, recommended and best overall; none without objectives.
func TestSettingsCSV(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(objectivesDoc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/settings.csv", output.SettingsCSV(res))
	// Nothing feasible: no row recommended nor best overall; the closest
	// (rate 20, admitted 20.1) is flagged closest.
	objs := res.Config.Objectives
	res.Config.Objectives = []experiments.Objective{objs[1]}
	res.Config.Objectives[0].Value = 10
	lines := strings.Split(strings.TrimSpace(string(output.SettingsCSV(res))), "\n")
	for i, want := range []string{",false,false,true", ",false,false,false", ",false,false,false"} {
		if !strings.HasSuffix(lines[i+1], want) {
			t.Errorf("nothing feasible: row %d %s, want suffix %s (recommended, best_overall, closest)", i, lines[i+1], want)
		}
	}
	res.Config.Objectives = objs
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(files, func(f output.File) bool { return f.Name == experiments.FileSettings }) {
		t.Error("Files leaves settings.csv out")
	}
	res.Config.Objectives = nil
	if files, _ := output.Files(res); slices.ContainsFunc(files, func(f output.File) bool { return f.Name == experiments.FileSettings }) {
		t.Error("settings.csv without objectives")
	}
}

// With servers (a setting axis) and loads (scenarios): a server column,
// the binding load, and a worst column per objective named apart when
// two share a metric or the metric is goodput_rps.
func TestSettingsCSVAxes(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(`{"version":1,"seed":1,
 "workload":{"duration_ms":5000,"parts":[{"type":"constant","rate_rps":50}]},
 "server":{"workers":1,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[40,60],"burst":2}],
 "servers":[{"name":"one"},{"name":"two","workers":2}],
 "loads":[{"name":"light"},{"name":"heavy","parts":[{"type":"constant","rate_rps":150}]}],
 "objectives":[{"metric":"goodput_rps","op":">=","value":30},{"metric":"reject_pct","op":"<=","value":80},{"metric":"reject_pct","op":">=","value":0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(output.SettingsCSV(res))), "\n")
	golden.Check(t, "testdata/settings-axes-header.csv", []byte(lines[0]+"\n"))
	if len(lines) != 5 {
		t.Fatalf("%d rows, want 4 settings (2 rates × 2 servers)", len(lines)-1)
	}
	for _, l := range lines[1:] {
		if !strings.Contains(l, ",load heavy,") {
			t.Errorf("row %s: the heavy load should bind (its reject_pct)", l)
		}
	}
}

// A cancelled run's settings.csv: a setting without a point prints blanks,
// not 0.0 and false; one with some scenarios done prints its values over
// them, false for an objective a scenario that ran fails, blank for one
// they all pass (not known yet).
func TestSettingsCSVCancelled(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(`{"version":1,"seed":1,
 "workload":{"duration_ms":5000,"parts":[{"type":"constant","rate_rps":50}]},
 "server":{"workers":1,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[20,40,60],"burst":2}],
 "loads":[{"name":"light"},{"name":"heavy","parts":[{"type":"constant","rate_rps":150}]}],
 "objectives":[{"metric":"reject_pct","op":"<=","value":30},{"metric":"admitted_rps","op":"<=","value":45}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Cancelled: only the light load ran, and not at rate 60.
	var kept []experiments.Point
	for _, p := range res.Points {
		if p.LoadName == "light" && p.Params["rate_rps"] != 60 {
			p.Index = len(kept)
			kept = append(kept, p)
		}
	}
	res.Points, res.Partial = kept, &experiments.Partial{PointsDone: len(kept), PointsTotal: 6}
	r := csv.NewReader(bytes.NewReader(output.SettingsCSV(res)))
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	for _, tc := range []struct {
		row                                        int
		rate                                       string
		worstReject, passReject, passAdmitted, all string
		goodput                                    string
	}{
		{1, "20.0", "59.6", "false", "", "false", "20.2"}, // light ran: rejects 59.6% (fails), admits 20.2 (passes so far)
		{2, "40.0", "19.6", "", "", "", "40.2"},           // light ran and passes: not known
		{3, "60.0", "", "", "", "", ""},                   // nothing ran
	} {
		got := rows[tc.row]
		for _, c := range []struct{ name, want string }{
			{"rate_rps", tc.rate}, {"worst_reject_pct", tc.worstReject}, {"pass_reject_pct_le_30", tc.passReject},
			{"pass_admitted_rps_le_45", tc.passAdmitted}, {"meets_all", tc.all}, {"worst_goodput_rps", tc.goodput},
			{"recommended", "false"}, {"closest", "false"},
		} {
			if v := got[col(c.name)]; v != c.want {
				t.Errorf("row %d (rate %s) %s = %q, want %q", tc.row, tc.rate, c.name, v, c.want)
			}
		}
	}
}
