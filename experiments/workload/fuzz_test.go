package workload_test

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/workload"
)

// FuzzParseTrace: ParseTrace never panics; what it accepts is a list of
// finite, non-negative times with line numbers in file order, service
// times that are NaN (none) or in (0, MaxTraceServiceMS], and writing the
// events back as "t_ms,client,service_ms" lines parses to the same events. The
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
			if !math.IsNaN(e.ServiceMS) && (!(e.ServiceMS > 0) || e.ServiceMS > workload.MaxTraceServiceMS) {
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
