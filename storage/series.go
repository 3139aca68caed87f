package storage

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/ratelab/ratelab/experiments"
)

// Formats of a series blob (its first byte): 1 holds the four series
// every point has; 2 adds the queue model's SojournP99 and the per-class
// counts (a uvarint of classes, then each class's Offered and Success).
// A point without them is written in format 1, as before.
const (
	seriesFormat        = 1
	seriesFormatClasses = 2
	// seriesFormatDeflate (3) is a blob of format 1 or 2 compressed with
	// raw DEFLATE after the format byte: what Complete stores since
	// migration 0003 (packSeries). Blobs of 1 and 2 stay readable.
	seriesFormatDeflate = 3
)

// maxSeriesBlob bounds an inflated series blob (a corrupt blob must not
// inflate without end): every value of MaxSeriesRows windows of the
// lists a point can have, at the longest varint each.
const maxSeriesBlob = 1 << 30

// packSeries is the series blob Complete stores: encodeSeries deflated.
func packSeries(s *experiments.Series) []byte {
	raw := encodeSeries(s)
	var buf bytes.Buffer
	buf.Grow(len(raw)/3 + 16)
	buf.WriteByte(seriesFormatDeflate)
	zw, _ := flate.NewWriter(&buf, flate.DefaultCompression) // the level is valid
	zw.Write(raw)                                            // a bytes.Buffer takes every write
	zw.Close()
	return buf.Bytes()
}

// encodeSeries packs a point's per-window series into one blob: a format
// byte, then for each of Offered, Released, Rejected, InSystemMax (and in
// format 2 SojournP99 and the classes' series) a uvarint of len+1 (0 for a
// nil slice) followed by the values as zig-zag varints. Window counts are
// mostly small, so a window costs a few bytes instead of a row.
func encodeSeries(s *experiments.Series) []byte {
	lists := [][]int32{s.Offered, s.Released, s.Rejected, s.InSystemMax}
	format := byte(seriesFormat)
	if s.SojournP99 != nil || s.Classes != nil {
		format = seriesFormatClasses
		lists = append(lists, s.SojournP99)
		for _, c := range s.Classes {
			lists = append(lists, c.Offered, c.Success)
		}
	}
	n := 1 + binary.MaxVarintLen64
	for _, xs := range lists {
		n += binary.MaxVarintLen64 + 2*len(xs)
	}
	b := make([]byte, 1, n)
	b[0] = format
	for i, xs := range lists {
		if format == seriesFormatClasses && i == 5 {
			b = binary.AppendUvarint(b, uint64(len(s.Classes)))
		}
		if xs == nil {
			b = binary.AppendUvarint(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(xs))+1)
		for _, x := range xs {
			b = binary.AppendVarint(b, int64(x))
		}
	}
	if format == seriesFormatClasses && len(lists) == 5 {
		b = binary.AppendUvarint(b, 0) // no classes
	}
	return b
}

var errSeries = errors.New("corrupt series blob")

// decodeSeries is the inverse of encodeSeries and packSeries.
func decodeSeries(b []byte) (experiments.Series, error) {
	var s experiments.Series
	if len(b) > 0 && b[0] == seriesFormatDeflate {
		zr := flate.NewReader(bytes.NewReader(b[1:]))
		raw, err := io.ReadAll(io.LimitReader(zr, maxSeriesBlob+1))
		zr.Close()
		if err != nil {
			return s, fmt.Errorf("%w: inflate: %v", errSeries, err)
		}
		if len(raw) > maxSeriesBlob {
			return s, fmt.Errorf("%w: inflates past %d bytes", errSeries, maxSeriesBlob)
		}
		if len(raw) > 0 && raw[0] == seriesFormatDeflate {
			return s, fmt.Errorf("%w: deflated twice", errSeries)
		}
		b = raw
	}
	if len(b) == 0 || (b[0] != seriesFormat && b[0] != seriesFormatClasses) {
		return s, fmt.Errorf("%w: unknown format", errSeries)
	}
	format := b[0]
	b = b[1:]
	list := func(dst *[]int32) error {
		n, k := binary.Uvarint(b)
		if k <= 0 {
			return fmt.Errorf("%w: bad length", errSeries)
		}
		b = b[k:]
		if n == 0 {
			return nil
		}
		n--
		if n > uint64(len(b)) { // every value takes at least one byte
			return fmt.Errorf("%w: length %d past the end", errSeries, n)
		}
		xs := make([]int32, n)
		for i := range xs {
			v, k := binary.Varint(b)
			if k <= 0 || v != int64(int32(v)) {
				return fmt.Errorf("%w: bad value", errSeries)
			}
			xs[i] = int32(v)
			b = b[k:]
		}
		*dst = xs
		return nil
	}
	for _, dst := range []*[]int32{&s.Offered, &s.Released, &s.Rejected, &s.InSystemMax} {
		if err := list(dst); err != nil {
			return s, err
		}
	}
	if format == seriesFormatClasses {
		if err := list(&s.SojournP99); err != nil {
			return s, err
		}
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return s, fmt.Errorf("%w: bad class count", errSeries)
		}
		b = b[k:]
		if n > 0 {
			s.Classes = make([]experiments.ClassSeries, n)
		}
		for i := range s.Classes {
			if err := list(&s.Classes[i].Offered); err != nil {
				return s, err
			}
			if err := list(&s.Classes[i].Success); err != nil {
				return s, err
			}
		}
	}
	if len(b) != 0 {
		return s, fmt.Errorf("%w: %d trailing bytes", errSeries, len(b))
	}
	return s, nil
}
