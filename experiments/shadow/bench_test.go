package shadow_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/ratelab/ratelab/experiments/accesslog"
	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/shadow"
)

const benchFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $msec $request_time $upstream_response_time`

// benchShadowLog is n lines of benchFormat at about 1000 requests/s from
// 20000 addresses, a tenth of them from 20 heavy ones, out of start order
// by their request times (as docs/shadow.md's 10^7-line log).
func benchShadowLog(n int) []byte {
	var b bytes.Buffer
	writeShadowLog(&b, n)
	return b.Bytes()
}

// writeShadowLog writes benchShadowLog's lines to w.
func writeShadowLog(b io.Writer, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	t := 1796148840.0
	for i := range n {
		t += rng.ExpFloat64() / 1000
		ip := rng.IntN(20000)
		if rng.IntN(10) == 0 {
			ip = rng.IntN(20)
		}
		rt := float64(rng.IntN(80)) / 1000
		end := t + rt
		sec := int64(end) - 1796148840
		fmt.Fprintf(b, "10.%d.%d.%d - - [01/Dec/2026:%02d:%02d:%02d +0000] \"GET /api/v1/items/%d HTTP/1.1\" 200 512 \"-\" \"Mozilla/5.0 (X11; Linux x86_64)\" %.3f %.3f %.3f\n",
			ip>>16, (ip>>8)&255, ip&255, 18+(14*60+sec)/3600, (14+sec/60)%60, sec%60, i%1000, end, rt, rt*0.9)
	}
}

// TestWriteGeneratedLog writes docs/shadow.md's generated log when asked:
// RATELAB_SHADOW_LOG=access.log.gz RATELAB_SHADOW_LINES=10000000 go test
// ./experiments/shadow/ -run TestWriteGeneratedLog (gzip, its log_format
// benchFormat).
func TestWriteGeneratedLog(t *testing.T) {
	path, lines := os.Getenv("RATELAB_SHADOW_LOG"), os.Getenv("RATELAB_SHADOW_LINES")
	if path == "" || lines == "" {
		t.Skip("set RATELAB_SHADOW_LOG and RATELAB_SHADOW_LINES to write the log")
	}
	n, err := strconv.Atoi(lines)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	bw := bufio.NewWriterSize(zw, 1<<20)
	writeShadowLog(bw, n)
	if err := errors.Join(bw.Flush(), zw.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkShadowReplay is lab shadow's work on a log in memory (no
// gunzip): parse, reorder, key, the nginx gate and the verdict.
func BenchmarkShadowReplay(b *testing.B) {
	log := benchShadowLog(200_000)
	im, err := deploy.Import("nginx", "limit_req_zone $binary_remote_addr zone=perip:10m rate=5r/s;\nlimit_req zone=perip burst=10 nodelay;", deploy.ImportOptions{})
	if err != nil {
		b.Fatal(err)
	}
	f, err := accesslog.ParseFormat(benchFormat)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	cpu0 := cpuSeconds()
	for b.Loop() {
		rp, err := shadow.Open(bytes.NewReader(log), shadow.Options{Import: im, Log: accesslog.Options{Format: f}})
		if err != nil {
			b.Fatal(err)
		}
		res, err := rp.Run()
		if err != nil || res.Requests != 200_000 {
			b.Fatal(err, res.Requests, res.Log)
		}
	}
	b.ReportMetric(float64(b.N)*200_000/b.Elapsed().Seconds(), "lines/s")
	b.ReportMetric(float64(b.N)*200_000/(cpuSeconds()-cpu0), "lines/cpu-s")
}

// cpuSeconds is the process's user and system CPU time (the machine may
// be shared: lines per CPU second is the one-core speed).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
