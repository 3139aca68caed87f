// Package decimal prints numbers with a fixed number of decimal places the
// way the seed lab's Java program does (String.format("%.1f")): it takes the
// shortest decimal string that reads back as the same float64 (what
// strconv.FormatFloat(x, 'g', -1, 64) gives) and rounds that string half up,
// away from zero, to the places asked for.
//
// This is not Go's, C's or Python's %.1f, which round the exact binary
// value, ties to even: a float64 whose shortest form is 31.45 (its binary
// value is a little below) prints 31.5 here and 31.4 with %.1f, and the
// exactly representable 2.25 prints 2.3 here and 2.2 with %.1f.
package decimal

import (
	"math"
	"strconv"
)

// AppendHalfUp appends x with places decimals (0 to 20) by the rule above.
// NaN and the infinities print as strconv does.
func AppendHalfUp(b []byte, x float64, places int) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.AppendFloat(b, x, 'f', places, 64)
	}
	if math.Signbit(x) {
		b = append(b, '-')
		x = -x
	}
	// Shortest digits d1 d2 ... dn and exponent: x = 0.d1d2...dn × 10^point.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], x, 'e', -1, 64)
	var digits [24]byte
	n := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[n] = e[i]
			n++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	point := exp + 1
	if x == 0 {
		n, point = 0, 0
	}
	// Keep the digits before position k = point + places; round half up on
	// the first dropped digit.
	var out [64]byte
	kept := 0
	k := point + places
	switch {
	case k >= n:
		kept = copy(out[:], digits[:n])
	case k >= 0:
		kept = copy(out[:], digits[:k])
		if digits[k] >= '5' {
			j := kept - 1
			for ; j >= 0 && out[j] == '9'; j-- {
				out[j] = '0'
			}
			if j >= 0 {
				out[j]++
			} else { // all nines: one more leading digit
				copy(out[1:], out[:kept])
				out[0] = '1'
				kept++
				point++
			}
		}
	}
	// Digit at position p (0-based from d1), '0' outside the kept digits.
	at := func(p int) byte {
		if p >= 0 && p < kept {
			return out[p]
		}
		return '0'
	}
	if point <= 0 {
		b = append(b, '0')
	} else {
		for p := 0; p < point; p++ {
			b = append(b, at(p))
		}
	}
	if places > 0 {
		b = append(b, '.')
		for p := point; p < point+places; p++ {
			b = append(b, at(p))
		}
	}
	return b
}

// FormatHalfUp is AppendHalfUp as a string.
func FormatHalfUp(x float64, places int) string {
	return string(AppendHalfUp(nil, x, places))
}
