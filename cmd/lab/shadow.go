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
	logFormat := fs.String("log-format", "", "@FILE reads it from FILE; nginx: its log_format (default combined): a log_format's name in --config, the definition ('$remote_addr ... $msec $request_time'), the directive, or a JSON (escape=json) definition; envoy: its format string or JSON format (default: Envoy's default format); alb: none; haproxy: its log-format string, or its config (option httplog, log-format, capture request header ...: a frontend pasted as it is; default: option httplog); vegeta: csv (default) or json, as vegeta encode --to wrote it; k6 (k6 run --out json=FILE): the script's own tags to read as $tag_NAME, e.g. 'tenant client_id'")
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
			cf = "traefik"
			if strings.Contains(string(confText), "envoy.filters.http.local_ratelimit") {
				cf = "envoy"
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
	if def == "" && *format == "nginx" {
		def = "combined"
	}
	if *format == "nginx" && isFormatName(def) && def != "combined" && cf == "nginx" {
		// a log_format of the config, by name
		if def, err = deploy.NginxLogFormat(string(confText), def); err != nil {
			return usagef("--log-format: %v", err)
		}
	}
	f, err := accesslog.ServerFormat(*format, def)
	if err != nil {
		return usagef("--format %s --log-format: %v", *format, err)
	}
	im, err := deploy.Import(cf, string(confText), deploy.ImportOptions{Location: *location})
	if err != nil {
		return usagef("--config %s: %v", *configPath, err)
	}
	loc, err := time.LoadLocation(*logTZ)
	if err != nil {
		return usagef("--log-tz: %v", err)
	}
	logOpt := accesslog.Options{Format: f, Route: *route, WindowMS: *windowMS, Location: loc}
	if *status != "" {
		if logOpt.Status, err = accesslog.ParseStatusFilter(*status); err != nil {
			return usagef("--status: %v", err)
		}
	}
	for flagName, v := range map[string]struct {
		text string
		ms   *float64
	}{"--from": {*from, &logOpt.FromMS}, "--to": {*to, &logOpt.ToMS}} {
		if v.text == "" {
			continue
		}
		tm, err := time.Parse(time.RFC3339Nano, v.text)
		if err != nil {
			return usagef("%s: %v", flagName, err)
		}
		*v.ms = float64(tm.UnixMilli())
	}
	rc, err := openTrace(*logPath)
	if err != nil {
		return usageError{err}
	}
	defer rc.Close()

	objs, errs := experiments.ParseObjectives(strings.ReplaceAll(*objectives, ";", "\n"))
	errs = append(errs, shadow.ValidateObjectives(objs)...)
	if len(errs) > 0 {
		return usagef("--objectives: %v", errs.Err())
	}
	opt := shadow.Options{Import: im, ReportKey: *key, Log: logOpt, MaxBadPct: *maxBad, WhatIf: *whatIf, Objectives: objs}
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

// isFormatName says whether s is a log_format's name rather than its text.
func isFormatName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// accessLogOpener opens the access log at path as a trace
// (accesslog.Trace): lab run --trace FILE --trace-log-format FMT.
func accessLogOpener(path, logFormat, key string, maxBadPct float64) (workload.TraceOpener, error) {
	f, err := accesslog.ParseFormat(logFormat)
	if err != nil {
		return nil, fmt.Errorf("--trace-log-format: %w", err)
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
