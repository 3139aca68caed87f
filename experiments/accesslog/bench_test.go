package accesslog_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
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

// benchRead reads log with f and keys b.N times, reporting lines per
// second and per CPU second.
func benchRead(b *testing.B, f *accesslog.Format, log []byte, keys ...string) {
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	reqs := 0
	cpu0 := cpuSeconds()
	for b.Loop() {
		rd, err := accesslog.NewReader(bytes.NewReader(log), accesslog.Options{Format: f, Keys: keys})
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
			reqs++
		}
		if st := rd.Stats(); st.Bad != 0 {
			b.Fatalf("%d bad lines: %v", st.Bad, st.FirstBad)
		}
	}
	b.ReportMetric(float64(reqs)/b.Elapsed().Seconds(), "requests/s")
	b.ReportMetric(float64(reqs)/(cpuSeconds()-cpu0), "requests/cpu-s")
}

// BenchmarkServers reads 200 000 requests of each other format: HAProxy's
// httplog through syslog, vegeta's CSV and JSON, k6's output (two lines a
// request, the http_reqs point and its http_req_duration).
func BenchmarkServers(b *testing.B) {
	const n = 200_000
	for _, tc := range []struct {
		server, def string
		line        func(i int, sec int, ms int) string
		keys        []string
	}{
		{"haproxy", "option httplog\ncapture request header X-Api-Key len 32", func(i, sec, ms int) string {
			return fmt.Sprintf("<134>Dec  1 10:%02d:%02d haproxy[1]: 10.0.%d.%d:4%04d [01/Dec/2026:10:%02d:%02d.%03d] web app/s1 0/0/1/%d/%d 200 612 - - ---- 9/9/1/1/0 0/0 {key-%d} \"GET /api/v1/items/%d?page=2 HTTP/1.1\"\n",
				sec/60, sec%60, i%5, i%10, i%10000, sec/60, sec%60, ms, i%40, i%40+1, i%50, i%97)
		}, []string{"$remote_addr", "$http_x_api_key"}},
		{"vegeta", "csv", func(i, sec, ms int) string {
			return fmt.Sprintf("%d%03d%06d,200,%d,0,612,,,attack,%d,GET,http://127.0.0.1:8080/api/v1/items/%d?page=2,Q29udGVudC1UeXBlOiB0ZXh0L3BsYWluDQo=\n", 1796148860+sec, ms, i%1000, 1_000_000+i%40_000_000, i, i%97)
		}, []string{"$request_method $uri"}},
		{"vegeta", "json", func(i, sec, ms int) string {
			return fmt.Sprintf(`{"attack":"a","seq":%d,"code":200,"timestamp":"2026-12-01T10:%02d:%02d.%03d%06dZ","latency":%d,"bytes_out":0,"bytes_in":612,"error":"","body":null,"method":"GET","url":"http://127.0.0.1:8080/api/v1/items/%d?page=2","headers":{"Content-Type":["text/plain"]}}`+"\n", i, sec/60, sec%60, ms, i%1000, 1_000_000+i%40_000_000, i%97)
		}, []string{"$request_method $uri"}},
		{"k6", "", func(i, sec, ms int) string {
			t := fmt.Sprintf("2026-12-01T10:%02d:%02d.%03d%06dZ", sec/60, sec%60, ms, i%1000)
			tags := fmt.Sprintf(`{"expected_response":"true","group":"","method":"GET","name":"items","proto":"HTTP/1.1","scenario":"default","status":"200","tls_version":"","url":"http://127.0.0.1:8080/api/v1/items/%d?page=2"}`, i%97)
			return fmt.Sprintf(`{"metric":"http_reqs","type":"Point","data":{"time":"%s","value":1,"tags":%s}}`+"\n"+`{"metric":"http_req_duration","type":"Point","data":{"time":"%s","value":%d.5,"tags":%s}}`+"\n", t, tags, t, i%40, tags)
		}, []string{"$request_method $uri", "$tag_scenario"}},
	} {
		b.Run(tc.server+"-"+strings.SplitN(tc.def, "\n", 2)[0], func(b *testing.B) {
			var log bytes.Buffer
			for i := range n {
				at := i * 5 // ms: 200 requests/s
				log.WriteString(tc.line(i, at/1000, at%1000))
			}
			f, err := accesslog.ServerFormat(tc.server, tc.def)
			if err != nil {
				b.Fatal(err)
			}
			benchRead(b, f, log.Bytes(), tc.keys...)
		})
	}
}
