package storage

import (
	"reflect"
	"testing"

	"github.com/ratelab/ratelab/experiments"
)

// The queue model's series (SojournP99, per-class counts) round trip in
// format 2; a point without them keeps format 1's bytes.
func TestSeriesClassesRoundTrip(t *testing.T) {
	plain := experiments.Series{Offered: []int32{1, 2}, Released: []int32{3}}
	if b := encodeSeries(&plain); b[0] != seriesFormat {
		t.Errorf("a plain point's series is written in format %d", b[0])
	}
	for _, s := range []experiments.Series{
		{Offered: []int32{1}, SojournP99: []int32{10, 0, 60031}},
		{Offered: []int32{1}, Classes: []experiments.ClassSeries{{Offered: []int32{4, 0}, Success: []int32{3, 0}}, {Offered: []int32{}, Success: nil}}},
		{Released: []int32{5}, SojournP99: []int32{}, Classes: []experiments.ClassSeries{{Offered: []int32{2}, Success: []int32{2}}, {Offered: []int32{1}, Success: []int32{0}}}},
	} {
		b := encodeSeries(&s)
		if b[0] != seriesFormatClasses {
			t.Errorf("%+v: format %d", s, b[0])
		}
		got, err := decodeSeries(b)
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip %+v -> %+v", s, got)
		}
		for cut := range len(b) {
			if _, err := decodeSeries(b[:cut]); err == nil {
				t.Errorf("%+v cut to %d bytes: no error", s, cut)
			}
		}
	}
}

// The client model's series and a replicated point's band round trip in
// format 4 (stored runs kept neither before it).
func TestSeriesFullRoundTrip(t *testing.T) {
	band := &experiments.SeriesBand{Runs: 3,
		Offered: experiments.WindowSums{Sum: []int64{30, 0}, SumSq: []int64{302, 0}},
		Goodput: experiments.WindowSums{Sum: []int64{1 << 40}, SumSq: []int64{-1}}}
	for _, c := range []struct {
		s    experiments.Series
		band *experiments.SeriesBand
	}{
		{experiments.Series{Offered: []int32{1}, Attempts: []int32{3, 4}, Retries: []int32{2, 0}, Goodput: []int32{1, 1}}, nil},
		{experiments.Series{Released: []int32{5}, Goodput: []int32{}}, band},
		{experiments.Series{Offered: []int32{2}, SojournP99: []int32{7}, Classes: []experiments.ClassSeries{{Offered: []int32{1}}}}, band},
		{experiments.Series{}, &experiments.SeriesBand{Runs: 2}},
	} {
		b := encodeSeriesBand(&c.s, c.band)
		if b[0] != seriesFormatFull {
			t.Errorf("%+v: format %d", c.s, b[0])
		}
		got, gotBand, err := decodeSeriesBand(b)
		if err != nil {
			t.Fatalf("%+v: %v", c.s, err)
		}
		if !reflect.DeepEqual(got, c.s) || !reflect.DeepEqual(gotBand, c.band) {
			t.Errorf("round trip %+v %+v -> %+v %+v", c.s, c.band, got, gotBand)
		}
		if got, gotBand, err := decodeSeriesBand(packSeries(&c.s, c.band)); err != nil || !reflect.DeepEqual(got, c.s) || !reflect.DeepEqual(gotBand, c.band) {
			t.Errorf("packed round trip: %v", err)
		}
		for cut := range len(b) {
			if _, _, err := decodeSeriesBand(b[:cut]); err == nil {
				t.Errorf("%+v cut to %d bytes: no error", c.s, cut)
			}
		}
	}
}

// A band whose sums and squares cover different windows is refused as
// corrupt: the run page reads both at every window of the sums
// (WindowSums.At), so a shorter list of squares would crash its render.
func TestSeriesBandListsOfUnequalLengthAreCorrupt(t *testing.T) {
	for _, w := range []experiments.WindowSums{
		{Sum: []int64{3, 4}, SumSq: []int64{5}},
		{Sum: []int64{3}, SumSq: nil},
		{Sum: nil, SumSq: []int64{9}},
	} {
		band := &experiments.SeriesBand{Runs: 2, Released: w}
		b := encodeSeriesBand(&experiments.Series{Offered: []int32{1}}, band)
		if _, got, err := decodeSeriesBand(b); err == nil {
			t.Errorf("sums %v, squares %v: decoded as %+v, no error", w.Sum, w.SumSq, got)
		}
	}
}
