package workload_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ratelab/ratelab/experiments/workload"
)

// FuzzParseTrace: ParseTrace never panics; what it accepts is a list of
// finite, non-negative times with line numbers in file order, service
// times that are NaN (none) or finite and >= 0, and writing the events
// back as "t_ms,client,service_ms" lines parses to the same events. The
// seed corpus is in testdata/fuzz/FuzzParseTrace; run with
//
//	go test -run '^$' -fuzz FuzzParseTrace -fuzztime 60s ./experiments/workload/
func FuzzParseTrace(f *testing.F) {
	f.Add("t_ms,client\n0,a\n1.5,b\n")
	f.Add("t_ms\n0\n0\n")
	f.Add("# c\n\n3,x\r\n")
	f.Add("t_ms,client,service_ms\n0,a,12.5\n1,,3\n2,b,\n")
	f.Add("0,,1e3\n")
	f.Fuzz(func(t *testing.T, text string) {
		events, err := workload.ParseTrace(text)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") && err.Error() != "no requests in the trace" {
				t.Fatalf("error %q does not name a line", err)
			}
			return
		}
		if len(events) == 0 {
			t.Fatal("no events and no error")
		}
		var b strings.Builder
		last := 0
		for _, e := range events {
			if math.IsNaN(e.T) || math.IsInf(e.T, 0) || e.T < 0 {
				t.Fatalf("line %d: accepted t_ms %g", e.Line, e.T)
			}
			if e.Line <= last {
				t.Fatalf("line numbers out of order: %d after %d", e.Line, last)
			}
			if !math.IsNaN(e.ServiceMS) && (e.ServiceMS < 0 || math.IsInf(e.ServiceMS, 0)) {
				t.Fatalf("line %d: accepted service_ms %g", e.Line, e.ServiceMS)
			}
			last = e.Line
			b.WriteString(strconv.FormatFloat(e.T, 'g', -1, 64))
			b.WriteByte(',')
			b.WriteString(e.Client)
			if !math.IsNaN(e.ServiceMS) {
				b.WriteByte(',')
				b.WriteString(strconv.FormatFloat(e.ServiceMS, 'g', -1, 64))
			}
			b.WriteByte('\n')
		}
		again, err := workload.ParseTrace(b.String())
		if err != nil {
			t.Fatalf("re-written trace does not parse: %v\n%s", err, b.String())
		}
		if len(again) != len(events) {
			t.Fatalf("re-written trace has %d events, want %d", len(again), len(events))
		}
		for i := range again {
			same := again[i].ServiceMS == events[i].ServiceMS || math.IsNaN(again[i].ServiceMS) && math.IsNaN(events[i].ServiceMS)
			if again[i].T != events[i].T || again[i].Client != events[i].Client || !same {
				t.Fatalf("event %d: %+v became %+v", i, events[i], again[i])
			}
		}
	})
}

// FuzzTraceDecoder: the trace file decoder never panics; its errors name a
// line; what it accepts is finite non-negative times (service times NaN or
// finite and non-negative), line numbers increasing; reading one byte at a
// time gives the same rows and error (the buffer's edges change nothing);
// and the rows written back decode to the same rows.
//
//	go test -run '^$' -fuzz FuzzTraceDecoder -fuzztime 60s ./experiments/workload/
func FuzzTraceDecoder(f *testing.F) {
	f.Add([]byte("t_ms,client,service_ms\n0,a,1.5\n1.5,b\n"))
	f.Add([]byte("t_ms\r\n0\r\n0"))
	f.Add([]byte("# c\n\n3,x,\n 4 , y , 2e3 \n"))
	f.Add([]byte("1,a,2,3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := decodeAll(workload.NewTraceDecoder(bytes.NewReader(data)))
		slow, slowErr := decodeAll(workload.NewTraceDecoder(iotest.OneByteReader(bytes.NewReader(data))))
		if fmt.Sprint(err) != fmt.Sprint(slowErr) || len(rows) != len(slow) {
			t.Fatalf("one byte at a time: %d rows, %v; at once: %d rows, %v", len(slow), slowErr, len(rows), err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "line ") {
			t.Fatalf("error %q does not name a line", err)
		}
		var b bytes.Buffer
		last := 0
		for i, r := range rows {
			if !sameRow(r, slow[i]) {
				t.Fatalf("row %d: %+v one byte at a time, %+v at once", i, slow[i], r)
			}
			if math.IsNaN(r.T) || math.IsInf(r.T, 0) || r.T < 0 {
				t.Fatalf("line %d: accepted t_ms %g", r.Line, r.T)
			}
			if !math.IsNaN(r.ServiceMS) && (math.IsInf(r.ServiceMS, 0) || r.ServiceMS < 0) {
				t.Fatalf("line %d: accepted service_ms %g", r.Line, r.ServiceMS)
			}
			if r.Line <= last {
				t.Fatalf("line numbers out of order: %d after %d", r.Line, last)
			}
			last = r.Line
			b.WriteString(strconv.FormatFloat(r.T, 'g', -1, 64) + "," + string(r.Client))
			if !math.IsNaN(r.ServiceMS) {
				b.WriteString("," + strconv.FormatFloat(r.ServiceMS, 'g', -1, 64))
			}
			b.WriteByte('\n')
		}
		again, err := decodeAll(workload.NewTraceDecoder(&b))
		if err != nil || len(again) != len(rows) {
			t.Fatalf("rows written back: %d rows, %v; want %d", len(again), err, len(rows))
		}
		for i := range again {
			again[i].Line = rows[i].Line
			if !sameRow(again[i], rows[i]) {
				t.Fatalf("row %d: %+v became %+v", i, rows[i], again[i])
			}
		}
	})
}

// decodeAll reads every row, copying the client names.
func decodeAll(d *workload.TraceDecoder) ([]workload.TraceRow, error) {
	var rows []workload.TraceRow
	for {
		r, err := d.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		c := *r
		c.Client = bytes.Clone(r.Client)
		rows = append(rows, c)
	}
}

func sameRow(a, b workload.TraceRow) bool {
	return a.T == b.T && bytes.Equal(a.Client, b.Client) && a.Line == b.Line &&
		(a.ServiceMS == b.ServiceMS || math.IsNaN(a.ServiceMS) && math.IsNaN(b.ServiceMS))
}
