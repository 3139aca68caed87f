package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ratelab/ratelab/experiments/output"
)

func cmdMerge(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lab merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "write the merged outputs to `DIR` (created if missing)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lab merge --out DIR SHARD_DIR...")
		fmt.Fprintln(stderr, "Joins the directories of lab run --shard K/N (every K from 0 to N-1, once) into the")
		fmt.Fprintln(stderr, "outputs of the unsharded run, byte for byte. Refuses shards of another config or")
		fmt.Fprintln(stderr, "engine version, a missing shard and a shard given twice; writes nothing then.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err} // -h ends with status 0, see run
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	if fs.NArg() == 0 {
		return usagef("give the shard directories to merge")
	}
	start := time.Now()
	res, err := mergeShards(fs.Args())
	if err != nil {
		return usageError{err}
	}
	files, err := output.Files(res)
	if err != nil {
		return fmt.Errorf("write outputs: %w", err)
	}
	if err := writeFiles(*out, files); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d shards, %d points, %d files in %s (%.2fs)\n", fs.NArg(), len(res.Points), len(files), *out, time.Since(start).Seconds())
	for _, f := range files {
		fmt.Fprintf(stdout, "  %s  %s\n", f.SHA256(), f.Name)
	}
	return nil
}
