package main

import (
	"context"
	"errors"
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
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	switch fs.NArg() {
	case 0:
		for _, p := range presets.All() {
			fmt.Fprintf(stdout, "%-16s %s\n", p.Name, p.Summary)
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
