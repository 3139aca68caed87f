package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// cmdBench runs limiter.DecisionCases through testing.Benchmark: the same
// decisions as BenchmarkDecision in experiments/limiter, printed as a table.
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lab bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	benchtime := fs.Duration("benchtime", time.Second, "run each limiter's benchmark for at least `D`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lab bench [-benchtime D] [LIMITER ...]")
		fmt.Fprintln(stderr, "Times one admission decision of every limiter (or the ones named) on a seeded")
		fmt.Fprintf(stderr, "Poisson stream at %g times its nominal rate, and prints ns and allocations per decision.\n", limiter.DecisionLoad)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err} // -h ends with status 0, see run
	}
	if *benchtime <= 0 {
		return usagef("-benchtime must be positive")
	}
	cases := limiter.DecisionCases()
	if fs.NArg() > 0 {
		var picked []limiter.DecisionCase
		for _, name := range fs.Args() {
			n := len(picked)
			for _, c := range cases {
				if c.Name == name || string(c.Spec.Type) == name {
					picked = append(picked, c)
				}
			}
			if len(picked) == n {
				names := make([]string, len(cases))
				for i, c := range cases {
					names[i] = c.Name
				}
				return usagef("no limiter %q (one of %v)", name, slices.Compact(names))
			}
		}
		cases = picked
	}
	// testing.Benchmark reads its duration from the test flags.
	testing.Init()
	if err := flag.CommandLine.Set("test.benchtime", benchtime.String()); err != nil {
		return fmt.Errorf("set benchtime: %w", err)
	}

	fmt.Fprintf(stdout, "decision cost: %s %s/%s, %d CPUs, Poisson stream at %g× the nominal rate, %s per limiter\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), limiter.DecisionLoad, benchtime)
	const row = "%-34s %7s %12s %16s %11s %9s\n"
	fmt.Fprintf(stdout, row, "limiter", "clients", "ns/decision", "allocs/decision", "B/decision", "admitted")
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return err
		}
		var setupErr error
		admitted, decisions := 0, 0
		res := testing.Benchmark(func(b *testing.B) {
			r, err := c.NewReplay()
			if err != nil {
				setupErr = err
				b.SkipNow()
			}
			b.ReportAllocs()
			admitted, decisions = 0, b.N
			b.ResetTimer()
			for range b.N {
				if r.Step() {
					admitted++
				}
			}
		})
		if setupErr != nil {
			return setupErr
		}
		if res.N == 0 {
			return fmt.Errorf("%s: the benchmark did not run", c.Name)
		}
		fmt.Fprintf(stdout, row, c.Name, fmt.Sprint(c.Clients),
			fmt.Sprintf("%.1f", float64(res.T.Nanoseconds())/float64(res.N)),
			fmt.Sprint(res.AllocsPerOp()), fmt.Sprint(res.AllocedBytesPerOp()),
			fmt.Sprintf("%.1f%%", 100*float64(admitted)/float64(max(decisions, 1))))
	}
	return nil
}
