package presets_test

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
)

// The client presets' descriptions state measured numbers: each is a cell
// of its results.csv (row picked by its policy, or limiter and rate) and
// appears in the description.
func TestClientPresetsSayWhatTheyMeasure(t *testing.T) {
	type cell struct{ row, col, want string }
	for name, cells := range map[string][]cell{
		"retry-storm": {
			{"no-retry", "goodput_rps", "58.8"}, {"no-retry", "recovery_ms", "4600.0"},
			{"fixed", "goodput_rps", "22.2"}, {"fixed", "amplification", "3.3216"}, {"fixed", "retry_share_pct", "69.9"}, {"fixed", "recovered", "no"},
			{"exponential-full-jitter", "goodput_rps", "22.2"}, {"exponential-full-jitter", "recovered", "no"},
			{"budget", "goodput_rps", "44.8"}, {"budget", "amplification", "1.0822"}, {"budget", "recovery_ms", "8300.0"},
			{"throttling", "goodput_rps", "41.5"}, {"throttling", "throttled", "1200"}, {"throttling", "recovery_ms", "10000.0"},
		},
		"metastable": {
			{"no-retry", "recovery_ms", "7700.0"},
			{"retry", "amplification", "2.9537"}, {"retry", "goodput_rps", "29.8"}, {"retry", "wasted_work_pct", "88.7"}, {"retry", "recovered", "no"},
			{"budget", "amplification", "1.0639"}, {"budget", "recovery_ms", "18200.0"},
		},
		"retry-storm-shed": {
			{"fifo", "goodput_rps", "29.8"}, {"fifo", "amplification", "2.9537"}, {"fifo", "wasted_work_pct", "88.7"}, {"fifo", "recovered", "no"},
			{"fifo-drop-unstarted", "goodput_rps", "33.7"}, {"fifo-drop-unstarted", "amplification", "2.8815"}, {"fifo-drop-unstarted", "recovered", "no"},
			{"fifo-expire", "goodput_rps", "86.5"}, {"fifo-expire", "amplification", "1.2515"}, {"fifo-expire", "shed", "754"}, {"fifo-expire", "recovered", "yes"},
			{"fifo-tail-drop", "goodput_rps", "85.1"}, {"fifo-tail-drop", "amplification", "1.1528"}, {"fifo-tail-drop", "shed", "532"}, {"fifo-tail-drop", "recovered", "yes"},
			{"lifo", "goodput_rps", "85.3"}, {"lifo", "amplification", "1.2429"}, {"lifo", "shed", "0"}, {"lifo", "sojourn_p99_ms", "23752.0"}, {"lifo", "wasted_work_pct", "23.0"},
			{"lifo-tail-drop", "goodput_rps", "84.0"}, {"lifo-tail-drop", "sojourn_p99_ms", "1039.0"},
		},
		"closed-loop": {
			{"none", "goodput_rps", "201.4"}, {"none", "users_in_flight_max", "39"},
			{"100.0", "offered_rps", "490.1"}, {"100.0", "goodput_rps", "101.0"}, {"100.0", "reject_pct", "79.4"},
			{"200.0", "goodput_rps", "200.9"}, {"200.0", "offered_rps", "305.6"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, out := runPostPreset(t, name, 0)
			recs, err := csv.NewReader(bytes.NewReader(out["results.csv"])).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := map[string]int{}
			for i, h := range recs[0] {
				col[h] = i
			}
			p, err := presets.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cells {
				var row []string
				for _, r := range recs[1:] {
					key := r[col["limiter"]]
					if i, ok := col["policy"]; ok {
						key = r[i]
					} else if i, ok := col["server"]; ok {
						key = r[i]
					} else if r[col["rate_rps"]] != "" {
						key = r[col["rate_rps"]]
					}
					if key == c.row {
						row = r
					}
				}
				if row == nil {
					t.Fatalf("no row %s", c.row)
				}
				if got := row[col[c.col]]; got != c.want {
					t.Errorf("%s %s = %s, the test says %s", c.row, c.col, got, c.want)
				}
			}
			for _, c := range cells {
				n := strings.TrimSuffix(c.want, ".0")
				if v, err := strconv.ParseFloat(c.want, 64); err == nil {
					switch c.col {
					case "recovery_ms": // said in seconds: 4600.0 is "4.6 s"
						n = strconv.FormatFloat(v/1000, 'f', 1, 64) + " s"
					case "amplification": // said with two places
						n = strconv.FormatFloat(v, 'f', 2, 64)
					}
				}
				if c.want != "no" && c.want != "yes" && !strings.Contains(p.Summary+string(p.JSON), n) {
					t.Errorf("the description does not state %s %s (%s)", c.row, c.col, n)
				}
			}
		})
	}
}
