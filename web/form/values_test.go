package form

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseValues(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []float64
	}{
		{"", nil},
		{"  ", nil},
		{"5", []float64{5}},
		{"1,2,4,8,20,40", []float64{1, 2, 4, 8, 20, 40}},
		{" 1 , 2 ,", []float64{1, 2}},
		{"1..5", []float64{1, 2, 3, 4, 5}},
		{"1..80 step 20", []float64{1, 21, 41, 61}},
		{"0..80 step 20", []float64{0, 20, 40, 60, 80}},
		{"0.1..0.3 step 0.1", []float64{0.1, 0.2, 0.3}},
		{"0.5, 1..2 step 0.5, 10", []float64{0.5, 1, 1.5, 2, 10}},
		{"3..3", []float64{3}},
		{"1e2", []float64{100}},
		{"2, 1, 2", []float64{2, 1, 2}},
	} {
		got, err := ParseValues(tc.in)
		if err != nil {
			t.Errorf("ParseValues(%q): %v", tc.in, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ParseValues(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseValuesErrors(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"abc", `"abc" is not a number`},
		{"1,x,3", `"x" is not a number`},
		{"NaN", "is not a number"},
		{"Inf", "is not a number"},
		{"5..1", "below the start"},
		{"1..5 step 0", "step must be more than 0"},
		{"1..5 step -1", "step must be more than 0"},
		{"1..", "end: a number is missing"},
		{"..4", "start: a number is missing"},
		{"1..4 step", "step: a number is missing"},
		{"1..1e9", "at most 10000 in one list"},
		{"1 2", `"1 2" is not a number`},
	} {
		_, err := ParseValues(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseValues(%q) error = %v, want one containing %q", tc.in, err, tc.msg)
		}
	}
}

func TestFormatValues(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want string
	}{
		{nil, ""},
		{[]float64{100}, "100"},
		{[]float64{1, 2, 4, 8, 12, 16, 20, 28, 40, 80}, "1, 2, 4, 8, 12, 16, 20, 28, 40, 80"},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8}, "1..8"},
		{[]float64{0, 4, 8, 12, 16, 20, 24, 28, 32, 33}, "0..32 step 4, 33"},
		{[]float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}, "0.1..0.8 step 0.1"},
		{[]float64{1, 2, 3, 4}, "1, 2, 3, 4"},
		{[]float64{86400000}, "86400000"},
	} {
		if got := FormatValues(tc.in); got != tc.want {
			t.Errorf("FormatValues(%v) = %q, want %q", tc.in, got, tc.want)
		}
		back, err := ParseValues(FormatValues(tc.in))
		if err != nil || !slices.Equal(back, tc.in) {
			t.Errorf("ParseValues(FormatValues(%v)) = %v, %v", tc.in, back, err)
		}
	}
}

// FuzzParseValues checks that any text either fails or yields a bounded
// list of finite numbers that FormatValues prints back to the same list.
func FuzzParseValues(f *testing.F) {
	for _, s := range []string{"1,2,4,8,20,40", "1..80 step 4", "0.1..0.3 step 0.1", "5..1", "1e308..1.7e308 step 1e307", "-3..3 step 0.25", ",,", "1..2 step 1e-300"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vs, err := ParseValues(s)
		if err != nil {
			if vs != nil {
				t.Fatalf("ParseValues(%q) returned values with an error", s)
			}
			return
		}
		if len(vs) > maxListValues {
			t.Fatalf("ParseValues(%q) gave %d values", s, len(vs))
		}
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("ParseValues(%q) gave %v", s, v)
			}
		}
		text := FormatValues(vs)
		back, err := ParseValues(text)
		if err != nil || !slices.Equal(back, vs) {
			t.Fatalf("ParseValues(%q) = %v; printed %q reads back as %v, %v", s, vs, text, back, err)
		}
	})
}
