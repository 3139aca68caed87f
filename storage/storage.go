// Package storage keeps the lab's runs in one SQLite file (modernc.org/sqlite,
// no cgo): each run's config, status and progress, and once it is done every
// point's metrics, time series and per-client results and every output
// file's bytes and sha256.
//
// The model: a run is created queued, may go running, and ends exactly once
// as done (Complete), failed, cancelled or interrupted (Finish). Complete
// writes all results and the status in one transaction, so a run is either
// complete or has no results at all. Runs left queued or running by a server
// that stopped become interrupted at the next start (MarkInterrupted).
//
// The database runs in WAL mode with a busy timeout and immediate write
// transactions, so concurrent writers wait for each other instead of
// failing with SQLITE_BUSY; foreign keys are on. The schema comes from the
// embedded migrations package and is brought up to date by Open.
package storage

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Run statuses.
const (
	StatusQueued      = "queued"
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusFailed      = "failed"
	StatusCancelled   = "cancelled"
	StatusInterrupted = "interrupted"
	// StatusPartial: cancelled or interrupted after some points finished;
	// the run keeps those (PointsDone of PointsTotal) with their files.
	StatusPartial = "partial"
)

// Statuses lists every status, in lifecycle order.
var Statuses = []string{StatusQueued, StatusRunning, StatusDone, StatusFailed, StatusCancelled, StatusInterrupted, StatusPartial}

// Final reports whether status is an end state (done, failed, cancelled,
// interrupted, partial): a run in one never changes again.
func Final(status string) bool {
	switch status {
	case StatusDone, StatusFailed, StatusCancelled, StatusInterrupted, StatusPartial:
		return true
	}
	return false
}

// HasResults reports whether a run of this status has stored results
// (points and files): done, or partial.
func HasResults(status string) bool { return status == StatusDone || status == StatusPartial }

// InterruptedError is the error text MarkInterrupted gives runs.
const InterruptedError = "the server stopped before this sweep finished; re-run it"

var (
	// ErrNotFound: no run (or file) by that id (or name).
	ErrNotFound = errors.New("not found")
	// ErrNotDatabase: the file is not an SQLite database.
	ErrNotDatabase = errors.New("not an SQLite database")
	// ErrFinished: the run has already ended (done, failed, cancelled or
	// interrupted) and cannot change status again.
	ErrFinished = errors.New("run already finished")
)

// IDLen is the length of a run id: 12 lowercase base32 characters (60
// random bits from crypto/rand), safe in URLs.
const IDLen = 12

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns a fresh random run id.
func NewID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather than return short)
	return idEncoding.EncodeToString(b[:])[:IDLen]
}

// ValidID reports whether s has the shape of a run id, so handlers can
// reject junk before touching the database.
func ValidID(s string) bool {
	if len(s) != IDLen {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// Run is one sweep as stored.
type Run struct {
	ID          string
	Name        string
	CreatedAt   time.Time // UTC
	Status      string
	PointsDone  int
	PointsTotal int
	// Config is the config document (normalized JSON, Config.JSON()).
	Config        []byte
	Seed          uint64
	EngineVersion string
	Error         string
	Limiters      []string   // limiter labels, for run lists
	RerunOf       string     // id of the run this one re-runs, "" if none
	FinishedAt    *time.Time // UTC; nil until the run ends
	// StoredBytes is the run's size in the database: its config, result,
	// points and files as stored (compressed), without pages and indexes.
	StoredBytes int64
	// Kind is what the run is: KindSweep, or KindShadow (a log replayed
	// through a limiter's config: its results are its files alone).
	Kind string
	// Note is written after the run (SetLabels); Tags too, read by ListBy
	// and Labels (nil from Get, Head, List and Queued).
	Note string
	Tags []string
}

// Run kinds (runs.kind).
const (
	KindSweep  = ""
	KindShadow = "shadow"
)

// File is one output file of a run, in manifest order.
type File struct {
	Name   string
	SHA256 string // hex
	Bytes  int
	Data   []byte // nil from Files and OpenFile; the bytes from File
}

// Store is the lab database. It is safe for concurrent use.
type Store struct {
	db *sql.DB
	// write admits one write transaction of this process at a time. SQLite
	// allows one writer anyway, and its busy handler polls rather than
	// queues, so under load a writer could starve past busy_timeout;
	// writers of this process queue here instead (and give up when their
	// context ends). The busy timeout still covers other processes.
	write chan struct{}
	// deletions counts the runs Delete removed (Deletions).
	deletions atomic.Uint64
}

// DSN is the driver data source name Open uses for path: WAL journal with
// synchronous=NORMAL (a crash never tears a transaction; a power cut may
// lose the last few commits), a 5 s busy timeout, foreign keys on, and
// write transactions that take the write lock at BEGIN (so two writers
// queue instead of deadlocking into SQLITE_BUSY).
func DSN(path string) string {
	return uri(path) + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate"
}

// uri is path as a SQLite URI without parameters: it escapes the
// characters that end or escape its path.
func uri(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// Open opens (creating if needed) the database at path and applies any
// pending migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open store: empty path")
	}
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	// Readers run in parallel under WAL; writers queue on the write lock.
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if _, err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return &Store{db: db, write: make(chan struct{}, 1)}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// SchemaVersion is the database's PRAGMA user_version: the number of the
// last migration applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

// Create stores a new run. It assigns r.ID and r.CreatedAt (now, UTC) and
// sets r.Status to queued when empty. A RerunOf naming no run is ErrNotFound.
func (s *Store) Create(ctx context.Context, r *Run) error {
	if r.Status == "" {
		r.Status = StatusQueued
	}
	if !slices.Contains(Statuses, r.Status) {
		return fmt.Errorf("create run: unknown status %q", r.Status)
	}
	if len(r.Config) == 0 {
		return errors.New("create run: empty config")
	}
	limiters, err := json.Marshal(nonNil(r.Limiters))
	if err != nil {
		return fmt.Errorf("create run: %w", err)
	}
	var rerunOf, finished any
	if r.RerunOf != "" {
		rerunOf = r.RerunOf
	}
	if r.FinishedAt != nil {
		finished = r.FinishedAt.UTC().UnixNano()
	}
	created := time.Now().UTC()
	const attempts = 3
	for i := range attempts {
		id := NewID()
		err := s.tx(ctx, func(tx *sql.Tx) error {
			if r.RerunOf != "" {
				if err := exists(ctx, tx, r.RerunOf); err != nil {
					return fmt.Errorf("re-run of %s: %w", r.RerunOf, err)
				}
			}
			var taken int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE id = ?", id).Scan(&taken); err != nil {
				return err
			}
			if taken > 0 {
				return errIDTaken
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO runs
				(id, name, created_at, status, points_done, points_total, config, seed, engine_version, error, limiters, rerun_of, finished_at, kind)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				id, r.Name, created.UnixNano(), r.Status, r.PointsDone, r.PointsTotal, r.Config,
				strconv.FormatUint(r.Seed, 10), r.EngineVersion, r.Error, string(limiters), rerunOf, finished, r.Kind)
			return err
		})
		if errors.Is(err, errIDTaken) && i < attempts-1 {
			continue
		}
		if err != nil {
			return fmt.Errorf("create run: %w", err)
		}
		r.ID = id
		r.CreatedAt = created
		return nil
	}
	panic("unreachable")
}

var errIDTaken = errors.New("run id already taken")

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// runColumns are the columns scanRun reads, in order.
const runColumns = `id, name, created_at, status, points_done, points_total, seed, engine_version, error, limiters, rerun_of, finished_at, stored_bytes, kind, note`

type scanner interface{ Scan(dest ...any) error }

func scanRun(sc scanner, r *Run, extra ...any) error {
	var (
		created  int64
		seed     string
		limiters string
		rerunOf  sql.NullString
		finished sql.NullInt64
	)
	dest := append([]any{&r.ID, &r.Name, &created, &r.Status, &r.PointsDone, &r.PointsTotal, &seed,
		&r.EngineVersion, &r.Error, &limiters, &rerunOf, &finished, &r.StoredBytes, &r.Kind, &r.Note}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return err
	}
	r.CreatedAt = time.Unix(0, created).UTC()
	var err error
	if r.Seed, err = strconv.ParseUint(seed, 10, 64); err != nil {
		return fmt.Errorf("run %s: seed %q: %w", r.ID, seed, err)
	}
	if err := json.Unmarshal([]byte(limiters), &r.Limiters); err != nil {
		return fmt.Errorf("run %s: limiters: %w", r.ID, err)
	}
	r.RerunOf = rerunOf.String
	r.FinishedAt = nil
	if finished.Valid {
		t := time.Unix(0, finished.Int64).UTC()
		r.FinishedAt = &t
	}
	return nil
}

// Get returns the run with its config, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*Run, error) {
	var r Run
	row := s.db.QueryRowContext(ctx, "SELECT "+runColumns+", config FROM runs WHERE id = ?", id)
	if err := scanRun(row, &r, &r.Config); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("get run %s: %w", id, err)
	}
	return &r, nil
}

// Head returns the run without its config (Config is nil), or
// ErrNotFound: one small row, for requests that may need no more.
func (s *Store) Head(ctx context.Context, id string) (*Run, error) {
	var r Run
	row := s.db.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE id = ?", id)
	if err := scanRun(row, &r); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("get run %s: %w", id, err)
	}
	return &r, nil
}

// Delete removes a run with its points and files (runs that re-ran it keep
// their results and lose the link), or is ErrNotFound. A queued or running
// run is deleted too; its sweep then fails to store its results.
func (s *Store) Delete(ctx context.Context, id string) error {
	return s.DeleteRuns(ctx, []string{id})
}

// DeleteRuns removes the runs ids as Delete removes one, all in one
// transaction: every one of them goes, with its points, files, chunks,
// tags and values, or (an id naming no run: ErrNotFound; any other error,
// a crash) none does.
func (s *Store) DeleteRuns(ctx context.Context, ids []string) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			res, err := tx.ExecContext(ctx, "DELETE FROM runs WHERE id = ?", id)
			if err == nil {
				var n int64
				if n, err = res.RowsAffected(); err == nil && n == 0 {
					err = ErrNotFound
				}
			}
			if err != nil && len(ids) > 1 {
				return fmt.Errorf("run %s: %w", id, err)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if len(ids) == 1 {
			return fmt.Errorf("delete run %s: %w", ids[0], err)
		}
		return fmt.Errorf("delete %d runs: %w", len(ids), err)
	}
	s.deletions.Add(uint64(len(ids)))
	return nil
}

// Deletions is how many runs this Store has deleted. A finished run
// changes only when it, or the run it re-ran, is deleted, so a copy of
// finished runs' data (such as a rendered page) stays good while this
// count stays the same, unless another process deletes runs in the same
// file.
func (s *Store) Deletions() uint64 { return s.deletions.Load() }

// Backup writes a consistent copy of the whole database to path (VACUUM
// INTO: one read transaction, so it runs beside readers and writers, of
// this process or another, and sees every commit before it began). path
// is a file name (not a URI) that must not exist, or be an empty file;
// the copy is compact (no free pages) and opens with Open.
func (s *Store) Backup(ctx context.Context, path string) error {
	if path == "" {
		return errors.New("backup: empty path")
	}
	if _, err := s.db.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		return fmt.Errorf("backup to %s: %w", path, err)
	}
	return nil
}

// Backup copies the database at path, which must exist and may be in use
// by a running lab, to dest as Store.Backup does, without applying
// migrations to either, then checks the copy (PRAGMA quick_check) and
// returns how many runs it holds.
func Backup(ctx context.Context, path, dest string) (runs int, err error) {
	if path == "" {
		return 0, errors.New("backup: empty database path")
	}
	db, err := sql.Open("sqlite", DSN(path)+"&mode=rw") // rw: never create it
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		if strings.Contains(err.Error(), "not a database") {
			return 0, fmt.Errorf("%s: %w", path, ErrNotDatabase)
		}
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	if err := (&Store{db: db}).Backup(ctx, dest); err != nil {
		return 0, err
	}
	cp, err := sql.Open("sqlite", uri(dest)+"?mode=ro")
	if err != nil {
		return 0, fmt.Errorf("open the copy %s: %w", dest, err)
	}
	defer cp.Close()
	var check string
	if err := cp.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil {
		return 0, fmt.Errorf("check the copy %s: %w", dest, err)
	}
	if check != "ok" {
		return 0, fmt.Errorf("check the copy %s: %s", dest, check)
	}
	if err := cp.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&runs); err != nil {
		return 0, fmt.Errorf("count the copy's runs: %w", err)
	}
	return runs, nil
}

// List returns up to limit runs (newest first) after skipping offset, and
// how many runs there are in all. Config is not loaded. limit <= 0 means 50.
func (s *Store) List(ctx context.Context, limit, offset int) ([]Run, int, error) {
	if limit <= 0 {
		limit = 50
	}
	offset = max(offset, 0)
	var total int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list runs: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+runColumns+" FROM runs ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?", limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	runs := []Run{}
	for rows.Next() {
		var r Run
		if err := scanRun(rows, &r); err != nil {
			return nil, 0, fmt.Errorf("list runs: %w", err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list runs: %w", err)
	}
	return runs, total, nil
}

// SetStatus sets a run's status. A run that has ended is ErrFinished: use
// Complete or Finish to end one.
func (s *Store) SetStatus(ctx context.Context, id, status string) error {
	if status != StatusQueued && status != StatusRunning {
		return fmt.Errorf("set status of run %s: %q: only queued or running (end a run with Complete or Finish)", id, status)
	}
	return s.update(ctx, "set status", id, "UPDATE runs SET status = ? WHERE id = ? AND status IN ('queued', 'running')", status, id)
}

// SetProgress records that done of total points are done. A run that has
// ended is ErrFinished.
func (s *Store) SetProgress(ctx context.Context, id string, done, total int) error {
	return s.update(ctx, "set progress", id, "UPDATE runs SET points_done = ?, points_total = ? WHERE id = ? AND status IN ('queued', 'running')", done, total, id)
}

// Finish ends a run as failed, cancelled or interrupted, with errText as its
// error. A run that has already ended is ErrFinished (the first end wins).
func (s *Store) Finish(ctx context.Context, id, status, errText string) error {
	switch status {
	case StatusFailed, StatusCancelled, StatusInterrupted:
	default:
		return fmt.Errorf("finish run %s: status %q: want failed, cancelled or interrupted", id, status)
	}
	return s.update(ctx, "finish", id, "UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE id = ? AND status IN ('queued', 'running')",
		status, errText, time.Now().UTC().UnixNano(), id)
}

// update runs a single-row UPDATE guarded by "status is queued or running"
// and tells ErrNotFound from ErrFinished when it changes nothing.
func (s *Store) update(ctx context.Context, what, id, query string, args ...any) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 1 {
			return nil
		}
		if err := exists(ctx, tx, id); err != nil {
			return err
		}
		return ErrFinished
	})
	if err != nil {
		return fmt.Errorf("%s of run %s: %w", what, id, err)
	}
	return nil
}

// exists is nil when run id exists, ErrNotFound when it does not.
func exists(ctx context.Context, tx *sql.Tx, id string) error {
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE id = ?", id).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// MarkInterrupted ends every running run as interrupted, with
// InterruptedError as the error: call it at start-up, before a runner
// starts, for the runs a stopped server left running. Queued runs stay
// queued: the runner takes them again (Queued, runner.Requeue). It
// returns how many runs it marked.
func (s *Store) MarkInterrupted(ctx context.Context) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE status = 'running'",
			StatusInterrupted, InterruptedError, time.Now().UTC().UnixNano())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("mark interrupted runs: %w", err)
	}
	return int(n), nil
}

// Queued returns the queued runs with their configs, oldest first: the
// runs a stopped server had accepted and not started, which a new runner
// queues again.
func (s *Store) Queued(ctx context.Context) ([]Run, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+runColumns+", config FROM runs WHERE status = 'queued' ORDER BY created_at, id")
	if err != nil {
		return nil, fmt.Errorf("queued runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		if err := scanRun(rows, &r, &r.Config); err != nil {
			return nil, fmt.Errorf("queued runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("queued runs: %w", err)
	}
	return out, nil
}

// storedBytes is the SQL of a run's size in the database (runs.stored_bytes;
// migration 0003 fills it the same way for the runs stored before it).
const storedBytes = `length(config) + coalesce(length(result), 0)
	+ coalesce((SELECT sum(length(point) + length(series)) FROM points WHERE points.run_id = runs.id), 0)
	+ coalesce((SELECT sum(length(data)) FROM file_chunks WHERE file_chunks.run_id = runs.id), 0)`

// Complete stores a run's results and ends it as done, in one transaction:
// every point (as JSON, with its series as a compact blob), the run-level
// result (arrivals, clients, groups, ...), and every file's bytes and sha256
// in the order given (output.Files order: manifest.json last), in chunks of
// ChunkBytes, and res.Config as the run's config (the document submitted,
// with what the run settled: an empirical server's mean read from a trace
// file). The run must be queued or running (else ErrFinished). A
// partial result (res.Partial set) is stored by Keep.
func (s *Store) Complete(ctx context.Context, id string, res *experiments.Result, files []output.File) error {
	if res.Partial != nil {
		return fmt.Errorf("complete run %s: the result is partial: store it with Keep", id)
	}
	return s.complete(ctx, id, res, files, "")
}

// Keep stores a partial result (res.Partial set: the sweep was cancelled
// or interrupted after some points finished) as Complete stores a whole
// one, and ends the run as partial with errText (why it stopped) as its
// error: points_done of points_total points are kept.
func (s *Store) Keep(ctx context.Context, id string, res *experiments.Result, files []output.File, errText string) error {
	if res.Partial == nil {
		return fmt.Errorf("keep run %s: the result is whole: store it with Complete", id)
	}
	return s.complete(ctx, id, res, files, errText)
}

func (s *Store) complete(ctx context.Context, id string, res *experiments.Result, files []output.File, errText string) error {
	status, done, total := StatusDone, len(res.Points), len(res.Points)
	if res.Partial != nil {
		status, total = StatusPartial, res.Partial.PointsTotal
	}
	// Encode everything before taking the write lock, so the transaction
	// holds it only for the inserts.
	// The config the engine ran replaces the one submitted: the same
	// document, but where the run settled what the config could not (an
	// empirical server's mean, read from a trace file's column).
	var config []byte
	if res.Config != nil {
		config = res.Config.JSON()
	}
	shell := *res
	shell.Config, shell.Points = nil, nil
	head, err := json.Marshal(&shell)
	if err != nil {
		return fmt.Errorf("complete run %s: %w", id, err)
	}
	type pointRow struct {
		point  string
		series []byte
	}
	points := make([]pointRow, len(res.Points))
	for i := range res.Points {
		p := res.Points[i] // a copy: its series goes in the blob
		points[i].series = packSeries(&p.Series, p.Band)
		p.Series, p.Band = experiments.Series{}, nil
		data, err := json.Marshal(&p)
		if err != nil {
			return fmt.Errorf("complete run %s: point %d: %w", id, i, err)
		}
		points[i].point = string(data)
	}
	// The run list's values (summary.go), from the result at hand.
	summary := Summarize(res)
	sums, chunks := prepareFiles(files)
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkNotFinal(ctx, tx, id); err != nil {
			return err
		}
		pst, err := tx.PrepareContext(ctx, "INSERT INTO points (run_id, idx, limiter, point, series) VALUES (?, ?, ?, ?, ?)")
		if err != nil {
			return err
		}
		defer pst.Close()
		for i, p := range points {
			if _, err := pst.ExecContext(ctx, id, i, res.Points[i].Limiter, p.point, p.series); err != nil {
				return fmt.Errorf("point %d: %w", i, err)
			}
		}
		if err := insertFiles(ctx, tx, id, files, sums, chunks); err != nil {
			return err
		}
		if err := writeSummary(ctx, tx, id, &summary); err != nil {
			return fmt.Errorf("values: %w", err)
		}
		if _, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, finished_at = ?, points_done = ?, points_total = ?, result = ?,
			config = COALESCE(?, config) WHERE id = ?`, status, errText, time.Now().UTC().UnixNano(), done, total, string(head), config, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE runs SET stored_bytes = "+storedBytes+" WHERE id = ?", id)
		return err
	})
	if err != nil {
		return fmt.Errorf("complete run %s: %w", id, err)
	}
	return nil
}

// Result rebuilds a done (or partial) run's result from storage: equal to the one
// Complete stored (the same JSON, and reflect.DeepEqual for the engine's
// own fields), its Config decoded from the stored document. A run without
// results (not done) is ErrNotFound.
func (s *Store) Result(ctx context.Context, id string) (*experiments.Result, error) {
	res, err := s.result(ctx, id, true)
	if err != nil {
		return nil, fmt.Errorf("result of run %s: %w", id, err)
	}
	return res, nil
}

// Measures is Result without the points' series and bands (their blobs
// are not read): what a run's numbers and its answer to its objectives
// need (the API's run JSON).
func (s *Store) Measures(ctx context.Context, id string) (*experiments.Result, error) {
	res, err := s.result(ctx, id, false)
	if err != nil {
		return nil, fmt.Errorf("measures of run %s: %w", id, err)
	}
	return res, nil
}

func (s *Store) result(ctx context.Context, id string, withSeries bool) (*experiments.Result, error) {
	// One read transaction, so the run row and its points are one snapshot.
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var (
		status string
		config []byte
		head   sql.NullString
	)
	err = tx.QueryRowContext(ctx, "SELECT status, config, result FROM runs WHERE id = ?", id).Scan(&status, &config, &head)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if !HasResults(status) || !head.Valid {
		return nil, fmt.Errorf("%w: the run is %s, it has no results", ErrNotFound, status)
	}
	res := new(experiments.Result)
	if err := json.Unmarshal([]byte(head.String), res); err != nil {
		return nil, fmt.Errorf("stored result: %w", err)
	}
	if res.Config, err = document.DecodeConfig(config); err != nil {
		return nil, fmt.Errorf("stored config: %w", err)
	}
	query := "SELECT idx, point, series FROM points WHERE run_id = ? ORDER BY idx"
	if !withSeries {
		query = "SELECT idx, point, NULL FROM points WHERE run_id = ? ORDER BY idx"
	}
	rows, err := tx.QueryContext(ctx, query, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			idx   int
			point string
			blob  []byte
		)
		if err := rows.Scan(&idx, &point, &blob); err != nil {
			return nil, err
		}
		if idx != len(res.Points) {
			return nil, fmt.Errorf("stored points: point %d where %d was due", idx, len(res.Points))
		}
		res.Points = append(res.Points, experiments.Point{})
		p := &res.Points[idx]
		if err := json.Unmarshal([]byte(point), p); err != nil {
			return nil, fmt.Errorf("point %d: %w", idx, err)
		}
		if !withSeries {
			continue
		}
		if p.Series, p.Band, err = decodeSeriesBand(blob); err != nil {
			return nil, fmt.Errorf("point %d: %w", idx, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// tx runs fn in a write transaction (BEGIN IMMEDIATE via the DSN), one at
// a time in this process, and commits it, or rolls back when fn fails.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	select {
	case s.write <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.write }()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// prepareFiles is what storing files needs before its transaction: each
// file's sha256 and its chunks, deflated (out of the write lock).
func prepareFiles(files []output.File) (sums []string, chunks [][][]byte) {
	sums = make([]string, len(files))
	chunks = make([][][]byte, len(files))
	for i, f := range files {
		sums[i] = f.SHA256()
		chunks[i] = compressChunks(f.Data)
	}
	return sums, chunks
}

// checkNotFinal is ErrNotFound for no run id, ErrFinished for one that
// already ended: a run's results are stored once.
func checkNotFinal(ctx context.Context, tx *sql.Tx, id string) error {
	var now string
	if err := tx.QueryRowContext(ctx, "SELECT status FROM runs WHERE id = ?", id).Scan(&now); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		return err
	}
	if Final(now) {
		return fmt.Errorf("%w (%s)", ErrFinished, now)
	}
	return nil
}
