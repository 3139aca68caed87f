package output_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// TestCSVFormulaInjection: names that a spreadsheet would run as a formula
// (=, +, -, @, tab, carriage return first) come out of every CSV with a
// leading apostrophe, as OWASP recommends; every other cell that starts
// with one of those characters is a number, written as is.
func TestCSVFormulaInjection(t *testing.T) {
	const doc = `{
  "version": 1,
  "seed": 3,
  "workload": {"duration_ms": 300, "parts": [
    {"type": "constant", "client": "=HYPERLINK(\"http://evil.example\";\"x\")", "group": "@SUM(1+1)", "rate_rps": 100},
    {"type": "constant", "client": "+1", "group": "-2", "rate_rps": 50},
    {"type": "constant", "client": "\tTAB", "group": "\rCR", "rate_rps": 50}
  ]},
  "limiters": [
    {"type": "token-bucket", "name": "=1+1", "rate_rps": 100, "burst": [5, 10]},
    {"type": "leaky-bucket", "name": "@SUM(1+1)", "rate_rps": 50, "queue": 30},
    {"type": "none", "name": "-cmd|' /C calc'!A0"}
  ],
  "reports": [{"type": "points", "file": "extra.csv", "columns": [
    {"header": "=HEADER()", "value": "limiter"}, {"header": "goodput", "value": "goodput_rps"}]}]
}`
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range fs {
		if !strings.HasSuffix(f.Name, ".csv") {
			continue
		}
		for i, row := range parse(t, f.Name, f.Data) {
			for _, cell := range row {
				seen[cell] = true
				if cell == "" || !strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
					continue
				}
				if _, err := strconv.ParseFloat(cell, 64); err != nil {
					t.Errorf("%s row %d: cell %q starts a formula", f.Name, i, cell)
				}
			}
		}
	}
	for _, want := range []string{`'=HYPERLINK("http://evil.example";"x")`, "'@SUM(1+1)", "'+1", "'-2", "'\tTAB", "'\rCR", "'=1+1", "'-cmd|' /C calc'!A0", "'=HEADER()"} {
		if !seen[want] {
			t.Errorf("no cell %q in the CSV files", want)
		}
	}
}
