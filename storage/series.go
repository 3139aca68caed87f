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
	// seriesFormatDeflate (3) is a blob of format 1, 2 or 4 compressed
	// with raw DEFLATE after the format byte: what Complete stores since
	// migration 0003 (packSeries). Blobs of 1 and 2 stay readable.
	seriesFormatDeflate = 3
	// seriesFormatFull (4) is format 2 followed by the client model's
	// Attempts, Retries and Goodput and a replicated point's band (a
	// uvarint of runs+1, 0 for none, then each of the band's lists' Sum and
	// SumSq): a point with any of them. Before it, stored runs lost the
	// client series.
	seriesFormatFull = 4
)

// maxSeriesBlob bounds an inflated series blob (a corrupt blob must not
// inflate without end): every value of MaxSeriesRows windows of the
// lists a point can have, at the longest varint each.
const maxSeriesBlob = 1 << 30

// packSeries is the series blob Complete stores: encodeSeries deflated.
func packSeries(s *experiments.Series, band *experiments.SeriesBand) []byte {
	raw := encodeSeriesBand(s, band)
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
func encodeSeries(s *experiments.Series) []byte { return encodeSeriesBand(s, nil) }

// encodeSeriesBand is encodeSeries with the client series and a band
// (format 4) when the point has them.
func encodeSeriesBand(s *experiments.Series, band *experiments.SeriesBand) []byte {
	lists := [][]int32{s.Offered, s.Released, s.Rejected, s.InSystemMax}
	format := byte(seriesFormat)
	full := band != nil || s.Attempts != nil || s.Retries != nil || s.Goodput != nil
	if s.SojournP99 != nil || s.Classes != nil || full {
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
		b = appendList(b, xs)
	}
	if format == seriesFormatClasses && len(lists) == 5 {
		b = binary.AppendUvarint(b, 0) // no classes
	}
	if full {
		b[0] = seriesFormatFull
		for _, xs := range [][]int32{s.Attempts, s.Retries, s.Goodput} {
			b = appendList(b, xs)
		}
		if band == nil {
			return binary.AppendUvarint(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(band.Runs)+1)
		for _, w := range band.Lists() {
			b = appendList(b, w.Sum)
			b = appendList(b, w.SumSq)
		}
	}
	return b
}

// appendList appends a list as encodeSeries does: a uvarint of len+1 (0
// for nil), then the values as zig-zag varints.
func appendList[T int32 | int64](b []byte, xs []T) []byte {
	if xs == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(xs))+1)
	for _, x := range xs {
		b = binary.AppendVarint(b, int64(x))
	}
	return b
}

var errSeries = errors.New("corrupt series blob")

// decodeSeries is the inverse of encodeSeries and packSeries (a band, if
// any, left out).
func decodeSeries(b []byte) (experiments.Series, error) {
	s, _, err := decodeSeriesBand(b)
	return s, err
}

// readList reads a list appendList wrote from the front of *b.
func readList[T int32 | int64](b *[]byte, dst *[]T) error {
	n, k := binary.Uvarint(*b)
	if k <= 0 {
		return fmt.Errorf("%w: bad length", errSeries)
	}
	*b = (*b)[k:]
	if n == 0 {
		return nil
	}
	n--
	if n > uint64(len(*b)) { // every value takes at least one byte
		return fmt.Errorf("%w: length %d past the end", errSeries, n)
	}
	xs := make([]T, n)
	for i := range xs {
		v, k := binary.Varint(*b)
		if k <= 0 || int64(T(v)) != v {
			return fmt.Errorf("%w: bad value", errSeries)
		}
		xs[i] = T(v)
		*b = (*b)[k:]
	}
	*dst = xs
	return nil
}

// decodeSeriesBand is the inverse of encodeSeriesBand and packSeries.
func decodeSeriesBand(b []byte) (experiments.Series, *experiments.SeriesBand, error) {
	var s experiments.Series
	if len(b) > 0 && b[0] == seriesFormatDeflate {
		zr := flate.NewReader(bytes.NewReader(b[1:]))
		raw, err := io.ReadAll(io.LimitReader(zr, maxSeriesBlob+1))
		zr.Close()
		if err != nil {
			return s, nil, fmt.Errorf("%w: inflate: %v", errSeries, err)
		}
		if len(raw) > maxSeriesBlob {
			return s, nil, fmt.Errorf("%w: inflates past %d bytes", errSeries, maxSeriesBlob)
		}
		if len(raw) > 0 && raw[0] == seriesFormatDeflate {
			return s, nil, fmt.Errorf("%w: deflated twice", errSeries)
		}
		b = raw
	}
	if len(b) == 0 || (b[0] != seriesFormat && b[0] != seriesFormatClasses && b[0] != seriesFormatFull) {
		return s, nil, fmt.Errorf("%w: unknown format", errSeries)
	}
	format := b[0]
	b = b[1:]
	for _, dst := range []*[]int32{&s.Offered, &s.Released, &s.Rejected, &s.InSystemMax} {
		if err := readList(&b, dst); err != nil {
			return s, nil, err
		}
	}
	if format != seriesFormat {
		if err := readList(&b, &s.SojournP99); err != nil {
			return s, nil, err
		}
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return s, nil, fmt.Errorf("%w: bad class count", errSeries)
		}
		b = b[k:]
		if n > 0 {
			s.Classes = make([]experiments.ClassSeries, n)
		}
		for i := range s.Classes {
			if err := readList(&b, &s.Classes[i].Offered); err != nil {
				return s, nil, err
			}
			if err := readList(&b, &s.Classes[i].Success); err != nil {
				return s, nil, err
			}
		}
	}
	var band *experiments.SeriesBand
	if format == seriesFormatFull {
		for _, dst := range []*[]int32{&s.Attempts, &s.Retries, &s.Goodput} {
			if err := readList(&b, dst); err != nil {
				return s, nil, err
			}
		}
		runs, k := binary.Uvarint(b)
		if k <= 0 || runs > 1<<20 {
			return s, nil, fmt.Errorf("%w: bad run count", errSeries)
		}
		b = b[k:]
		if runs > 0 {
			band = &experiments.SeriesBand{Runs: int(runs - 1)}
			for _, w := range band.Lists() {
				if err := readList(&b, &w.Sum); err != nil {
					return s, nil, err
				}
				if err := readList(&b, &w.SumSq); err != nil {
					return s, nil, err
				}
				// WindowSums.At reads both at each window of Sum.
				if len(w.Sum) != len(w.SumSq) {
					return s, nil, fmt.Errorf("%w: a band's sums cover %d windows, its squares %d", errSeries, len(w.Sum), len(w.SumSq))
				}
			}
		}
	}
	if len(b) != 0 {
		return s, nil, fmt.Errorf("%w: %d trailing bytes", errSeries, len(b))
	}
	return s, band, nil
}
