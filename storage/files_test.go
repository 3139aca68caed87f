package storage

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/migrations"
)

// pattern is n bytes that differ from chunk to chunk and within one, so a
// chunk out of place or twice shows.
func pattern(n int, salt byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+i/ChunkBytes) ^ salt
	}
	return b
}

// chunkSizes are file sizes around the chunk boundaries.
var chunkSizes = []int{0, 1, ChunkBytes - 1, ChunkBytes, ChunkBytes + 1, 3*ChunkBytes + 17}

func sizedFiles() []output.File {
	var files []output.File
	for i, n := range chunkSizes {
		files = append(files, output.File{Name: "f" + strconv.Itoa(n) + ".csv", Data: pattern(n, byte(i))})
	}
	return files
}

// readAll reads a stored file three ways: File, io.Copy (WriteTo) and a
// Read loop with a small odd buffer.
func readAll(t *testing.T, st *Store, id, name string) (whole, copied, small []byte) {
	t.Helper()
	f, err := st.File(t.Context(), id, name)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := st.OpenFile(t.Context(), id, name)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if n, err := io.Copy(&buf, fr); err != nil || n != int64(fr.Bytes) {
		t.Fatalf("%s: copied %d bytes, %v; want %d", name, n, err, fr.Bytes)
	}
	fr, err = st.OpenFile(t.Context(), id, name)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	p := make([]byte, 10007)
	for {
		n, err := fr.Read(p)
		out = append(out, p[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return f.Data, buf.Bytes(), out
}

// TestFilesStoredInChunks: files of every size around the chunk boundary
// read back byte for byte, whole, copied and read in small pieces, and are
// stored as ceil(size / ChunkBytes) chunks of at most ChunkBytes.
func TestFilesStoredInChunks(t *testing.T) {
	st, _ := openTemp(t)
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	res, _ := runConfig(t, cfg)
	files := sizedFiles()
	r := newRun(cfg)
	if err := st.Create(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	if err := st.Complete(t.Context(), r.ID, res, files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		whole, copied, small := readAll(t, st, r.ID, f.Name)
		for how, got := range map[string][]byte{"File": whole, "io.Copy": copied, "Read": small} {
			if !bytes.Equal(got, f.Data) {
				t.Errorf("%s (%d bytes) by %s: %d bytes, not the stored ones", f.Name, len(f.Data), how, len(got))
			}
		}
		var chunks, largest int
		if err := st.db.QueryRowContext(t.Context(), "SELECT count(*), coalesce(max(length(data)), 0) FROM file_chunks WHERE run_id = ? AND name = ?",
			r.ID, f.Name).Scan(&chunks, &largest); err != nil {
			t.Fatal(err)
		}
		if want := (len(f.Data) + ChunkBytes - 1) / ChunkBytes; chunks != want || largest > ChunkBytes {
			t.Errorf("%s: %d chunks, largest %d bytes; want %d of at most %d", f.Name, chunks, largest, want, ChunkBytes)
		}
	}
	if _, err := st.OpenFile(t.Context(), r.ID, "nosuch.csv"); !errors.Is(err, ErrNotFound) {
		t.Errorf("OpenFile of a missing file: %v, want ErrNotFound", err)
	}

	// A file whose run goes away while it is read ends in an error, not
	// in a short file that looks whole.
	big := files[len(files)-1]
	fr, err := st.OpenFile(t.Context(), r.ID, big.Name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fr.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(t.Context(), r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, fr); !errors.Is(err, errFileChanged) {
		t.Errorf("reading a deleted file: %v, want errFileChanged", err)
	}
	var left int
	st.db.QueryRowContext(t.Context(), "SELECT (SELECT count(*) FROM file_chunks) + (SELECT count(*) FROM files) + (SELECT count(*) FROM points)").Scan(&left)
	if left != 0 {
		t.Errorf("%d rows of files, chunks and points left after Delete", left)
	}
	if err := st.Delete(t.Context(), r.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
}

// completeV1 stores a done run the way Complete did under schema 0001:
// each file's bytes whole in files.data.
func completeV1(ctx context.Context, db *sql.DB, r *Run, res *experiments.Result, files []output.File) error {
	shell := *res
	shell.Config, shell.Points = nil, nil
	head, err := json.Marshal(&shell)
	if err != nil {
		return err
	}
	limiters, _ := json.Marshal(r.Limiters)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := time.Now().UTC().UnixNano()
	if _, err := tx.ExecContext(ctx, `INSERT INTO runs (id, name, created_at, status, points_done, points_total, config, seed, engine_version, limiters, finished_at, result)
		VALUES (?, ?, ?, 'done', ?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.Name, now, len(res.Points), len(res.Points), r.Config,
		strconv.FormatUint(r.Seed, 10), r.EngineVersion, string(limiters), now, string(head)); err != nil {
		return err
	}
	for i := range res.Points {
		p := res.Points[i]
		series := encodeSeries(&p.Series)
		p.Series = experiments.Series{}
		data, err := json.Marshal(&p)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO points (run_id, idx, limiter, point, series) VALUES (?, ?, ?, ?, ?)", r.ID, i, p.Limiter, string(data), series); err != nil {
			return err
		}
	}
	for i, f := range files {
		data := f.Data
		if data == nil {
			data = []byte{}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO files (run_id, ord, name, sha256, bytes, data) VALUES (?, ?, ?, ?, ?, ?)",
			r.ID, i, f.Name, f.SHA256(), len(f.Data), data); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// TestOldSchemaRunsSurviveChunking: runs stored under schema 0001 (files
// whole in one column) read back after Open applies the chunking
// migration: the same result, the same files byte for byte, sizes around
// every chunk boundary.
func TestOldSchemaRunsSurviveChunking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	v1, err := fs.ReadFile(migrations.FS, "0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := migrateFS(t.Context(), db, fstest.MapFS{"0001_init.sql": {Data: v1}}, nil); err != nil || n != 1 {
		t.Fatalf("schema 0001: %d, %v", n, err)
	}
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	res, postFiles := runConfig(t, cfg)
	type stored struct {
		run   *Run
		files []output.File
	}
	var runs []stored
	for _, files := range [][]output.File{postFiles, sizedFiles()} {
		r := newRun(cfg)
		r.ID = NewID()
		if err := completeV1(t.Context(), db, r, res, files); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, stored{r, files})
	}
	db.Close()

	st, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, _ := st.SchemaVersion(t.Context()); v < 2 {
		t.Fatalf("schema version %d after Open, want at least 2", v)
	}
	for _, s := range runs {
		back, err := st.Result(t.Context(), s.run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, res) {
			t.Errorf("run %s: result differs after the migration: %s", s.run.ID, resultDiff(back, res))
		}
		meta, err := st.Files(t.Context(), s.run.ID)
		if err != nil || len(meta) != len(s.files) {
			t.Fatalf("run %s: %d files, %v; want %d", s.run.ID, len(meta), err, len(s.files))
		}
		for i, f := range s.files {
			if meta[i].Name != f.Name || meta[i].SHA256 != f.SHA256() || meta[i].Bytes != len(f.Data) {
				t.Errorf("file %d: %+v, want %s %s %d", i, meta[i], f.Name, f.SHA256(), len(f.Data))
			}
			whole, copied, small := readAll(t, st, s.run.ID, f.Name)
			if !bytes.Equal(whole, f.Data) || !bytes.Equal(copied, f.Data) || !bytes.Equal(small, f.Data) {
				t.Errorf("run %s file %s (%d bytes) differs after the migration", s.run.ID, f.Name, len(f.Data))
			}
		}
	}
	// Version 3: the old runs keep their chunks as they were (codec ''),
	// have their size filled in, and a run may now end partial.
	for _, s := range runs {
		var codec string
		var size int64
		st.db.QueryRowContext(t.Context(), "SELECT (SELECT group_concat(DISTINCT codec) FROM files WHERE run_id = ?), stored_bytes FROM runs WHERE id = ?", s.run.ID, s.run.ID).Scan(&codec, &size)
		if codec != "" || size == 0 {
			t.Errorf("run %s after migration 3: codec %q, stored_bytes %d", s.run.ID, codec, size)
		}
	}
	if _, err := st.db.ExecContext(t.Context(), "UPDATE runs SET status = 'partial' WHERE id = ?", runs[0].run.ID); err != nil {
		t.Errorf("status partial after migration 3: %v", err)
	}
	if _, err := st.db.ExecContext(t.Context(), "UPDATE runs SET status = 'nonsense' WHERE id = ?", runs[0].run.ID); err == nil {
		t.Error("the status CHECK is gone after migration 3")
	}
	var check string
	if err := st.db.QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check after migration 3: %q %v", check, err)
	}
	// The whole bytes are gone from files: they live in chunks only.
	var col int
	if err := st.db.QueryRowContext(t.Context(), "SELECT count(*) FROM pragma_table_info('files') WHERE name = 'data'").Scan(&col); err != nil || col != 0 {
		t.Errorf("files still has a data column (%d, %v)", col, err)
	}
}

// TestBackupWhileWriting: Backup, while other goroutines store runs,
// writes a database that opens, passes integrity_check and holds every
// run that was done before it began, with the same files.
func TestBackupWhileWriting(t *testing.T) {
	st, _ := openTemp(t)
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	res, files := runConfig(t, cfg)
	complete := func() string {
		r := newRun(cfg)
		if err := st.Create(t.Context(), r); err != nil {
			t.Error(err)
			return ""
		}
		if err := st.Complete(t.Context(), r.ID, res, files); err != nil {
			t.Error(err)
		}
		return r.ID
	}
	var before []string
	for range 3 {
		before = append(before, complete())
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				complete()
			}
		}
	})
	dest := filepath.Join(t.TempDir(), "backup.db")
	err = st.Backup(t.Context(), dest)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Backup(t.Context(), dest); err == nil {
		t.Error("a backup over an existing database: no error")
	}

	b, err := Open(t.Context(), dest)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var check string
	if err := b.db.QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check of the backup: %q, %v", check, err)
	}
	runs, total, err := b.List(t.Context(), 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total < len(before) {
		t.Fatalf("backup holds %d runs, want at least %d", total, len(before))
	}
	for _, r := range runs {
		if r.Status != StatusDone {
			continue // a run created but not yet complete when the copy began
		}
		for _, f := range files {
			got, err := b.File(t.Context(), r.ID, f.Name)
			if err != nil || !bytes.Equal(got.Data, f.Data) {
				t.Fatalf("backup run %s file %s: %v", r.ID, f.Name, err)
			}
		}
	}
	for _, id := range before {
		if r, err := b.Get(t.Context(), id); err != nil || r.Status != StatusDone {
			t.Errorf("run %s in the backup: %v", id, err)
		}
	}
}
