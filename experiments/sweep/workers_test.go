package sweep_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/enginetest"
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
			return enginetest.ResultFiles(t, res)
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
				enginetest.SameFiles(t, fmt.Sprintf("%s workers %d stream %v, against 1 worker", name, workers, stream), files(opt(workers)), want)
			}
		}
	}
}
