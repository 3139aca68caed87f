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
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lab serve [--addr 127.0.0.1:8080] [--db ./ratelab.db] [--allowed-hosts NAMES] [--traces DIR]")
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
	if *pageCacheMB < 0 {
		return usagef("--page-cache-mb must not be negative")
	}
	pageCache := *pageCacheMB << 20
	if pageCache == 0 {
		pageCache = -1 // web.Options: no cache
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
		removeStaleTemp(os.TempDir())
		ropt.NewSpill = func() (workload.Spill, func()) {
			s := newFileSpill(os.TempDir())
			return s, s.remove
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ropt.Logger = log

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
		log.Warn("runs left unfinished by the last server are now interrupted", "runs", n)
	}
	rn := runner.New(st, ropt)
	rn.Start()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		shutdownRunner(rn, log)
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	done := make(chan struct{})
	srv := &http.Server{
		Handler:           web.New(st, rn, web.Options{Logger: log, Done: done, HeavyLimit: *heavy, PageCacheBytes: pageCache, Listen: ln.Addr().String(), AllowedHosts: hosts}),
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
	log.Info("shutting down: finishing requests, then the running sweep")
	close(done)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("http shutdown", "err", err)
	}
	shutdownRunner(rn, log)
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
