package accesslog_test

import (
	"io"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/accesslog"
	"github.com/ratelab/ratelab/experiments/workload"
)

// A log read as a trace is what the trace decoder reads: starts from the
// first request's ms, clients by key, the upstream time as service_ms.
func TestTraceIsWhatTheDecoderReads(t *testing.T) {
	t.Parallel()
	log := `10.0.0.1 1000.300 0.100 0.090
10.0.0,2 1000.150 0.000 -
10.0.0.1 1000.500 0.010 0.002, 0.003
`
	f := mustFormat(t, "$remote_addr $msec $request_time $upstream_response_time")
	rd, err := accesslog.NewReader(strings.NewReader(log), accesslog.Options{Format: f, Keys: []string{"$remote_addr"}})
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(accesslog.NewTrace(rd, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	want := "t_ms,client,service_ms\n0,10.0.0;2,\n50,10.0.0.1,90\n340,10.0.0.1,5\n"
	if string(text) != want {
		t.Fatalf("trace:\n%s\nwant:\n%s", text, want)
	}
	dec := workload.NewTraceDecoder(strings.NewReader(string(text)))
	n := 0
	for {
		row, err := dec.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		_ = row
	}
	if n != 3 {
		t.Errorf("decoded %d rows", n)
	}
	// Too many bad lines end the trace with an error.
	rd, _ = accesslog.NewReader(strings.NewReader(log+"junk\n"), accesslog.Options{Format: f, Keys: []string{"$remote_addr"}})
	if _, err := io.ReadAll(accesslog.NewTrace(rd, 0, 1)); err == nil || !strings.Contains(err.Error(), "1 of 4 lines (25.00%) of the log are bad") {
		t.Errorf("bad lines: %v", err)
	}
}
