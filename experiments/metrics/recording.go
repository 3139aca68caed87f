package metrics

import (
	"math"
	"math/bits"
)

// RoundHalfUp is the integer nearest to x, ties toward +infinity, exact on
// the float64 value. floor(x + 0.5) is not exact: 0.49999999999999994 + 0.5
// rounds to 1 in float64. (x - floor(x) is exact for every float64.)
func RoundHalfUp(x float64) float64 {
	f := math.Floor(x)
	if x-f >= 0.5 {
		return f + 1
	}
	return f
}

// ClampMS is a delay recorded the seed lab's way: rounded half up, exactly,
// and clamped to [0, MaxDelayMS].
func ClampMS(x float64) int32 {
	r := RoundHalfUp(x)
	if !(r > 0) { // also NaN
		return 0
	}
	if r > MaxDelayMS {
		return MaxDelayMS
	}
	return int32(r)
}

// Percentile rules: how a percentile of recorded whole-millisecond values
// is reported.
const (
	// PercentilesExact reports the nearest-rank value itself.
	PercentilesExact = "exact"
	// PercentilesHdr3 reports the largest value of the nearest-rank value's
	// bucket in an HdrHistogram with 3 significant digits (see HdrTop): the
	// seed lab's recording.
	PercentilesHdr3 = "hdr-3"
)

// HdrTop is the largest value that lands in v's bucket of an HdrHistogram
// with 3 significant digits: v itself below 2048, else v with its low
// b = bitlength(v) - 11 bits set, v | (2^b - 1) (buckets 2 wide from 2048
// to 4095, 4 wide from 4096 to 8191, ...; 60000 reads 60031).
func HdrTop(v int) int {
	if v < 2048 {
		return v
	}
	b := bits.Len(uint(v)) - 11
	return v | (1<<b - 1)
}

// RankValue is the nearest-rank percentile p of sorted (ascending), by
// Rank: 0 when empty.
func RankValue(sorted []int32, p float64) int32 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[Rank(p, len(sorted))-1]
}
