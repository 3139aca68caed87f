package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/document"
)

// cmdExport prints the configuration that deploys one point of a run
// folder's sweep: the text on stdout, the notes and the rerun on stderr.
func cmdExport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lab export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runDir := fs.String("run-dir", "", "the run's output `DIR` (lab run --out), read for its manifest.json")
	point := fs.Int("point", -1, "the point's index `N` (its row of results.csv, from 0)")
	format := fs.String("format", "", "the `FORMAT`: "+strings.Join(deploy.Names(), ", "))
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lab export --run-dir DIR --point N --format FORMAT")
		fmt.Fprintln(stderr, "Prints the configuration that deploys point N of the sweep in DIR/manifest.json:")
		fmt.Fprintln(stderr, "the text on stdout; what was rounded, how the library differs and the")
		fmt.Fprintln(stderr, "library-exact limiter to add to the config to see it (the rerun) on stderr.")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "Formats:")
		for _, f := range deploy.Formats() {
			fmt.Fprintf(stderr, "  %-18s %s: %s\n", f.Name, f.Label, f.Doc)
		}
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err} // -h ends with status 0, see run
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *runDir == "" {
		return usagef("--run-dir DIR is required")
	}
	if *point < 0 {
		return usagef("--point N is required (a results.csv row, from 0)")
	}
	cfg, err := manifestConfig(*runDir)
	if err != nil {
		return usageError{err}
	}
	pt, err := deploy.PointOf(cfg, *point)
	if err != nil {
		return usageError{err}
	}
	if *format == "" {
		return usagef("--format is required; for this point: %s", formatsFor(pt))
	}
	e, err := deploy.Render(*format, pt)
	var ne *deploy.NotExpressible
	switch {
	case errors.As(err, &ne):
		return usagef("%v (formats for this point: %s)", err, formatsFor(pt))
	case err != nil:
		return usageError{err}
	}
	if _, err := io.WriteString(stdout, e.Text); err != nil {
		return err
	}
	for _, n := range e.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	switch {
	case e.Exact:
		fmt.Fprintf(stderr, "exact: point %d is the library's gate at this setting; its results show what the deployment does.\n", *point)
	case e.Rerun != nil:
		doc, err := json.Marshal(e.Rerun)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "rerun: add this limiter to the config's \"limiters\" to see the deployed setting beside the point:\n%s\n", doc)
	}
	return nil
}

// manifestConfig reads the config a run folder's manifest.json records.
func manifestConfig(dir string) (*experiments.Config, error) {
	path := filepath.Join(dir, experiments.FileManifest)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the run's manifest: %w", err)
	}
	var m struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(data, &m); err != nil || len(m.Config) == 0 {
		return nil, fmt.Errorf("%s is not a run's manifest (no config): %v", path, err)
	}
	cfg, err := document.DecodeConfig(m.Config)
	if err != nil {
		return nil, fmt.Errorf("the config in %s: %w", path, err)
	}
	return cfg, nil
}

// formatsFor lists the formats that can deploy the point.
func formatsFor(pt *deploy.Point) string {
	var names []string
	for _, a := range deploy.Availability(pt) {
		if a.Err == nil {
			names = append(names, a.Format.Name)
		}
	}
	if len(names) == 0 {
		return "none (no format expresses a " + string(pt.Spec.Type) + ")"
	}
	return strings.Join(names, ", ")
}
