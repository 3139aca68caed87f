package accesslog_test

import (
	"bytes"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/ratelab/ratelab/experiments/accesslog"
)

// benchLog is n combined lines over n/200 seconds from 500 addresses.
func benchLog(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		sec := i / 200
		fmt.Fprintf(&b, "10.%d.%d.%d - - [01/Dec/2026:%02d:%02d:%02d +0000] \"GET /api/v1/items/%d?page=2 HTTP/1.1\" %d 5123 \"https://example.com/start\" \"Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0\"\n",
			i%5, (i/5)%10, i%10, 10+sec/3600, sec/60%60, sec%60, i%97, []int{200, 200, 200, 429, 503}[i%5])
	}
	return b.Bytes()
}

// BenchmarkCombined reads combined lines with one key ($binary_remote_addr):
// the lines/s figure is the parse speed docs/shadow.md quotes.
func BenchmarkCombined(b *testing.B) {
	log := benchLog(200_000)
	f, err := accesslog.ParseFormat("combined")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	lines := 0
	cpu0 := cpuSeconds()
	for b.Loop() {
		rd, err := accesslog.NewReader(bytes.NewReader(log), accesslog.Options{Format: f, Keys: []string{"$binary_remote_addr"}})
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			lines++
		}
	}
	b.ReportMetric(float64(lines)/b.Elapsed().Seconds(), "lines/s")
	// The machine may be shared: lines per second of this process's CPU
	// time is the one-core speed whatever else runs.
	b.ReportMetric(float64(lines)/(cpuSeconds()-cpu0), "lines/cpu-s")
}

// cpuSeconds is the process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
