package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/accesslog"
	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/shadow"
	"github.com/ratelab/ratelab/experiments/workload"
)

// cmdShadow replays an access log through a deployed limiter's config:
// who would have been limited, when, and what the service would have
// seen (experiments/shadow). The log is read once, streamed (plain or
// gzip, openTrace); nothing is written when it has too many bad lines.
func cmdShadow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lab shadow", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logPath := fs.String("log", "", "the access log `FILE` (plain or gzip)")
	format := fs.String("format", "nginx", "the log's server: "+strings.Join(accesslog.Servers(), ", "))
	logFormat := fs.String("log-format", "", "the log's format (@FILE reads it from FILE); "+logFormatHelp())
	logTZ := fs.String("log-tz", "UTC", "the time `ZONE` of times logged without one (HAProxy's dates), e.g. Europe/Paris")
	configPath := fs.String("config", "", "the limiter's config `FILE` (nginx.conf with limit_req_zone and limit_req, Traefik's dynamic configuration YAML with a rateLimit middleware, or Envoy's config with the local_ratelimit HTTP filter)")
	configFormat := fs.String("config-format", "", "the config's format: "+strings.Join(deploy.ImportFormats(), ", ")+" (default: for a .yaml or .yml file envoy when it has the local_ratelimit filter, else traefik; else nginx)")
	location := fs.String("location", "", "the nginx location whose limit_req to replay, by its arguments (\"/api/\"), or the Traefik middleware by name, when the config has several")
	key := fs.String("key", "", "the key `EXPR` the verdict is per (default: the first zone's key), e.g. '$remote_addr' or '$http_x_api_key'")
	route := fs.String("route", "", "replay only requests whose path starts with `PREFIX`")
	status := fs.String("status", "", "replay only requests whose logged status matches, e.g. '2xx,404,500-504'")
	from := fs.String("from", "", "replay only requests starting at or after `TIME` (RFC 3339)")
	to := fs.String("to", "", "replay only requests starting before `TIME` (RFC 3339)")
	windowMS := fs.Float64("reorder-window-ms", accesslog.DefaultWindowMS, "put lines in start order within this window; an earlier line is counted bad")
	maxBad := fs.Float64("max-bad-pct", shadow.DefaultMaxBadPct, "fail, writing nothing, when more than this percent of lines are bad")
	requests := fs.Bool("requests", false, "also write "+shadow.RequestsFile+", a row per request")
	whatIf := fs.Bool("what-if", false, "also write "+shadow.WhatIfFile+": the verdict at the imported rate and burst ×0.5, ×1, ×2 and ×4 (one pass), each setting's config to paste back, and the setting the answer rule recommends under --objectives")
	objectives := fs.String("objectives", "", "the what-if sweep's objectives, ';' or newline between them, over "+strings.Join(shadow.ObjectiveMetrics(), ", ")+" (default: reject_pct <= 1)")
	out := fs.String("out", "", "the output `DIR`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lab shadow --log access.log.gz [--log-format '...'] --config nginx.conf --out DIR")
		fmt.Fprintln(stderr, "Replays an access log through the limiter the config deploys, as the library decides:")
		fmt.Fprintf(stderr, "writes %s (per key: requests, limited, delayed, first limited at, longest\n", shadow.KeysFile)
		fmt.Fprintf(stderr, "limited streak, peak rate in a second), %s (per minute) and %s.\n", shadow.TimelineFile, shadow.SummaryFile)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case *logPath == "":
		return usagef("--log FILE is required")
	case *configPath == "":
		return usagef("--config FILE is required")
	case *out == "":
		return usagef("--out DIR is required")
	}
	confText, err := os.ReadFile(*configPath)
	if err != nil {
		return usageError{err}
	}
	cf := *configFormat
	if cf == "" {
		cf = "nginx"
		if ext := filepath.Ext(*configPath); ext == ".yaml" || ext == ".yml" {
			cf = shadow.DetectConfigFormat(string(confText))
			if cf == "nginx" {
				cf = "traefik"
			}
		}
	}
	def := *logFormat
	if file, ok := strings.CutPrefix(def, "@"); ok {
		text, err := os.ReadFile(file)
		if err != nil {
			return usagef("--log-format: %v", err)
		}
		def = string(text)
	}
	objs, errs := experiments.ParseObjectives(strings.ReplaceAll(*objectives, ";", "\n"))
	if len(errs) > 0 {
		return usagef("--objectives: %v", errs.Err())
	}
	// The replay as the web lab's document: one check of every field
	// (shadow.Spec.Prepare), the errors named by their flags.
	sp := &shadow.Spec{Log: *logPath, Format: *format, LogFormat: def, Config: string(confText), ConfigFormat: cf, Location: *location,
		Key: *key, Route: *route, Status: *status, From: *from, To: *to, ReorderWindowMS: *windowMS, MaxBadPct: *maxBad, Objectives: objs}
	sp.Normalize()
	opt, errs := sp.Prepare()
	if len(errs) > 0 {
		e := errs[0]
		name := "--" + strings.ReplaceAll(e.Path, "_", "-")
		switch {
		case e.Path == "config":
			name = "--config " + *configPath
		case strings.HasPrefix(e.Path, "objectives"):
			name = "--objectives: " + e.Path
		case e.Path == "reorder_window_ms":
			name = "--reorder-window-ms"
		}
		return usagef("%s: %s", name, e.Msg)
	}
	im := opt.Import
	if opt.Log.Location, err = time.LoadLocation(*logTZ); err != nil {
		return usagef("--log-tz: %v", err)
	}
	rc, err := openTrace(*logPath)
	if err != nil {
		return usageError{err}
	}
	defer rc.Close()

	opt.WhatIf = *whatIf
	if *maxBad == 0 {
		opt.MaxBadPct = math.SmallestNonzeroFloat64 // 0 means none may be bad
	}
	var rw *shadow.RequestsWriter
	var spool *os.File
	if *requests {
		// spooled outside DIR: nothing is written there before the log passes
		if spool, err = os.CreateTemp("", "lab-shadow-requests-*.csv"); err != nil {
			return err
		}
		defer os.Remove(spool.Name())
		defer spool.Close()
		rw = shadow.NewRequestsWriter(spool, im.Status)
		opt.Each = rw.Add
	}
	start := time.Now()
	opt.Progress = func(lines int64) {
		fmt.Fprintf(stderr, "\rread %d lines (%.0f s)", lines, time.Since(start).Seconds())
	}
	rp, err := shadow.Open(rc, opt)
	if err != nil {
		return usageError{err}
	}
	res, err := runShadow(ctx, rp)
	fmt.Fprintln(stderr)
	var tooMany *shadow.TooManyBad
	if errors.As(err, &tooMany) {
		var b strings.Builder
		for _, bl := range tooMany.Stats.FirstBad {
			fmt.Fprintf(&b, "\n  line %d: %s: %s", bl.Line, bl.Reason, bl.Text)
		}
		for reason, n := range tooMany.Stats.Reasons {
			fmt.Fprintf(&b, "\n  %d: %s", n, reason)
		}
		return usageError{fmt.Errorf("%s: %w%s", *logPath, err, b.String())} // the log is input the user can fix: exit 2
	}
	if err != nil {
		return fmt.Errorf("%s: %w", *logPath, err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	write := func(name string, fn func(io.Writer) error) error {
		file, err := os.Create(filepath.Join(*out, name))
		if err != nil {
			return err
		}
		if err := fn(file); err != nil {
			file.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		return file.Close()
	}
	where := fmt.Sprintf("%s %s, %s", im.Format, im.Where, stagesText(im))
	if err := errors.Join(
		write(shadow.KeysFile, res.WriteKeys),
		write(shadow.TimelineFile, res.WriteTimeline),
		write(shadow.SummaryFile, func(w io.Writer) error { return res.WriteSummary(w, where) }),
	); err != nil {
		return err
	}
	if *whatIf {
		if err := write(shadow.WhatIfFile, res.WriteWhatIf); err != nil {
			return err
		}
	}
	if rw != nil {
		if err := rw.Flush(); err != nil {
			return err
		}
		if _, err := spool.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := write(shadow.RequestsFile, func(w io.Writer) error { _, err := io.Copy(w, spool); return err }); err != nil {
			return err
		}
	}
	for _, n := range im.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	fmt.Fprintf(stderr, "read in %.1f s\n", time.Since(start).Seconds())
	return res.WriteSummary(stdout, where)
}

// runShadow runs the replay; an interrupt stops it at the next request
// (the verdict so far is not written: a partial log's verdict would read
// as the whole's).
func runShadow(ctx context.Context, rp *shadow.Replay) (*shadow.Result, error) {
	type answer struct {
		res *shadow.Result
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := rp.Run()
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		return a.res, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func stagesText(im *deploy.Imported) string {
	var parts []string
	for _, s := range im.Stages {
		parts = append(parts, fmt.Sprintf("zone %s by %s: %s", s.Name, s.Key, s.Spec.Label()))
	}
	return strings.Join(parts, "; ")
}

// logFormatHelp is --log-format's help: each server's definition.
func logFormatHelp() string {
	var parts []string
	for _, server := range accesslog.Servers() {
		parts = append(parts, server+": "+accesslog.LogFormatHelp(server))
	}
	return strings.Join(parts, "; ")
}

// accessLogOpener opens the access log at path as a trace
// (accesslog.Trace): lab run --trace FILE --trace-log-format FMT
// [--trace-log-server SERVER] (times without a zone read as UTC).
func accessLogOpener(path, server, logFormat, key string, maxBadPct float64) (workload.TraceOpener, error) {
	if file, ok := strings.CutPrefix(logFormat, "@"); ok {
		text, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--trace-log-format: %w", err)
		}
		logFormat = string(text)
	}
	if server == "nginx" && logFormat == "" {
		logFormat = "combined"
	}
	f, err := accesslog.ServerFormat(server, logFormat)
	if err != nil {
		return nil, fmt.Errorf("--trace-log-server %s --trace-log-format: %w", server, err)
	}
	if _, err := f.CompileKey(key); err != nil {
		return nil, fmt.Errorf("--trace-key: %w", err)
	}
	return func(string) (io.ReadCloser, error) {
		rc, err := openTrace(path)
		if err != nil {
			return nil, err
		}
		rd, err := accesslog.NewReader(rc, accesslog.Options{Format: f, Keys: []string{key}})
		if err != nil {
			rc.Close()
			return nil, err
		}
		return readCloser{accesslog.NewTrace(rd, 0, maxBadPct), rc}, nil
	}, nil
}
