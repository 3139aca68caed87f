// Command lab is ratelab's command line: it runs sweeps headless and lists
// the presets.
//
//	lab run --preset token-vs-leaky --out DIR
//	lab run --config sweep.json --out DIR
//	lab run --config sweep.json --shard K/N --out DIR
//	lab merge --out DIR SHARD_DIR...
//	lab presets [NAME]
//	lab bench [-benchtime D] [LIMITER ...]
//	lab export --run-dir DIR --point N --format FORMAT
//	lab backup [--db ./ratelab.db] FILE
//
// Exit status: 0 on success; 2 for every input the user can fix (a flag,
// a config, a trace file's content, a manifest whose outputs differ, a
// file that is not the lab's database: userFixable); 1 for internal
// failures only (the message on stderr either way).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/web/format"
)

// usageError is a mistake in the command line or the config: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists every command, in the order the help shows them.
func commands() []command {
	return []command{
		{"serve", "start the web lab (the default: lab with no command)", cmdServe},
		{"run", "run a sweep headless and write its outputs to a folder", cmdRun},
		{"merge", "join the shards of lab run --shard K/N into the outputs of the whole run", cmdMerge},
		{"presets", "list the preset sweeps, or print one preset's config", cmdPresets},
		{"bench", "measure each limiter's decision cost (ns and allocations per decision)", cmdBench},
		{"export", "print the config that deploys one point (nginx, Envoy, Go, Guava, Resilience4j, Traefik, Gubernator)", cmdExport},
		{"shadow", "replay an access log through a deployed limiter's config: who would have been limited, when", cmdShadow},
		{"backup", "write a consistent copy of the lab's database, also while it serves", cmdBackup},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		args = []string{defaultCommand}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		return 0
	}
	// A lab killed while it read a trace left its spill or its sort's
	// chunks behind: removed beside the command (a few ms of a lab run's
	// start, in a temp folder of a thousand entries), and said before the
	// command ends, or before lab serve serves.
	dir := os.TempDir()
	stale := make(chan []string, 1)
	go func() { stale <- removeStaleTemp(dir) }()
	reported := false
	report := func() {
		if !reported {
			reported = true
			for _, name := range <-stale {
				fmt.Fprintf(stderr, "lab: removed %s, the temp files a stopped lab left in %s\n", name, dir)
			}
		}
	}
	defer report()
	for _, c := range commands() {
		if c.name == args[0] {
			if c.name == "serve" {
				report()
			}
			err := c.run(ctx, args[1:], stdout, stderr)
			report()
			switch {
			case err == nil || errors.Is(err, flag.ErrHelp):
				return 0
			case userFixable(err):
				fmt.Fprintf(stderr, "lab %s: %v\n", c.name, err)
				return 2
			default:
				fmt.Fprintf(stderr, "lab %s: %v\n", c.name, err)
				return 1
			}
		}
	}
	fmt.Fprintf(stderr, "lab: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

// userFixable reports whether err is about an input the user can fix,
// exit status 2: a usage error (a flag, an argument, a config the engine
// refuses), a trace file's content (workload.FileError), a config's field
// (field.List, field.Error), or a manifest's outputs that the run did not
// reproduce (output.OutputError). Anything else is an internal failure.
func userFixable(err error) bool {
	var (
		ue  usageError
		fe  *workload.FileError
		fl  field.List
		fer field.Error
		oe  *output.OutputError
	)
	return errors.As(err, &ue) || errors.As(err, &fe) || errors.As(err, &fl) || errors.As(err, &fer) || errors.As(err, &oe)
}

// defaultCommand runs when lab is called with no arguments.
const defaultCommand = "serve"

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: lab <command> [flags]   (lab <command> -h for its flags)")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	limiterHelp(w)
	fmt.Fprintln(w)
	partHelp(w)
	fmt.Fprintln(w)
	serverHelp(w)
}

// serverHelp lists the server's settings (config "server": {...}) from the
// engine's table.
func serverHelp(w io.Writer) {
	fmt.Fprintln(w, "Server settings (\"server\": {\"workers\", \"service_ms\", \"deadline_ms\", these words and numbers}):")
	for _, o := range server.Options() {
		fmt.Fprintf(w, "  %-26s %s\n", o.Name, o.Doc)
		for _, c := range o.Choices {
			fmt.Fprintf(w, "  %-26s   %s: %s\n", "", c.Name, c.Doc)
		}
	}
	for _, n := range server.Numbers() {
		unit := n.Unit
		if unit == "" {
			unit = "share"
		}
		fmt.Fprintf(w, "  %-26s %s (%s): %s\n", n.Name, n.Label, unit, n.Doc)
	}
}

// partHelp lists the workload part types a config's "workload.parts" take,
// with their fields, from the engine's table.
func partHelp(w io.Writer) {
	fmt.Fprintln(w, "Workload part types (\"workload\": {\"parts\": [{\"type\": ..., fields}]}):")
	for _, k := range workload.Kinds() {
		fmt.Fprintf(w, "  %-26s %s\n", k.Type, k.Model)
		for _, f := range k.Fields {
			unit := string(f.Input)
			if f.Unit != "" {
				unit += ", " + f.Unit
			}
			fmt.Fprintf(w, "  %-26s   %s (%s): %s\n", "", f.Name, unit, f.Doc)
		}
	}
}

// limiterHelp lists the limiter types a config's "limiters" take, with
// their parameters, from the engine's registry.
func limiterHelp(w io.Writer) {
	fmt.Fprintln(w, "Limiter types (\"limiters\": [{\"type\": ..., parameters: a value or a list}]):")
	for _, k := range limiter.Kinds() {
		fmt.Fprintf(w, "  %-26s %s\n", k.Type, k.Model)
		if k.RetryAfter != "" {
			fmt.Fprintf(w, "  %-26s   Retry-After: %s\n", "", k.RetryAfter)
		} else if k.ReadsServer {
			fmt.Fprintf(w, "  %-26s   no Retry-After: it refuses by the server's occupancy (retry_after \"honour\" is refused unless another limiter of the sweep gives one)\n", "")
		} else {
			fmt.Fprintf(w, "  %-26s   no Retry-After (retry_after \"honour\" retries on the backoff)\n", "")
		}
		for _, p := range k.Params {
			def := ""
			if p.Default != 0 {
				def = ", default " + format.Num(p.Default)
			}
			kind := "number"
			if p.Integer {
				kind = "whole number"
			}
			fmt.Fprintf(w, "  %-26s   %s (%s, %s, %s to %s%s): %s\n", "", p.Name, kind, p.Unit, format.Num(p.Min), format.Num(p.Max), def, p.Doc)
		}
		for _, o := range k.Options {
			fmt.Fprintf(w, "  %-26s   %s (%s): %s\n", "", o.Name, strings.Join(o.Choices, " | "), o.Doc)
		}
	}
	fmt.Fprintln(w, "Instances (any type but chain whose gate releases at the arrival; none given: one instance):")
	for _, p := range limiter.ReplicaParams() {
		kind := "number"
		if p.Integer {
			kind = "whole number"
		}
		fmt.Fprintf(w, "  %-26s   %s (%s, %s to %s): %s\n", "", p.Name, kind, format.Num(p.Min), format.Num(p.Max), p.Doc)
	}
	for _, o := range limiter.ReplicaOptions() {
		fmt.Fprintf(w, "  %-26s   %s (%s): %s\n", "", o.Name, strings.Join(o.Choices, " | "), o.Doc)
	}
}
