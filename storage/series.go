package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ratelab/ratelab/experiments"
)

// seriesFormat is the first byte of an encoded series blob.
const seriesFormat = 1

// encodeSeries packs a point's four per-window series into one blob: a
// format byte, then for each of Offered, Released, Rejected, InSystemMax a
// uvarint of len+1 (0 for a nil slice) followed by the values as zig-zag
// varints. Window counts are mostly small, so a window costs a few bytes
// instead of a row.
func encodeSeries(s *experiments.Series) []byte {
	n := 1
	for _, xs := range [][]int32{s.Offered, s.Released, s.Rejected, s.InSystemMax} {
		n += binary.MaxVarintLen64 + 2*len(xs)
	}
	b := make([]byte, 1, n)
	b[0] = seriesFormat
	for _, xs := range [][]int32{s.Offered, s.Released, s.Rejected, s.InSystemMax} {
		if xs == nil {
			b = binary.AppendUvarint(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(xs))+1)
		for _, x := range xs {
			b = binary.AppendVarint(b, int64(x))
		}
	}
	return b
}

var errSeries = errors.New("corrupt series blob")

// decodeSeries is the inverse of encodeSeries.
func decodeSeries(b []byte) (experiments.Series, error) {
	var s experiments.Series
	if len(b) == 0 || b[0] != seriesFormat {
		return s, fmt.Errorf("%w: unknown format", errSeries)
	}
	b = b[1:]
	for _, dst := range []*[]int32{&s.Offered, &s.Released, &s.Rejected, &s.InSystemMax} {
		n, k := binary.Uvarint(b)
		if k <= 0 {
			return s, fmt.Errorf("%w: bad length", errSeries)
		}
		b = b[k:]
		if n == 0 {
			continue
		}
		n--
		if n > uint64(len(b)) { // every value takes at least one byte
			return s, fmt.Errorf("%w: length %d past the end", errSeries, n)
		}
		xs := make([]int32, n)
		for i := range xs {
			v, k := binary.Varint(b)
			if k <= 0 || v != int64(int32(v)) {
				return s, fmt.Errorf("%w: bad value", errSeries)
			}
			xs[i] = int32(v)
			b = b[k:]
		}
		*dst = xs
	}
	if len(b) != 0 {
		return s, fmt.Errorf("%w: %d trailing bytes", errSeries, len(b))
	}
	return s, nil
}
