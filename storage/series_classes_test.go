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
