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
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/accesslog"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/web/format"
)

// maxWorkers bounds --workers and --engine-workers: more goroutines than
// points gain nothing, and a typo of a billion would only cost memory.
const maxWorkers = 4096

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lab run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	preset := fs.String("preset", "", "run the preset `NAME` (see lab presets)")
	configPath := fs.String("config", "", "run the config document in `FILE` (- for stdin), or the config a run's manifest.json records")
	out := fs.String("out", "", "write the outputs to `DIR` (created if missing)")
	workers := fs.Int("workers", 0, "points to run at once (default: all cores); never changes the output")
	quiet := fs.Bool("q", false, "no progress on stderr")
	tracePath := fs.String("trace", "", "replay the trace `FILE` (CSV or gzip CSV: t_ms,client[,service_ms] a line, sorted by time) as the workload, streamed a line at a time")
	spill := fs.Bool("spill", true, "with a trace file: parse it once into a binary spill in $TMPDIR (removed after) that later passes read; false parses the text on every pass")
	sortTrace := fs.Bool("sort", false, "with --trace: sort the trace by time first (ties in file order), in bounded memory through temp files")
	traceLog := fs.String("trace-log-format", "", "with --trace: the FILE is an nginx access log of this log_format (\"combined\", the definition or the directive; see lab shadow), read as the trace: starts from the first request's, clients by --trace-key, the upstream time as service_ms")
	traceServer := fs.String("trace-log-server", "nginx", "with --trace: the FILE is a log of this server ("+strings.Join(accesslog.Servers(), ", ")+"; see lab shadow's --format), read as the trace; --trace-log-format is its format (default: the server's default)")
	traceKey := fs.String("trace-key", "$remote_addr", "with --trace-log-format: the client key `EXPR` over the log's variables")
	traceBad := fs.Float64("trace-max-bad-pct", 1, "with --trace-log-format: fail when more than this percent of the log's lines are bad")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof)")
	shardFlag := fs.String("shard", "", "run only shard `K/N` of the sweep's points (point i is in shard i mod N, K from 0); join the shards with lab merge")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lab run (--preset NAME | --config FILE) --out DIR")
		fmt.Fprintln(stderr, "Runs a sweep and writes results.csv, series.csv, clients.csv (several clients),")
		fmt.Fprintln(stderr, "the config's reports and manifest.json to DIR; with objectives, also settings.csv:")
		fmt.Fprintln(stderr, "a row per setting (what you choose) with its worst values over the scenarios (loads,")
		fmt.Fprintln(stderr, "swept fields, seeds), margin and binding objective, and which setting is recommended,")
		fmt.Fprintln(stderr, "best_overall or, when none meets every objective, closest.")
		fmt.Fprintln(stderr, "With --trace FILE: the trace is the workload (the config's duration_ms stays); a config")
		fmt.Fprintln(stderr, "whose trace parts name a file (\"file\": NAME, as manifest.json records) reads them from FILE.")
		fmt.Fprintln(stderr, "With --shard K/N: the shard's points, shard-result.json.gz and shard.json (see lab merge).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err} // -h ends with status 0, see run
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *workers < 0 || *workers > maxWorkers {
		return usagef("--workers %d: give 0 (every core) or a number of points from 1 to %d", *workers, maxWorkers)
	}
	if (*preset == "") == (*configPath == "") {
		return usagef("give exactly one of --preset or --config")
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	var cfg *experiments.Config
	var manifest []byte // the manifest.json the config comes from, if it does
	var err error
	if *preset != "" {
		if cfg, err = presets.Config(*preset); err != nil {
			return usageError{err}
		}
	} else {
		var data []byte
		if *configPath == "-" {
			data, err = io.ReadAll(io.LimitReader(os.Stdin, experiments.MaxConfigBytes+1))
		} else {
			data, err = os.ReadFile(*configPath)
		}
		if err != nil {
			return usagef("read config: %w", err)
		}
		if output.IsManifest(data) {
			// A manifest.json runs the sweep it records.
			manifest = data
			var notes []string
			if cfg, notes, err = output.ConfigFromManifest(data); err != nil {
				return usagef("config %s: %w", *configPath, err)
			}
			for _, n := range notes {
				fmt.Fprintf(stderr, "lab run: %s: %s\n", *configPath, n)
			}
		} else if cfg, err = document.DecodeConfig(data); err != nil {
			return usagef("config %s: %w", *configPath, err)
		}
	}

	if *sortTrace && *tracePath == "" {
		return usagef("--sort sorts the --trace FILE: give one")
	}

	var traces workload.TraceOpener
	if *tracePath != "" {
		if cfg, err = traceWorkload(cfg, *tracePath); err != nil {
			return usageError{err}
		}
		var cleanup func()
		traces, cleanup = traceFileOpener(ctx, *tracePath, *sortTrace, os.TempDir())
		defer cleanup()
		if *traceLog != "" || *traceServer != "nginx" {
			if *sortTrace {
				return usagef("--sort with --trace-log-format: the log is put in start order as it is read (lab shadow's reorder window)")
			}
			if traces, err = accessLogOpener(*tracePath, *traceServer, *traceLog, *traceKey, *traceBad); err != nil {
				return usageError{err}
			}
		}
	} else if *traceLog != "" || *traceServer != "nginx" {
		return usagef("--trace-log-format and --trace-log-server read the --trace FILE: give one")
	}
	var spiller *fileSpill
	if traces != nil && *spill {
		spiller = newFileSpill(os.TempDir())
		defer spiller.remove()
	}

	var shard *shardSpec
	if *shardFlag != "" {
		sh, err := parseShard(*shardFlag)
		if err != nil {
			return usageError{err}
		}
		shard = &sh
	}

	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	start := time.Now()
	last := start
	opt := sweep.Options{Workers: *workers, Traces: traces}
	if spiller != nil {
		opt.Spill = spiller
	}
	total := len(cfg.Points())
	if shard != nil {
		opt.Points = shardPoints(*shard, total)
	}
	if !hugePagesOff() {
		// The run's arrivals and series on huge pages (hugepages_linux.go):
		// a fifth of the Post 3 run's CPU was their 4 KiB pages' faults.
		points := total
		if opt.Points != nil {
			points = len(opt.Points)
		}
		adviseHugePages(heldBytes(cfg, points))
	}
	if !*quiet {
		opt.Progress = func(done, total int) {
			if now := time.Now(); now.Sub(last) >= 500*time.Millisecond || done == total && now.Sub(start) >= time.Second {
				last = now
				fmt.Fprintf(stderr, "lab run: %d/%d points (%.1fs)\n", done, total, now.Sub(start).Seconds())
			}
		}
		// A streamed pass (a trace too large to hold) says how far it read;
		// the engine serializes these calls with Progress's.
		opt.Reading = func(done, total, points int, read float64) {
			if now := time.Now(); now.Sub(last) >= 500*time.Millisecond {
				last = now
				fmt.Fprintf(stderr, "lab run: %d/%d points; streaming the load to %d of them: %.0f%% read (%.1fs)\n", done, total, points, 100*read, now.Sub(start).Seconds())
			}
		}
	}
	// series.csv is written while the points run (output.SeriesAhead),
	// into the outputs' directory as streamFiles writes the rest.
	outDir := newOutputDir(*out)
	defer outDir.discard()
	var ahead *output.SeriesAhead
	if shard == nil {
		ahead = output.NewSeriesAhead(outDir.open)
		defer ahead.Stop()
		opt.Finished = ahead.Finished
		opt.NoCurves = true // no file lab run writes holds them (a shard's result does)
	}
	res, err := sweep.Run(ctx, cfg, opt)
	var fe *workload.FileError
	if *tracePath != "" && errors.As(err, &fe) {
		// The config names the trace as the manifest recorded it; the
		// user gave this file.
		return usagef("--trace %s: %v", *tracePath, fe.Err)
	}
	// Interrupted (SIGINT, SIGTERM) after some points finished: write
	// those, marked partial in manifest.json, and still fail.
	stopped := err
	if err != nil && (res == nil || res.Partial == nil || shard != nil) {
		return err // the caller says "lab run:"
	}
	if manifest != nil && err == nil {
		if err := output.CheckInputs(manifest, res.Inputs); err != nil {
			if *tracePath != "" {
				return usagef("--trace %s: %w", *tracePath, err)
			}
			return usagef("config %s: %w", *configPath, err)
		}
	}
	var files []output.Output
	if shard != nil {
		var shardOut []output.File
		if shardOut, err = shardFiles(cfg, *shard, total, res); err != nil {
			return fmt.Errorf("write outputs: %w", err)
		}
		if err := writeFiles(*out, shardOut); err != nil {
			return err
		}
		for _, f := range shardOut {
			files = append(files, output.Output{Name: f.Name, SHA256: f.SHA256(), Bytes: len(f.Data)})
		}
	} else if files, err = streamFiles(outDir, res, ahead); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d points, %s, %d files in %s (%.2fs)\n", len(res.Points), format.Arrivals(res.ArrivalsSpan()), len(files), *out, time.Since(start).Seconds())
	for _, f := range files {
		fmt.Fprintf(stdout, "  %s  %s\n", f.SHA256, f.Name)
	}
	if manifest != nil && stopped == nil && shard == nil {
		// A run from a manifest reproduces its outputs, or says which not.
		if err := output.CheckOutputs(manifest, files); err != nil {
			return fmt.Errorf("config %s: %w (the files are written to %s)", *configPath, err, *out)
		}
	}
	if stopped != nil {
		return fmt.Errorf("run: %w: the first %d of %d points finished and are written to %s, marked partial in manifest.json",
			stopped, res.Partial.PointsDone, res.Partial.PointsTotal, *out)
	}
	return nil
}

// startCPUProfile profiles the process's CPU into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeFiles writes each file through a temporary name and a rename, so a
// crash never leaves a half-written output behind.
func writeFiles(dir string, files []output.File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, f.Data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}

// streamFiles writes res's outputs to dir as writeFiles does (each
// through a temporary name and a rename once all are written), but as
// output.WriteAhead makes them: series.csv a piece at a time, never whole
// in memory, from ahead when it wrote it while the sweep ran.
func streamFiles(dir *outputDir, res *experiments.Result, ahead *output.SeriesAhead) ([]output.Output, error) {
	outs, err := output.WriteAhead(res, dir.open, ahead)
	if err != nil {
		return nil, fmt.Errorf("write outputs: %w", err)
	}
	if err := dir.keep(); err != nil {
		return nil, err
	}
	return outs, nil
}

// outputDir is the directory lab run writes its outputs to: each file
// through a temporary name (open, from several goroutines at once),
// renamed once all are written (keep); until then discard removes them
// (and the directory, when open made it and nothing else is in it).
type outputDir struct {
	dir     string
	mu      sync.Mutex
	made    bool // open made the directory
	checked bool // open looked for the directory
	opened  []*os.File
}

func newOutputDir(dir string) *outputDir { return &outputDir{dir: dir} }

// open creates name's temporary file, the directory first if missing; a
// name opened again is written anew.
func (d *outputDir) open(name string) (io.Writer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.checked {
		if _, err := os.Stat(d.dir); err != nil {
			d.made = true
		}
		if err := os.MkdirAll(d.dir, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", d.dir, err)
		}
		d.checked = true
	}
	f, err := os.Create(filepath.Join(d.dir, name) + ".tmp")
	if err != nil {
		return nil, err
	}
	for i, g := range d.opened {
		if g.Name() == f.Name() {
			g.Close() // the same file, truncated: written anew through f
			d.opened = append(d.opened[:i], d.opened[i+1:]...)
			break
		}
	}
	d.opened = append(d.opened, f)
	return &writeBehind{f: f}, nil
}

// keep closes the files written and renames each to its name.
func (d *outputDir) keep() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.opened) > 0 {
		f := d.opened[0]
		d.opened = d.opened[1:]
		tmp := f.Name()
		path := strings.TrimSuffix(tmp, ".tmp")
		if err := f.Close(); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}

// discard removes the temporary files not kept, and the directory when
// open made it and it is empty.
func (d *outputDir) discard() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range d.opened {
		f.Close()
		os.Remove(f.Name())
	}
	d.opened = nil
	if d.made {
		os.Remove(d.dir) // only an empty one
	}
}

// traceWorkload makes the trace at path the workload of cfg: the config's
// trace parts that name a file read it; a config without one gets its parts
// replaced by one trace part named by the file's base name (its
// duration_ms stays). The result is decoded again, so it is a valid config.
func traceWorkload(cfg *experiments.Config, path string) (*experiments.Config, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	named := false
	for i := range cfg.LoadCount() {
		w := cfg.WorkloadAt(i)
		for _, p := range w.Parts {
			named = named || p.File != ""
		}
	}
	if named {
		return cfg, nil
	}
	if len(cfg.Loads) > 0 {
		return nil, fmt.Errorf("--trace: the config has loads; name the trace in their parts ({\"type\": \"trace\", \"file\": NAME})")
	}
	c := *cfg
	c.Workload.Parts = []workload.Part{{Type: workload.Trace, File: traceName(path)}}
	doc, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	out, err := document.DecodeConfig(doc)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	return out, nil
}

// traceName is the name a trace file goes by in the config: its base name,
// with what a trace name may not hold replaced by '_'.
func traceName(path string) string {
	b := []byte(filepath.Base(path))
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	name := strings.TrimLeft(string(b), ".")
	if len(name) > 200 {
		name = name[len(name)-200:]
	}
	if !workload.ValidTraceName(name) {
		name = "trace"
	}
	return name
}
