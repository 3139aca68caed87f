// Command lab is ratelab's command line: it runs sweeps headless and lists
// the presets.
//
//	lab run --preset token-vs-leaky --out DIR
//	lab run --config sweep.json --out DIR
//	lab presets [NAME]
//	lab bench [-benchtime D] [LIMITER ...]
//
// Exit status: 0 on success, 2 on a usage or config error (the message on
// stderr), 1 on any other failure.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
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

// commands lists every command: run and presets, then extraCommands. It is
// built on first use, after every file's init has run (init order follows
// file names, so serve.go's init runs after this file's).
func commands() []command {
	return append([]command{
		{"run", "run a sweep headless and write its outputs to a folder", cmdRun},
		{"presets", "list the preset sweeps, or print one preset's config", cmdPresets},
	}, extraCommands...)
}

// extraCommands are added by other files of this package (serve, bench).
var extraCommands []command

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 && defaultCommand != "" {
		args = []string{defaultCommand}
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, args[1:], stdout, stderr)
			var ue usageError
			switch {
			case err == nil || errors.Is(err, flag.ErrHelp):
				return 0
			case errors.As(err, &ue):
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

// defaultCommand runs when lab is called with no arguments (set by serve).
var defaultCommand string

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: lab <command> [flags]   (lab <command> -h for its flags)")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
}
