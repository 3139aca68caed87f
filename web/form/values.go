package form

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/web/format"
)

// maxListValues bounds one parameter list. The engine allows at most
// limiter.MaxValues values per parameter and reports the excess with the
// field's path; this bound only stops a range like 1..1e12 from allocating
// before the engine can say so.
const maxListValues = 10_000

// ParseValues reads a parameter list as typed in the form: items separated
// by commas, each a number or a range, for example "1,2,4,8,20,40",
// "1..80 step 4" or "0.5, 1..3 step 0.5, 10". A range "a..b step s" lists
// a, a+s, a+2s, … up to b inclusive (s defaults to 1, must be more than 0,
// and b must not be below a); value k is a + k*s rounded to 12 significant
// digits, so "0.1..0.3 step 0.1" gives exactly 0.1, 0.2 and 0.3. Empty
// items (a trailing comma) are skipped; an empty text gives no values and
// no error. Values keep their order and duplicates: the engine decides
// whether they suit the parameter.
func ParseValues(text string) ([]float64, error) {
	var out []float64
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		lo, rest, isRange := strings.Cut(item, "..")
		if !isRange {
			v, err := parseNumber(item)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		hi, stepText, hasStep := strings.Cut(rest, "step")
		a, err := parseNumber(lo)
		if err != nil {
			return nil, fmt.Errorf("range %q: start: %w", format.Clip(item, 40), err)
		}
		b, err := parseNumber(hi)
		if err != nil {
			return nil, fmt.Errorf("range %q: end: %w", format.Clip(item, 40), err)
		}
		step := 1.0
		if hasStep {
			if step, err = parseNumber(stepText); err != nil {
				return nil, fmt.Errorf("range %q: step: %w", format.Clip(item, 40), err)
			}
		}
		if step <= 0 {
			return nil, fmt.Errorf("range %q: the step must be more than 0", format.Clip(item, 40))
		}
		if b < a {
			return nil, fmt.Errorf("range %q: the end %s is below the start %s", format.Clip(item, 40), format.Num(b), format.Num(a))
		}
		n := rangeCount(a, b, step)
		if n+float64(len(out)) > maxListValues {
			return nil, fmt.Errorf("range %q has %.0f values; at most %d in one list", format.Clip(item, 40), n, maxListValues)
		}
		out = appendRange(out, a, step, int(n))
	}
	if len(out) > maxListValues {
		return nil, fmt.Errorf("more than %d values in one list", maxListValues)
	}
	return out, nil
}

// rangeCount is how many values a..b step s lists; the relative slack lets
// "0.1..0.3 step 0.1" reach its end despite binary rounding.
func rangeCount(a, b, step float64) float64 {
	return math.Floor((b-a)/step*(1+1e-12)) + 1
}

func appendRange(out []float64, a, step float64, n int) []float64 {
	for k := 0; k < n; k++ {
		out = append(out, round12(a+float64(k)*step))
	}
	return out
}

func parseNumber(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("a number is missing")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", format.Clip(s, 40))
	}
	return v, nil
}

// round12 rounds to 12 significant digits, removing the error a + k*s
// picks up in binary floating point.
func round12(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// FormatValues prints a list so that ParseValues reads it back exactly: an
// evenly spaced run of eight or more values as a range, other values one by
// one.
func FormatValues(vs []float64) string {
	var parts []string
	for i := 0; i < len(vs); {
		if j, step, ok := evenRun(vs, i); ok {
			s := format.Num(vs[i]) + ".." + format.Num(vs[j-1])
			if step != 1 {
				s += " step " + format.Num(step)
			}
			parts = append(parts, s)
			i = j
			continue
		}
		parts = append(parts, format.Num(vs[i]))
		i++
	}
	return strings.Join(parts, ", ")
}

// minRun is the shortest evenly spaced run FormatValues prints as a range:
// shorter lists read better spelled out.
const minRun = 8

// evenRun finds the longest run vs[i:j] of minRun or more values that the
// range vs[i]..vs[j-1] step s expands to exactly.
func evenRun(vs []float64, i int) (j int, step float64, ok bool) {
	if i+minRun > len(vs) {
		return 0, 0, false
	}
	step = round12(vs[i+1] - vs[i])
	if !(step > 0) || math.IsInf(step, 0) {
		return 0, 0, false
	}
	j = i + 1
	for j < len(vs) && round12(vs[i]+float64(j-i)*step) == vs[j] {
		j++
	}
	for ; j-i >= minRun; j-- {
		if int(rangeCount(vs[i], vs[j-1], step)) == j-i {
			return j, step, true
		}
	}
	return 0, 0, false
}
