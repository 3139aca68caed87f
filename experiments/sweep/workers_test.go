package sweep_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// Every output file is the same bytes at 1, 2 and 16 workers, loads held
// in memory or streamed, for presets of each model: the forward pass
// (token-vs-leaky, flash-crowd), replications (heavy-tail), the client
// model (retry-storm), the queue model (load-shedding).
func TestOutputsAreTheSameAtOneTwoAndSixteenWorkers(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"token-vs-leaky", "flash-crowd", "heavy-tail", "retry-storm", "load-shedding"} {
		cfg, err := presets.Config(name)
		if err != nil {
			t.Fatal(err)
		}
		files := func(opt sweep.Options) []output.File {
			res, err := sweep.Run(context.Background(), cfg, opt)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			f, err := output.Files(res)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		for _, stream := range []bool{false, true} {
			opt := func(workers int) sweep.Options {
				o := sweep.Options{Workers: workers}
				if stream { // streamed in small batches (no arrival curves: another output)
					o = sweep.WithStreamBatch(sweep.WithStreamCache(o, 0), 1000)
				}
				return o
			}
			want := files(opt(1))
			for _, workers := range []int{2, 16} {
				got := files(opt(workers))
				if len(got) != len(want) {
					t.Fatalf("%s workers %d stream %v: %d files, want %d", name, workers, stream, len(got), len(want))
				}
				for i := range want {
					if got[i].Name != want[i].Name || !bytes.Equal(got[i].Data, want[i].Data) {
						t.Errorf("%s workers %d stream %v: %s differs from 1 worker's", name, workers, stream, want[i].Name)
					}
				}
			}
		}
	}
}
