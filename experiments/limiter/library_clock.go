package limiter

import "math"

// Clock and number conversions shared by the library-exact gates (nginx,
// Envoy, Guava, Resilience4j). A library reads a whole-unit clock (ms, µs or
// ns); the lab passes float64 ms. An arrival at t ms reads as the largest
// whole number of units u with u/perMS <= t, so that a time written as a
// whole number of units and divided by perMS reads back as exactly that
// number (a plain floor of t*perMS can fall one unit short).

// clockUnits is the reading of a clock of perMS units per millisecond at t
// ms: the largest whole u with float64(u)/perMS <= t (t >= 0).
func clockUnits(t, perMS float64) int64 {
	u := int64(math.Floor(t * perMS))
	for float64(u+1)/perMS <= t {
		u++
	}
	for u > 0 && float64(u)/perMS > t {
		u--
	}
	return u
}

// settingUnits is a setting of ms written as whole units: the nearest whole
// number of units (a config's decimal such as 0.0005 ms is 500 ns).
func settingUnits(ms, perMS float64) int64 { return int64(math.Round(ms * perMS)) }

// javaLong is Java's (long) cast of a double: toward zero, NaN to 0,
// saturating at the long range.
func javaLong(x float64) int64 {
	switch {
	case x != x:
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(x)
}

// saturatedAdd is Guava's LongMath.saturatedAdd.
func saturatedAdd(a, b int64) int64 {
	s := a + b
	if (a^b) < 0 || (a^s) >= 0 {
		return s
	}
	if s < 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}

// keySlot is the state an arrival of client reads in a gate that keys its
// state by client ("per key", "per descriptor") or shares one ("zone",
// "none").
func keySlot(perClient bool, client int32) int32 {
	if perClient {
		return client
	}
	return 0
}
