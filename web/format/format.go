// Package format prints the numbers, sizes and user texts that the lab's
// pages show, the same way on every page.
package format

import (
	"fmt"
	"math"
	"strconv"
)

// Num prints a number the shortest way that reads back exactly, without
// exponent notation.
func Num(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Round prints v rounded to at most places decimals, without trailing
// zeros (13.056408 at 2 places: "13.06"; 100: "100").
func Round(v float64, places int) string { return Num(RoundTo(v, places)) }

// RoundTo rounds v to places decimals (v itself when it has no more, or
// when rounding would overflow).
func RoundTo(v float64, places int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, float64(places))
	r := math.Round(v*p) / p
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return v
	}
	return r
}

// Bytes prints a size in bytes, KB or MB (1 KB = 1024 bytes), to one
// decimal.
func Bytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Clip shortens a user's text to its first n bytes and an ellipsis, for
// quoting it in a message.
func Clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Arrivals prints how many arrivals the points of a run had, the fewest
// and the most: "5000 arrivals", or "125 to 1500 arrivals a point".
func Arrivals(lo, hi int) string {
	if lo == hi {
		return fmt.Sprintf("%d arrivals", hi)
	}
	return fmt.Sprintf("%d to %d arrivals a point", lo, hi)
}
