package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/ratelab/ratelab/experiments/presets"
)

func cmdPresets(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lab presets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lab presets [NAME]")
		fmt.Fprintln(stderr, "Lists the presets, or prints preset NAME's config document (edit it, then lab run --config).")
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err} // -h ends with status 0, see run
	}
	switch fs.NArg() {
	case 0:
		width := 0
		for _, p := range presets.All() {
			width = max(width, len(p.Name))
		}
		for _, p := range presets.All() {
			fmt.Fprintf(stdout, "%-*s  %s\n", width, p.Name, p.Summary)
		}
		return nil
	case 1:
		p, err := presets.Get(fs.Arg(0))
		if err != nil {
			return usageError{err}
		}
		_, err = stdout.Write(p.JSON)
		return err
	}
	return usagef("at most one preset name")
}
