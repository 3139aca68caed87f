package storage

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/migrations"
)

// TestKeepStoresPartial: a partial result is stored by Keep (not
// Complete) with status partial, k of n points and its error text, reads
// back equal, and lists with the run's size in the database.
func TestKeepStoresPartial(t *testing.T) {
	st := open(t)
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	res, err := sweep.Run(ctx, cfg, sweep.Options{Workers: 1, Progress: func(done, _ int) {
		if done == 4 {
			cancel()
		}
	}})
	cancel()
	if !errors.Is(err, context.Canceled) || res == nil || res.Partial == nil {
		t.Fatalf("no partial result: %v", err)
	}
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(cfg)
	if err := st.Create(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	if err := st.Complete(t.Context(), r.ID, res, files); err == nil {
		t.Fatal("Complete took a partial result")
	}
	if err := st.Keep(t.Context(), r.ID, res, files, "cancelled after 4"); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusPartial || got.PointsDone != len(res.Points) || got.PointsTotal != res.Partial.PointsTotal || got.Error != "cancelled after 4" || !Final(got.Status) {
		t.Errorf("stored %+v", got)
	}
	var want int64
	st.db.QueryRow("SELECT "+storedBytes+" FROM runs WHERE id = ?", r.ID).Scan(&want)
	if got.StoredBytes != want || want < 1000 {
		t.Errorf("stored_bytes %d, want %d", got.StoredBytes, want)
	}
	back, err := st.Result(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, res) {
		t.Errorf("partial result differs: %s", resultDiff(back, res))
	}
	whole, _, _ := readAll(t, st, r.ID, files[0].Name)
	if !bytes.Equal(whole, files[0].Data) {
		t.Error("a partial run's file differs")
	}
	runs, _, err := st.ListBy(t.Context(), ListQuery{Status: StatusPartial}, 10, 0)
	if err != nil || len(runs) != 1 || runs[0].StoredBytes != want {
		t.Errorf("list of partial runs: %v %+v", err, runs)
	}
	if err := st.Keep(t.Context(), r.ID, res, files, "again"); !errors.Is(err, ErrFinished) {
		t.Errorf("second Keep: %v", err)
	}
}

// TestStoredCompressed: files and series are stored deflated: much
// smaller than their bytes, and read back the same.
func TestStoredCompressed(t *testing.T) {
	st := open(t)
	cfg, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	res, files := runConfig(t, cfg)
	r := newRun(cfg)
	if err := st.Create(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	if err := st.Complete(t.Context(), r.ID, res, files); err != nil {
		t.Fatal(err)
	}
	raw := 0
	for _, f := range files {
		raw += len(f.Data)
	}
	var chunks int
	var codecs string
	st.db.QueryRow("SELECT sum(length(data)) FROM file_chunks WHERE run_id = ?", r.ID).Scan(&chunks)
	st.db.QueryRow("SELECT group_concat(DISTINCT codec) FROM files WHERE run_id = ?", r.ID).Scan(&codecs)
	if codecs != codecDeflate || chunks*3 > raw {
		t.Errorf("files: %d bytes stored for %d (codecs %q)", chunks, raw, codecs)
	}
	var format int
	st.db.QueryRow("SELECT min(unicode(substr(series, 1, 1))) FROM points WHERE run_id = ?", r.ID).Scan(&format)
	if format != seriesFormatDeflate {
		t.Errorf("series blobs of format %d", format)
	}
	back, err := st.Result(t.Context(), r.ID)
	if err != nil || !reflect.DeepEqual(back, res) {
		t.Fatalf("read back: %v", err)
	}
}

func open(t *testing.T) *Store {
	t.Helper()
	st, err := Open(t.Context(), filepath.Join(t.TempDir(), "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestMigration3FailsWhole: a migration 3 that fails half way (here its
// Go step, after its SQL) leaves the database at version 2 with every run
// readable, as a crash in it would; the next Open applies it.
func TestMigration3FailsWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	v2 := fstest.MapFS{}
	for _, name := range []string{"0001_init.sql", "0002_file_chunks.sql"} {
		data, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		v2[name] = &fstest.MapFile{Data: data}
	}
	if _, err := migrateFS(t.Context(), db, v2, goSteps()); err != nil {
		t.Fatal(err)
	}
	cfg, _ := presets.Config("token-vs-leaky")
	res, _ := runConfig(t, cfg)
	r := newRun(cfg)
	r.ID = NewID()
	if err := completeV1(t.Context(), db, r, res, nil); err != nil {
		t.Fatal(err)
	}
	crash := errors.New("crash")
	steps := goSteps()
	steps[3] = func(context.Context, *sql.Tx) error { return crash }
	if _, err := migrateFS(t.Context(), db, migrations.FS, steps); !errors.Is(err, crash) {
		t.Fatalf("migration 3: %v, want the crash", err)
	}
	var v, codec int
	db.QueryRow("PRAGMA user_version").Scan(&v)
	db.QueryRow("SELECT count(*) FROM pragma_table_info('files') WHERE name = 'codec'").Scan(&codec)
	if v != 2 || codec != 0 {
		t.Fatalf("after the failed migration: version %d, codec column %d; want 2 and none", v, codec)
	}
	db.Close()
	st, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	back, err := st.Result(t.Context(), r.ID)
	if err != nil || !reflect.DeepEqual(back, res) {
		t.Fatalf("the run after migration 3: %v", err)
	}
}
