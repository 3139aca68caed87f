package workload

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// parseMS's fast path gives strconv.ParseFloat's bits on every decimal
// it takes, and leaves everything else to it.
func TestParseMSIsParseFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"0", "-0", "+5", "1.", ".5", "-.5", "007.250", "999999999999999", "9999999999999999", "0.000000000000001",
		"123456.789012345", "1e3", "1_0", "0x10", "inf", "NaN", "1.2.3", "", "-", ".", "12a"}
	for range 20000 {
		b := []byte{}
		if r.IntN(4) == 0 {
			b = append(b, '-')
		}
		n := 1 + r.IntN(17)
		dot := r.IntN(n + 1)
		for i := range n {
			if i == dot {
				b = append(b, '.')
			}
			b = append(b, byte('0'+r.IntN(10)))
		}
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		got, ok := parseMS([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		wantOK := err == nil && !math.IsNaN(want) && !math.IsInf(want, 0)
		if ok != wantOK || ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseMS(%q) = %v %v, ParseFloat %v %v", s, got, ok, want, err)
		}
	}
}
