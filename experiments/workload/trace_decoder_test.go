package workload_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ratelab/ratelab/experiments/workload"
)

// replay drains a TraceReplay.
func replay(r *workload.TraceReplay) (ts []float64, names []string) {
	for {
		t, c, ok := r.Next()
		if !ok {
			return ts, names
		}
		ts = append(ts, t)
		names = append(names, r.Clients()[c].Name)
	}
}

func TestTraceReplayFile(t *testing.T) {
	text := "# a day of logs\r\nt_ms,client,service_ms\r\n0,a,12.5\n0,b\n\n  1.5 , a , 3 \n2\n"
	r := workload.NewTraceReplay(strings.NewReader(text), 10, "g", 0)
	ts, names := replay(r)
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if want := []float64{0, 0, 1.5, 2}; !equalFloats(ts, want) {
		t.Errorf("times %v, want %v", ts, want)
	}
	if want := "a b a client"; strings.Join(names, " ") != want {
		t.Errorf("clients %v, want %s", names, want)
	}
	cl := r.Clients()
	if len(cl) != 3 || cl[0].Group != "g" || cl[0].Weight != 1 {
		t.Errorf("clients %+v", cl)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Bad input stops the replay with an error naming the line.
func TestTraceReplayErrors(t *testing.T) {
	long := "1,a\n2," + strings.Repeat("x", workload.MaxTraceLineBytes) + "\n"
	for _, c := range []struct{ text, want string }{
		{"0,a\n2,b\n1,c\n", "line 3: t_ms 1 is before t_ms 2 of line 2: the trace must be sorted"},
		{"0,a\nabc,b\n", `line 2: t_ms "abc" is not a number`},
		{"t_ms\n-1\n", "line 2: t_ms -1 is negative"},
		{"0\n10\n", "line 2: t_ms 10 is at or after the end of the run (duration_ms 10)"},
		{long, "line 2: longer than 1048576 bytes (1 MB)"},
		{"", "no requests in the trace"},
		{"t_ms,client\n", "no requests in the trace"},
	} {
		r := workload.NewTraceReplay(strings.NewReader(c.text), 10, "", 1)
		replay(r)
		if r.Err() == nil || !strings.Contains(r.Err().Error(), c.want) {
			t.Errorf("%.40q: error %v, want %q", c.text, r.Err(), c.want)
		}
	}
}

// A line of exactly 1 MB is read; the buffer is far smaller.
func TestTraceLineOfOneMB(t *testing.T) {
	name := strings.Repeat("x", workload.MaxTraceLineBytes-2)
	d := workload.NewTraceDecoder(strings.NewReader("1," + name + "\r\n"))
	if _, err := d.Next(); err == nil || !strings.Contains(err.Error(), "client name longer") {
		t.Fatalf("a 1 MB line: %v, want the client name refused (not the line)", err)
	}
}

// A failed read (a truncated gzip stream) names the line being read.
func TestTraceDecoderReadErrors(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := range 10000 {
		zw.Write([]byte(strconv.Itoa(i) + ",client-" + strconv.Itoa(i%7) + "\n"))
	}
	zw.Close()
	cut := gz.Bytes()[:gz.Len()/2]
	zr, err := gzip.NewReader(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	d := workload.NewTraceDecoder(zr)
	rows := 0
	for {
		_, err = d.Next()
		if err != nil {
			break
		}
		rows++
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(err.Error(), "line "+strconv.Itoa(rows+1)+": read: ") {
		t.Fatalf("after %d rows: %v, want line %d and an unexpected EOF", rows, err, rows+1)
	}
	if _, again := d.Next(); again != err {
		t.Errorf("the error is not sticky: %v", again)
	}

	d = workload.NewTraceDecoder(iotest.OneByteReader(strings.NewReader("1,a\n2,b")))
	for _, want := range []float64{1, 2} {
		row, err := d.Next()
		if err != nil || row.T != want {
			t.Fatalf("one byte at a time: %v %v", row, err)
		}
	}
	if _, err := d.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

// The service time column: NaN where a line gives none.
func TestTraceServiceColumn(t *testing.T) {
	events, err := workload.ParseTrace("t_ms,client,service_ms\n0,a,5\n1,b,\n2\n")
	if err != nil {
		t.Fatal(err)
	}
	if events[0].ServiceMS != 5 || !math.IsNaN(events[1].ServiceMS) || !math.IsNaN(events[2].ServiceMS) {
		t.Errorf("service times %v %v %v", events[0].ServiceMS, events[1].ServiceMS, events[2].ServiceMS)
	}
}

// The decoder does not allocate per row (clients named before are looked
// up without a copy).
func TestTraceReplayAllocations(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		b.WriteString(strconv.Itoa(i) + ".25,client-" + strconv.Itoa(i%10) + ",3.5\n")
	}
	text := b.String()
	r := workload.NewTraceReplay(strings.NewReader(text), 1e9, "", 1)
	for range 20 {
		r.Next() // name the clients, fill the buffer
	}
	allocs := testing.AllocsPerRun(100, func() { r.Next() })
	if allocs != 0 {
		t.Errorf("%.1f allocations a row", allocs)
	}
}

func BenchmarkTraceDecode(b *testing.B) {
	var sb strings.Builder
	for i := range 100000 {
		sb.WriteString(strconv.FormatFloat(float64(i)*0.864, 'f', 3, 64) + ",client-" + strconv.Itoa(i%5000) + "\n")
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		r := workload.NewTraceReplay(bytes.NewReader(data), 1e12, "", 1)
		for {
			if _, _, ok := r.Next(); !ok {
				break
			}
		}
		if r.Err() != nil {
			b.Fatal(r.Err())
		}
	}
	b.ReportMetric(float64(b.N*100000)/b.Elapsed().Seconds(), "rows/s")
}
