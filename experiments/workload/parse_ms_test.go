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

// parseCommon gives the row parseAny gives every line it takes, and takes
// the common "123.456,name" lines; lines near that shape (spaces, a
// service time, a header, signs, long numbers, other bytes) are left to
// parseAny.
func TestParseCommonIsParseAny(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"0", "1", "9", ".", ",", " ", "\t", "-", "+", "e", "c", "client-7", "#", "\xc2\xa0", "\x7f", "t_ms", "_"}
	lines := []string{"123.456,client-1", "0,a", "1.,b", ".5,c", "999999999999999,x", "9999999999999999,x", "1.5,", "1.5", "1.5, a", "1.5,a ",
		"1.5,a,2", "t_ms,client", "#1,a", "-1,a", "+1,a", "1e3,a", "1..5,a", " 1,a", "1,\xc2\xa0"}
	for range 50000 {
		var b []byte
		for range 1 + r.IntN(8) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		lines = append(lines, string(b))
	}
	for range 20000 { // common lines: up to 17 digits, a point anywhere or none
		n := 1 + r.IntN(17)
		var b []byte
		for i := range n {
			if i == r.IntN(n+1) {
				b = append(b, '.')
			}
			b = append(b, byte('0'+r.IntN(10)))
		}
		lines = append(lines, string(b)+",client-"+strconv.Itoa(r.IntN(1000)))
	}
	taken := 0
	for _, line := range lines {
		for _, head := range []bool{false, true} {
			fast := &TraceDecoder{head: head, line: 7}
			if !fast.parseCommon([]byte(line)) {
				continue
			}
			taken++
			slow := &TraceDecoder{head: head, line: 7}
			if err := slow.parseAny([]byte(line)); err != nil {
				t.Fatalf("%q: parseCommon took it, parseAny: %v", line, err)
			}
			f, s := fast.row, slow.row
			if math.Float64bits(f.T) != math.Float64bits(s.T) || string(f.Client) != string(s.Client) || f.ClientID != s.ClientID ||
				!math.IsNaN(f.ServiceMS) || !math.IsNaN(s.ServiceMS) || f.Line != s.Line || fast.head != slow.head {
				t.Fatalf("%q: parseCommon %+v head %v, parseAny %+v head %v", line, f, fast.head, s, slow.head)
			}
		}
	}
	if taken < 10000 {
		t.Fatalf("parseCommon took %d lines: the test tries too few common ones", taken)
	}
}
