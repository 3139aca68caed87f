package deploy

import (
	"fmt"
	"go/format"
	"math"
	"strconv"
	"strings"
)

// Numbers as the formats write them: a rate as whole requests per whole
// period, durations in each format's units.

// whole returns the whole number x is, to float64 noise (a rate of 0.3
// times 10 is 3), and whether it is one.
func whole(x float64) (int64, bool) {
	r := math.Round(x)
	if math.Abs(r) > 1<<53 || math.IsNaN(x) {
		return 0, false
	}
	return int64(r), math.Abs(x-r) <= 1e-9*math.Max(1, math.Abs(x))
}

// periodsMS are the periods a per-period format tries, in order: 1 s,
// 1 min, 1 h, then 10 s, 100 s, 1000 s and 10000 s for rates with decimals.
var periodsMS = []int64{1000, 60_000, 3_600_000, 10_000, 100_000, 1_000_000, 10_000_000}

// perPeriod writes rate (requests/s) as n requests per periodMS, 1 <=
// n <= maxCount: exactly when one of periodsMS allows it, else the
// nearest n over the period that comes closest (exact false).
func perPeriod(rate float64, maxCount int64) (n, periodMS int64, exact bool) {
	for _, p := range periodsMS {
		if c, ok := whole(rate * float64(p) / 1000); ok && c >= 1 && c <= maxCount {
			return c, p, true
		}
	}
	best := math.Inf(1)
	for _, p := range periodsMS {
		c := int64(math.Round(rate * float64(p) / 1000))
		c = min(max(c, 1), maxCount)
		if e := math.Abs(float64(c)*1000/float64(p)-rate) / rate; e < best {
			best, n, periodMS = e, c, p
		}
	}
	return n, periodMS, false
}

// decimal writes x as n / 10^d with at most 6 decimals.
func decimal(x float64) (n int64, d int, ok bool) {
	scale := 1.0
	for d = 0; d <= 6; d++ {
		if c, ok := whole(x * scale); ok && c >= 1 {
			return c, d, true
		}
		scale *= 10
	}
	return 0, 0, false
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// unitDuration writes ns in the largest unit of h, m, s, ms, us, ns that
// holds it whole: "1s", "100ms", "500ns", "0s". Go's time.ParseDuration
// (Traefik) and Spring Boot's simple duration style both read it.
func unitDuration(ns int64) string {
	if ns == 0 {
		return "0s"
	}
	units := []struct {
		name string
		ns   int64
	}{{"h", 3600e9}, {"m", 60e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}}
	for _, u := range units {
		if ns%u.ns == 0 {
			return strconv.FormatInt(ns/u.ns, 10) + u.name
		}
	}
	return strconv.FormatInt(ns, 10) + "ns"
}

// goDuration writes ns as a Go expression of package time:
// "time.Second", "100 * time.Millisecond".
func goDuration(ns int64) string {
	units := []struct {
		name string
		ns   int64
	}{{"time.Hour", 3600e9}, {"time.Minute", 60e9}, {"time.Second", 1e9}, {"time.Millisecond", 1e6}, {"time.Microsecond", 1e3}}
	if ns == 0 {
		return "0"
	}
	for _, u := range units {
		if ns%u.ns == 0 {
			if ns == u.ns {
				return u.name
			}
			return fmt.Sprintf("%d * %s", ns/u.ns, u.name)
		}
	}
	return fmt.Sprintf("%d * time.Nanosecond", ns)
}

// protoDuration writes whole ms as a protobuf JSON Duration: "0.05s".
func protoDuration(ms int64) string {
	s := strconv.FormatInt(ms/1000, 10)
	if frac := ms % 1000; frac != 0 {
		f := strconv.FormatInt(1000+frac, 10)[1:] // three digits
		for f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		s += "." + f
	}
	return s + "s"
}

// num writes a float in its shortest exact decimal, without exponent.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// msToNS is a setting of ms in whole ns, rounded (as the lab's ns-clock
// gates read their settings).
func msToNS(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// nsToMS is whole ns as ms.
func nsToMS(ns int64) float64 { return float64(ns) / 1e6 }

// count writes n and the noun, plural unless n is 1: "1 token", "2
// tokens"; a noun of two words takes the plural on the first and drops
// the verb's s: "1 request goes", "2 requests go".
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if first, verb, ok := strings.Cut(noun, " "); ok {
		return fmt.Sprintf("%d %ss %s", n, first, strings.TrimSuffix(verb, "es"))
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

// msText writes ns as ms for a note: "5 ms", "15.151515 ms".
func msText(ns int64) string { return num(nsToMS(ns)) + " ms" }

// gofmt formats a Go file as gofmt does (the text is generated, so a
// syntax error is a bug of this package).
func gofmt(src string) string {
	out, err := format.Source([]byte(src))
	if err != nil {
		panic(fmt.Sprintf("deploy: generated Go does not parse: %v\n%s", err, src))
	}
	return string(out)
}
