package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// benchTraceLines is the gzip trace's length for BenchmarkTraceRun
// (scripts/bench.sh runs the 10^7 lines as a whole process).
const benchTraceLines = 1_000_000

// writeBenchTrace writes a sorted gzip trace of n lines from 1,000
// clients, 0.09 ms apart on average, and a one-point config over it.
func writeBenchTrace(b *testing.B, dir string, n int) (trace, config string) {
	b.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, 6)
	r := rand.New(rand.NewPCG(1, 2))
	line := []byte("t_ms,client\n")
	zw.Write(line)
	t := 0.0
	for range n {
		t += r.ExpFloat64() * 0.09
		line = strconv.AppendFloat(line[:0], float64(int64(t*1000))/1000, 'f', -1, 64)
		line = append(line, ",client-"...)
		line = strconv.AppendInt(line, int64(r.IntN(1000)), 10)
		zw.Write(append(line, '\n'))
	}
	zw.Close()
	trace = filepath.Join(dir, "trace.csv.gz")
	if err := os.WriteFile(trace, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	config = filepath.Join(dir, "trace.json")
	doc := fmt.Sprintf(`{"version": 1, "workload": {"duration_ms": %d, "parts": [{"type": "trace", "file": "trace.csv.gz"}]},
		"server": {"workers": 100, "service_ms": 10, "deadline_ms": 200}, "limiters": [{"type": "token-bucket", "rate_rps": 10000, "burst": 1000}]}`, int(t)+1000)
	if err := os.WriteFile(config, []byte(doc), 0o644); err != nil {
		b.Fatal(err)
	}
	return trace, config
}

// BenchmarkTraceRun is the first row at a tenth of its size: lab
// run over a gzip trace, one point (1,000 clients), with the spill and
// without, beside `zcat FILE | wc -l` of the same file (its own
// sub-benchmark, when zcat is here). Reported per line.
func BenchmarkTraceRun(b *testing.B) {
	dir := b.TempDir()
	trace, config := writeBenchTrace(b, dir, benchTraceLines)
	for _, spill := range []bool{true, false} {
		b.Run("spill="+strconv.FormatBool(spill), func(b *testing.B) {
			for b.Loop() {
				var stdout, stderr bytes.Buffer
				args := []string{"run", "-q", "--config", config, "--trace", trace, "--spill=" + strconv.FormatBool(spill), "--out", filepath.Join(dir, "out")}
				if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
					b.Fatalf("lab run: %s", stderr.String())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchTraceLines, "ns/line")
		})
	}
	if _, err := exec.LookPath("zcat"); err == nil {
		b.Run("zcat-wc", func(b *testing.B) {
			for b.Loop() {
				if err := exec.Command("sh", "-c", "zcat '"+trace+"' | wc -l").Run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchTraceLines, "ns/line")
		})
	}
}
