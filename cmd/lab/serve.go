package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web"
)

// HTTP server timeouts: a slow client cannot hold a connection forever.
// Event streams clear their own write deadline.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 60 * time.Second // a 10 MB trace upload on a slow link
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownGrace     = 20 * time.Second
)

// defaultSubmitsPerMinute is --submits-per-minute on an address that is
// not loopback.
const defaultSubmitsPerMinute = 6

// minTokenLen is the shortest access token lab serve takes.
const minTokenLen = 16

// accessToken is the token of --token or --token-file ("" for none).
func accessToken(token, file string) (string, error) {
	if token != "" && file != "" {
		return "", usagef("give --token or --token-file, not both")
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return "", usagef("--token-file: %v", err)
		}
		token, _, _ = strings.Cut(string(data), "\n")
		token = strings.TrimSpace(token)
		if token == "" {
			return "", usagef("--token-file %s: its first line is empty", file)
		}
	}
	if token == "" {
		return "", nil
	}
	if len(token) < minTokenLen {
		return "", usagef("the access token has %d characters: give at least %d (openssl rand -hex 16 makes one)", len(token), minTokenLen)
	}
	for i := 0; i < len(token); i++ {
		if token[i] <= ' ' || token[i] > '~' {
			return "", usagef("the access token must be printable ASCII without spaces: byte %d is not", i)
		}
	}
	return token, nil
}

// minMemoryMB is the smallest --max-memory-mb: a sweep and a page need
// their room.
const minMemoryMB = 128

// maxPageCacheMB bounds --page-cache-mb (64 GiB): a typo must not
// overflow the byte count or promise memory the lab never has.
const maxPageCacheMB = 64 << 10

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lab serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen on `ADDR`")
	dbPath := fs.String("db", "./ratelab.db", "SQLite database `FILE` (created on first start)")
	workers := fs.Int("workers", 1, "sweeps run at once")
	queue := fs.Int("queue", 16, "sweeps waiting at most; more get 429")
	engineWorkers := fs.Int("engine-workers", 0, "points of one sweep run at once (0 = all cores); never changes the output")
	heavy := fs.Int("heavy", web.DefaultHeavyLimit, "heavy requests (submissions, downloads, result page renders) served at once; more wait up to 5 s, then get 503")
	pageCacheMB := fs.Int("page-cache-mb", web.DefaultPageCacheBytes>>20, "MiB of finished runs' rendered pages kept in memory (0: none)")
	tracesDir := fs.String("traces", "", "offer the trace files in `DIR` (CSV or gzip CSV, sorted by time; plain names) by name in the new-sweep form and the API's trace parts (\"file\": NAME), replayed on the server")
	allowedHosts := fs.String("allowed-hosts", "", "more `NAMES` to serve, comma-separated (\"lab.example.org\" on any port, \"lab.example.org:8443\"): besides them only localhost, 127.0.0.1 and [::1] on the lab's port are served, other Host headers get 421")
	token := fs.String("token", "", "the access `TOKEN` (at least 16 characters) every request must carry: the API as \"Authorization: Bearer TOKEN\", a browser by signing in once at /signin; required on an address that is not loopback")
	tokenFile := fs.String("token-file", "", "read the access token from the first line of `FILE` (instead of --token, which other users can see in ps)")
	insecure := fs.Bool("insecure-no-auth", false, "serve an address that is not loopback without a token: anyone who can reach it may submit, cancel and delete runs")
	submitsPerMin := fs.Float64("submits-per-minute", -1, "sweeps one client (an IP address) may submit a minute, in bursts of 4, past which it gets 429 (0: no limit; default: 6 on an address that is not loopback, no limit on loopback)")
	streamsPerClient := fs.Int("streams-per-client", web.DefaultStreamsPerClient, "event streams (open run pages) one client may hold at once")
	streams := fs.Int("streams", web.DefaultStreamsTotal, "event streams open at once in all")
	uploadsDir := fs.String("uploads", "", "write the logs uploaded to the \"Replay a log\" form to `DIR` (default: the database's path with .uploads)")
	maxUploadMB := fs.Int64("max-upload-mb", web.DefaultMaxUploadBytes>>20, "the largest log upload in `MiB`, streamed to --uploads (a larger one gets 413)")
	maxMemoryMB := fs.Int("max-memory-mb", web.DefaultMaxMemoryBytes>>20, "the memory `MiB` the lab stays under: half of it bounds the submissions read at once, by what they cost decoded (more wait, then get 503 with Retry-After), and the Go runtime collects harder near it")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lab serve [--addr 127.0.0.1:8080] [--db ./ratelab.db] [--token-file FILE] [--allowed-hosts NAMES] [--traces DIR]")
		fmt.Fprintln(stderr, "Starts the web lab: define sweeps in the browser, watch them run, compare them, share permalinks.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err} // -h ends with status 0, see run
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *workers < 1 || *queue < 1 || *heavy < 1 {
		return usagef("--workers, --queue and --heavy must be at least 1")
	}
	if *engineWorkers < 0 || *engineWorkers > maxWorkers {
		return usagef("--engine-workers %d: give 0 (every core) or a number of points from 1 to %d", *engineWorkers, maxWorkers)
	}
	if *maxMemoryMB < minMemoryMB || *maxMemoryMB > maxPageCacheMB*4 {
		return usagef("--max-memory-mb %d: give %d to %d MiB", *maxMemoryMB, minMemoryMB, maxPageCacheMB*4)
	}
	if *pageCacheMB < 0 || *pageCacheMB > maxPageCacheMB || *pageCacheMB > *maxMemoryMB/4 {
		return usagef("--page-cache-mb %d: give 0 (no cache) to %d MiB, a quarter of --max-memory-mb", *pageCacheMB, min(maxPageCacheMB, *maxMemoryMB/4))
	}
	pageCache := *pageCacheMB << 20
	if pageCache == 0 {
		pageCache = -1 // web.Options: no cache
	}
	if *streamsPerClient < 1 || *streams < 1 {
		return usagef("--streams-per-client and --streams must be at least 1")
	}
	if *submitsPerMin < -1 || *submitsPerMin > 1e6 {
		return usagef("--submits-per-minute %g: give 0 (no limit) or a rate up to 1000000", *submitsPerMin)
	}
	tok, err := accessToken(*token, *tokenFile)
	if err != nil {
		return err
	}
	hosts, err := web.ParseHosts(*allowedHosts)
	if err != nil {
		return usagef("--allowed-hosts: %v", err)
	}
	ropt := runner.Options{Workers: *workers, Queue: *queue, EngineWorkers: *engineWorkers}
	if *tracesDir != "" {
		if st, err := os.Stat(*tracesDir); err != nil || !st.IsDir() {
			return usagef("--traces %s: not a directory", *tracesDir)
		}
		dir := *tracesDir
		ropt.Traces = dirTraceOpener(dir)
		ropt.TraceNames = func() ([]string, error) { return listTraces(dir) }
		ropt.NewSpill = func() (workload.Spill, func()) {
			s := newFileSpill(os.TempDir())
			return s, s.remove
		}
	}
	if *uploadsDir == "" {
		*uploadsDir = *dbPath + ".uploads"
	}
	if *maxUploadMB <= 0 {
		return usagef("--max-upload-mb: must be positive")
	}
	logs := &dirLogs{traces: *tracesDir, uploads: *uploadsDir}
	ropt.Logs = logs
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ropt.Logger = log
	// The runtime collects harder as the heap nears the ceiling (the
	// request budget keeps the heap's need under it; a seven-eighths
	// limit leaves room for what is not heap: stacks, the runtime).
	debug.SetMemoryLimit(int64(*maxMemoryMB) << 20 * 7 / 8)

	st, err := storage.Open(ctx, *dbPath)
	if err != nil {
		return fmt.Errorf("open database %s: %w", *dbPath, err)
	}
	defer st.Close()
	n, err := st.MarkInterrupted(ctx)
	if err != nil {
		return fmt.Errorf("mark interrupted runs: %w", err)
	}
	if n > 0 {
		log.Warn("runs left running by the last server are now interrupted", "runs", n)
	}
	if read, err := st.LogsRead(ctx); err != nil {
		return err
	} else if n, err := logs.removeUnread(read, time.Now()); err != nil {
		log.Warn("uploads no run reads were not all removed", "removed", n, "err", err)
	} else if n > 0 {
		log.Info("removed the uploads no stored run reads", "uploads", n, "dir", *uploadsDir)
	}
	rn := runner.New(st, ropt)
	if _, err := rn.Requeue(ctx); err != nil {
		return err
	}
	rn.Start()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		shutdownRunner(rn, log)
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	loopback := false
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		loopback = tcp.IP.IsLoopback()
	}
	if !loopback && tok == "" && !*insecure {
		ln.Close()
		shutdownRunner(rn, log)
		return usagef("--addr %s is not a loopback address: others can reach the lab there, so give it an access token (--token-file FILE or --token TOKEN), or --insecure-no-auth to serve it open", *addr)
	}
	if *submitsPerMin < 0 {
		*submitsPerMin = 0
		if !loopback {
			*submitsPerMin = defaultSubmitsPerMinute
		}
	}
	done := make(chan struct{})
	srv := &http.Server{
		Handler: web.New(st, rn, web.Options{Logger: log, Done: done, HeavyLimit: *heavy, PageCacheBytes: pageCache, Listen: ln.Addr().String(), AllowedHosts: hosts,
			MaxMemoryBytes: int64(*maxMemoryMB) << 20, Token: tok, SubmitsPerMinute: *submitsPerMin, StreamsPerClient: *streamsPerClient, StreamsTotal: *streams,
			MaxUploadBytes: *maxUploadMB << 20}),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	url := "http://" + ln.Addr().String()
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		url = fmt.Sprintf("http://localhost:%d", tcp.Port)
	}
	fmt.Fprintf(stdout, "ratelab is running at %s (database %s); Ctrl-C stops it\n", url, *dbPath)
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && len(hosts) == 0 {
		log.Warn("listening beyond loopback: only the Host names localhost, 127.0.0.1 and [::1] (and the address listened on) are served; name others with --allowed-hosts", "addr", ln.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		shutdownRunner(rn, log)
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests and the running sweep; queued runs stay queued")
	// The runner stops beside the server, so that event streams, which
	// the server waits for, get their run's last event: queued at once, a
	// running sweep's end within the grace period.
	close(done)
	stopped := make(chan struct{})
	go func() {
		shutdownRunner(rn, log)
		close(stopped)
	}()
	sctx, cancel := context.WithTimeout(context.Background(), web.ShutdownEventWait+time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("http shutdown", "err", err)
	}
	<-stopped
	return nil
}

// shutdownRunner lets the running sweep finish within the grace period;
// the runner marks what it cannot finish interrupted.
func shutdownRunner(rn *runner.Runner, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := rn.Shutdown(ctx); err != nil {
		log.Error("runner shutdown", "err", err)
	}
}
