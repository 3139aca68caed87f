package charts

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/web/format"
)

// Property: a value rounded at roundPlaces of its axis moves by less than
// a pixel of that axis, and keeps its measure's places where the span is
// wide enough.
func TestRoundPlacesWithinPixel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for range 20000 {
		span := math.Pow(10, rng.Float64()*12-6) // 1e-6 … 1e6
		px := []float64{plotWidthPx, plotHeightPx}[rng.IntN(2)]
		measure := rng.IntN(5)
		p := roundPlaces(measure, span, px)
		if p < measure {
			t.Fatalf("span %g: %d places, fewer than the measure's %d", span, p, measure)
		}
		v := (rng.Float64()*2 - 1) * span
		if moved := math.Abs(format.RoundTo(v, p)-v) / span * px; moved >= 1 {
			t.Fatalf("span %g, %g px: %v at %d places moves %.3f px", span, px, v, p, moved)
		}
		if span >= px { // a unit is at most a pixel: the measure's places do
			if p != measure {
				t.Fatalf("span %g, %g px: %d places, want the measure's %d", span, px, p, measure)
			}
		}
	}
	for _, v := range []float64{0.000123456, 1.23456, 98765.4321} {
		if r := roundLog(v, 1); math.Abs(r-v)/v > 5e-4 {
			t.Errorf("log axis: %v rounds to %v", v, r)
		}
	}
}

// tipSeries is a series as the tooltip test reads it.
type tipSeries struct {
	Name    string
	Type    string
	Tooltip *struct{ Show bool }
	Data    []struct{ Value json.RawMessage }
}

// optionOf is chart id's option, parsed.
func optionOf(t *testing.T, groups []*Group, id string) (series []tipSeries, raw string) {
	t.Helper()
	for _, g := range groups {
		for _, c := range g.Charts {
			if c.ID == id {
				var o struct{ Series []tipSeries }
				if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
					t.Fatal(err)
				}
				return o.Series, c.Option
			}
		}
	}
	t.Fatalf("no chart %s", id)
	return nil, ""
}

// decimalsRe finds a number's decimals in JSON (an exponent never: the
// values are in range).
var decimalsRe = regexp.MustCompile(`-?\d+\.(\d+)`)

// The tooltip reads what the options carry: on a replicated sweep, every
// value a tooltip prints has at most its measure's places (goodput 1,
// Jain's index 4), no tooltip row is a bare "-", and each sweep line has
// one 95% CI row ("a – b") at a point, the error bars themselves out of
// the tooltip. Fails on main before the rounding: 73.16666666666667, and
// three CI rows a line (low, high, "-").
func TestTooltipValuesReadable(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":3,"name":"tips","replications":3,
 "workload":{"duration_ms":2000,"parts":[{"type":"poisson","rate_rps":60,"client":"a"},{"type":"poisson","rate_rps":30,"client":"b"}]},
 "server":{"workers":1,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[70,85],"burst":[5,10]}],
 "objectives":[{"metric":"goodput_rps","op":">=","value":80}]}`)
	v := NewView(res, -1)
	groups := v.Groups()
	for _, c := range []struct {
		id     string
		places int
	}{{"chart-goodput", 1}, {"chart-reject-late", 1}, {"chart-waits", 1}, {"chart-sojourn", 1}, {"chart-jain", 4}, {"chart-series", 1}, {"chart-clients", 1}} {
		series, _ := optionOf(t, groups, c.id)
		ci := map[string]int{}
		for _, s := range series {
			if s.Tooltip != nil && !s.Tooltip.Show {
				continue
			}
			if strings.HasSuffix(s.Name, " 95% CI") {
				ci[strings.TrimSuffix(s.Name, " 95% CI")]++
			}
			xs := map[string]int{}
			for _, d := range s.Data {
				var val []any
				if json.Unmarshal(d.Value, &val) != nil || len(val) < 2 {
					val = []any{nil, json.RawMessage(d.Value)}
				}
				text, _ := json.Marshal(val[len(val)-1])
				xs[string(mustJSON(val[0]))]++
				if string(text) == `"-"` {
					t.Errorf("%s: %s: a tooltip row would be a bare \"-\"", c.id, s.Name)
				}
				for _, m := range decimalsRe.FindAllStringSubmatch(string(text), -1) {
					if len(m[1]) > c.places {
						t.Errorf("%s: %s: %s has more than %d decimals", c.id, s.Name, m[0], c.places)
					}
				}
			}
			for x, n := range xs {
				if n > 1 && x != "null" {
					t.Errorf("%s: %s: %d tooltip rows at x %s", c.id, s.Name, n, x)
				}
			}
		}
		if c.id == "chart-goodput" {
			if len(ci) != len(v.Lines) {
				t.Errorf("%s: CI rows for %d lines (%v), want one for each of %d", c.id, len(ci), ci, len(v.Lines))
			}
			for name, n := range ci {
				if n != 1 {
					t.Errorf("%s: %s: %d CI series in the tooltip, want 1", c.id, name, n)
				}
			}
		}
	}
	_, raw := optionOf(t, groups, "chart-goodput")
	if !regexp.MustCompile(`"\d+\.\d – \d+\.\d"`).MatchString(raw) {
		t.Errorf("chart-goodput: no CI row \"a – b\" at goodput's places: %.600s", raw)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// Swept values stay as the config gives them (more places than their
// column prints, no float noise); the measures round.
func TestSweptValuesAsGiven(t *testing.T) {
	res := runDoc(t, `{"version":1,"seed":3,"workload":{"duration_ms":1000,"parts":[{"type":"poisson","rate_rps":60}]},
		"limiters":[{"type":"token-bucket","rate_rps":[10.123456,10.3,20.7],"burst":5}]}`)
	series, raw := optionOf(t, NewView(res, -1).Groups(), "chart-goodput")
	for _, want := range []string{"[10.123456,", "[10.3,", "[20.7,"} {
		if !strings.Contains(raw, want) {
			t.Errorf("chart-goodput lacks the swept value %s: %.400s", want, raw)
		}
	}
	if len(series) == 0 {
		t.Fatal("no series")
	}
}
