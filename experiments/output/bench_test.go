package output_test

import (
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// BenchmarkSeedModelOutputs is the whole-run case: the seed lab's Post 3 model
// (preset token-vs-leaky, 20 points) at 9,900 s, 1.16 M arrivals, whose
// series report keeps the series at 100 ms: 1.98 M rows of series.csv.
// It reports the simulation and the writing of the outputs (output.Write
// to io.Discard, as lab run formats and hashes them) apart, at 1
// and 2 workers (the second and third rows; scripts/bench.sh times
// the whole process).
func BenchmarkSeedModelOutputs(b *testing.B) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Workload.DurationMS = 9_900_000
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			var sim, write time.Duration
			bytes := 0
			for b.Loop() {
				t0 := time.Now()
				res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				outs, err := output.Write(res, func(string) (io.Writer, error) { return io.Discard, nil }) // as lab run writes them
				if err != nil {
					b.Fatal(err)
				}
				sim, write = sim+t1.Sub(t0), write+time.Since(t1)
				bytes = 0
				for _, o := range outs {
					bytes += o.Bytes
				}
			}
			b.ReportMetric(sim.Seconds()/float64(b.N), "sim-s/op")
			b.ReportMetric(write.Seconds()/float64(b.N), "write-s/op")
			b.ReportMetric(float64(bytes), "bytes")
		})
	}
}

// BenchmarkWriteOutputs writes the seed model's outputs at 990 s (198,000
// rows of series.csv, 8 MB) to io.Discard: whole (Files, then each file's
// bytes written) against streamed (Write: series.csv a piece at a time
// into reused buffers). -benchmem shows the memory each touches.
func BenchmarkWriteOutputs(b *testing.B) {
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Workload.DurationMS = 990_000
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("files", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			files, err := output.Files(res)
			if err != nil {
				b.Fatal(err)
			}
			for _, f := range files {
				io.Discard.Write(f.Data)
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := output.Write(res, func(string) (io.Writer, error) { return io.Discard, nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
