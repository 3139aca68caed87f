package charts

import (
	"encoding/json"
	"fmt"
	"testing"
)

// compareDoc is a small sweep of three limiters in the order given.
func compareDoc(limiters string) string {
	return `{"version":1,"name":"c","seed":1,
	"workload":{"duration_ms":500,"parts":[{"type":"poisson","rate_rps":150}]},
	"server":{"workers":1,"service_ms":10,"deadline_ms":200},
	"limiters":[` + limiters + `]}`
}

// TestCompareMatchesLimitersByNameAndType: two runs of the same limiters
// in another order draw each limiter in one dash in both runs, and each
// run's lines in one colour; limiters of one run in distinct dashes.
// Failed before: the dash followed the limiter's position in its run, so
// the token bucket was solid in one run and dashed in the other.
func TestCompareMatchesLimitersByNameAndType(t *testing.T) {
	tb := `{"type":"token-bucket","rate_rps":[100,200],"burst":5}`
	lb := `{"type":"leaky-bucket","rate_rps":[100,200],"queue":5}`
	named := `{"type":"token-bucket","name":"small","rate_rps":[100,200],"burst":1}`
	a := runDoc(t, compareDoc(tb+","+lb+","+named))
	b := runDoc(t, compareDoc(named+","+tb+","+lb))
	groups := Compare([]CompareRun{{Label: "A", Res: a}, {Label: "B", Res: b}})
	if len(groups) == 0 || len(groups[0].Charts) == 0 {
		t.Fatal("no compare chart")
	}
	var o struct {
		Series []struct {
			Name      string
			LineStyle struct {
				Color string
				Type  any
			}
			ItemStyle struct{ Color string }
		}
	}
	if err := json.Unmarshal([]byte(groups[0].Charts[0].Option), &o); err != nil {
		t.Fatal(err)
	}
	dash := map[string]string{}  // limiter → dash
	color := map[string]string{} // run → colour
	runDashes := map[string]map[string]string{}
	for _, s := range o.Series {
		var run, lim string
		if _, err := fmt.Sscanf(s.Name, "%s · %s", &run, &lim); err != nil {
			t.Fatalf("series %q: %v", s.Name, err)
		}
		d := fmt.Sprint(s.LineStyle.Type)
		if prev, ok := dash[lim]; ok && prev != d {
			t.Errorf("%s is %s in one run and %s in another", lim, prev, d)
		}
		dash[lim] = d
		if prev, ok := color[run]; ok && prev != s.LineStyle.Color {
			t.Errorf("run %s has lines in %s and %s", run, prev, s.LineStyle.Color)
		}
		color[run] = s.LineStyle.Color
		if s.ItemStyle.Color != s.LineStyle.Color {
			t.Errorf("%s: dots in %s, line in %s", s.Name, s.ItemStyle.Color, s.LineStyle.Color)
		}
		if runDashes[run] == nil {
			runDashes[run] = map[string]string{}
		}
		if other, ok := runDashes[run][d]; ok && other != lim {
			t.Errorf("run %s draws %s and %s both %s", run, other, lim, d)
		}
		runDashes[run][d] = lim
	}
	if len(dash) != 3 || len(color) != 2 || color["A"] == color["B"] {
		t.Errorf("dashes %v colours %v", dash, color)
	}
}

// TestCompareLinesOfOneLimiterApart: a run whose limiter sweeps two
// parameters draws one line per value of the other, each in its own shade
// of the run's colour and its own symbol, so every line of the chart is
// told apart; the runs' colour families stay apart. Failed before: the
// rate_rps=100 and rate_rps=200 lines had the same colour, dash and dot.
func TestCompareLinesOfOneLimiterApart(t *testing.T) {
	tb := `{"type":"token-bucket","rate_rps":[100,200],"burst":[2,5]}`
	a := runDoc(t, compareDoc(tb))
	b := runDoc(t, compareDoc(tb))
	groups := Compare([]CompareRun{{Label: "A", Res: a}, {Label: "B", Res: b}})
	if len(groups) == 0 || len(groups[0].Charts) == 0 {
		t.Fatal("no compare chart")
	}
	var o struct {
		Series []struct {
			Name      string
			Symbol    string
			LineStyle struct {
				Color string
				Type  any
			}
		}
	}
	if err := json.Unmarshal([]byte(groups[0].Charts[0].Option), &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Series) != 4 {
		t.Fatalf("%d lines, want 2 runs × 2 values of the other parameter", len(o.Series))
	}
	looks := map[string]string{}
	for _, s := range o.Series {
		look := s.LineStyle.Color + " " + s.Symbol + " " + fmt.Sprint(s.LineStyle.Type)
		if other, ok := looks[look]; ok {
			t.Errorf("%s and %s both drawn %s", other, s.Name, look)
		}
		looks[look] = s.Name
	}
	// A's lines are shades of blue (more blue than red), B's of green.
	for _, s := range o.Series[:2] {
		var r, g, b int
		fmt.Sscanf(s.LineStyle.Color, "#%02x%02x%02x", &r, &g, &b)
		if b <= r || b <= g {
			t.Errorf("%s: %s is not a shade of run A's blue", s.Name, s.LineStyle.Color)
		}
	}
}
