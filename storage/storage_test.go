package storage

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/internal/seedlab"
	"github.com/ratelab/ratelab/migrations"
)

// multiClientConfig has two client groups, an ungrouped client and a
// per-client limiter, so points carry per-client results, Jain series and
// group shares.
const multiClientConfig = `{
  "version": 1,
  "name": "multi",
  "seed": 7,
  "workload": {
    "duration_ms": 3000,
    "parts": [
      {"type": "clients", "group": "light", "clients": 3, "rate_rps": 10, "arrival": "poisson"},
      {"type": "clients", "group": "heavy", "clients": 2, "rate_rps": 60, "arrival": "uniform"},
      {"type": "poisson", "client": "solo", "rate_rps": 15}
    ]
  },
  "server": {"workers": 2, "service_ms": 5, "deadline_ms": 100},
  "limiters": [
    {"type": "per-client-token-bucket", "rate_rps": 100, "burst": [6, 12]},
    {"type": "token-bucket", "rate_rps": [50, 100], "burst": 10}
  ]
}`

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lab.db")
	st, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

func runConfig(t *testing.T, cfg *experiments.Config) (*experiments.Result, []output.File) {
	t.Helper()
	res, err := sweep.Run(t.Context(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	return res, files
}

func newRun(cfg *experiments.Config) *Run {
	r := &Run{Name: cfg.Name, Config: cfg.JSON(), Seed: cfg.Seed, EngineVersion: experiments.EngineVersion, PointsTotal: len(cfg.Points())}
	for _, l := range cfg.Limiters {
		r.Limiters = append(r.Limiters, l.Label())
	}
	return r
}

func TestMigrateTwiceIsNoOp(t *testing.T) {
	st, path := openTemp(t)
	v, err := st.SchemaVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if want := ms[len(ms)-1].version; v != want {
		t.Fatalf("schema version %d after Open, want %d", v, want)
	}
	r := &Run{Name: "keep me", Config: []byte(`{}`)}
	if err := st.Create(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	schema := func(db *sql.DB) string {
		rows, err := db.QueryContext(t.Context(), "SELECT type, name, sql FROM sqlite_schema ORDER BY name")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b bytes.Buffer
		for rows.Next() {
			var typ, name string
			var text sql.NullString
			if err := rows.Scan(&typ, &name, &text); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %s %s\n", typ, name, text.String)
		}
		return b.String()
	}
	before := schema(st.db)
	if n, err := migrate(t.Context(), st.db); err != nil || n != 0 {
		t.Fatalf("second migrate on an open store: applied %d, err %v; want 0, nil", n, err)
	}
	st.Close()

	st2, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer st2.Close()
	if after := schema(st2.db); after != before {
		t.Errorf("schema changed by a second Open:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if v2, _ := st2.SchemaVersion(t.Context()); v2 != v {
		t.Errorf("schema version %d after reopen, want %d", v2, v)
	}
	got, err := st2.Get(t.Context(), r.ID)
	if err != nil || got.Name != "keep me" {
		t.Fatalf("run after reopen: %+v, %v", got, err)
	}
}

func TestMigrationsApplyInOrderOnce(t *testing.T) {
	db, err := sql.Open("sqlite", DSN(filepath.Join(t.TempDir(), "m.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fs := fstest.MapFS{
		"0002_b.sql": {Data: []byte("INSERT INTO t VALUES (2);")},
		"0001_a.sql": {Data: []byte("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")},
	}
	if n, err := migrateFS(t.Context(), db, fs, nil); err != nil || n != 2 {
		t.Fatalf("first migrate: %d, %v", n, err)
	}
	if n, err := migrateFS(t.Context(), db, fs, nil); err != nil || n != 0 {
		t.Fatalf("second migrate: %d, %v", n, err)
	}
	fs["0003_c.sql"] = &fstest.MapFile{Data: []byte("INSERT INTO t VALUES (3);")}
	if n, err := migrateFS(t.Context(), db, fs, nil); err != nil || n != 1 {
		t.Fatalf("third migrate: %d, %v", n, err)
	}
	var sum, count int
	if err := db.QueryRow("SELECT sum(x), count(*) FROM t").Scan(&sum, &count); err != nil {
		t.Fatal(err)
	}
	if sum != 6 || count != 3 {
		t.Errorf("rows sum %d count %d, want 6 and 3 (each migration once)", sum, count)
	}

	// A failing migration leaves neither its changes nor a new version.
	fs["0004_bad.sql"] = &fstest.MapFile{Data: []byte("INSERT INTO t VALUES (4); INSERT INTO nosuch VALUES (1);")}
	if _, err := migrateFS(t.Context(), db, fs, nil); err == nil {
		t.Fatal("bad migration: no error")
	}
	var v int
	db.QueryRow("PRAGMA user_version").Scan(&v)
	db.QueryRow("SELECT count(*) FROM t").Scan(&count)
	if v != 3 || count != 3 {
		t.Errorf("after a failed migration: version %d, %d rows; want 3 and 3", v, count)
	}

	// A database newer than the program is refused.
	delete(fs, "0004_bad.sql")
	delete(fs, "0003_c.sql")
	if _, err := migrateFS(t.Context(), db, fs, nil); err == nil {
		t.Error("database newer than the migrations: no error")
	}

	for _, name := range []string{"init.sql", "0_x.sql", "abc_x.sql"} {
		if _, err := loadMigrations(fstest.MapFS{name: {Data: []byte("SELECT 1;")}}); err == nil {
			t.Errorf("migration named %s: no error", name)
		}
	}
}

func TestCompletedRunReadsBackAfterReopen(t *testing.T) {
	multi, err := document.DecodeConfig([]byte(multiClientConfig))
	if err != nil {
		t.Fatal(err)
	}
	seed, err := presets.Config("token-vs-leaky")
	if err != nil {
		t.Fatal(err)
	}
	// The client model's series and a replicated point's band (format 4).
	replicated, err := document.DecodeConfig([]byte(`{"version": 1, "name": "replicated-clients", "seed": 3, "replications": 3,
  "workload": {"duration_ms": 2000, "parts": [{"type": "poisson", "rate_rps": 160, "timeout_ms": 60, "retries": 2, "backoff_ms": 20}]},
  "server": {"service_ms": 5}, "limiters": [{"type": "token-bucket", "rate_rps": 120, "burst": [5, 20]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []*experiments.Config{seed, multi, replicated} {
		t.Run(cfg.Name, func(t *testing.T) {
			st, path := openTemp(t)
			res, files := runConfig(t, cfg)
			if cfg == multi && (len(res.Groups) != 2 || res.Points[0].Clients == nil || res.Points[0].JainSeries == nil) {
				t.Fatalf("test config should have groups and per-client results: groups %v", res.Groups)
			}
			if cfg == replicated && (res.Points[0].Series.Goodput == nil || res.Points[0].Band == nil || res.Points[0].Band.Attempts.Sum == nil) {
				t.Fatalf("test config should have client series and a band: %+v", res.Points[0].Band)
			}
			r := newRun(cfg)
			if err := st.Create(t.Context(), r); err != nil {
				t.Fatal(err)
			}
			if err := st.SetStatus(t.Context(), r.ID, StatusRunning); err != nil {
				t.Fatal(err)
			}
			if err := st.Complete(t.Context(), r.ID, res, files); err != nil {
				t.Fatal(err)
			}
			st.Close()

			st2, err := Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer st2.Close()
			got, err := st2.Get(t.Context(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != StatusDone || got.PointsDone != len(res.Points) || got.PointsTotal != len(res.Points) || got.FinishedAt == nil {
				t.Errorf("run after reopen: status %s, %d/%d points, finished %v", got.Status, got.PointsDone, got.PointsTotal, got.FinishedAt)
			}
			if !bytes.Equal(got.Config, cfg.JSON()) || got.Seed != cfg.Seed || !reflect.DeepEqual(got.Limiters, r.Limiters) {
				t.Errorf("run fields changed: seed %d, limiters %v", got.Seed, got.Limiters)
			}
			if !got.CreatedAt.Equal(r.CreatedAt) || got.CreatedAt.Location() != time.UTC {
				t.Errorf("created %v, want %v in UTC", got.CreatedAt, r.CreatedAt)
			}

			back, err := st2.Result(t.Context(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, res) {
				t.Fatalf("result read back differs: %s", resultDiff(back, res))
			}
			// The rebuilt result writes the same bytes, group shares included.
			again, err := output.Files(back)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(again, files) {
				t.Error("output.Files of the rebuilt result differs from the original")
			}

			meta, err := st2.Files(t.Context(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(meta) != len(files) {
				t.Fatalf("%d files stored, want %d", len(meta), len(files))
			}
			for i, f := range files {
				m := meta[i]
				if m.Name != f.Name || m.SHA256 != f.SHA256() || m.Bytes != len(f.Data) || m.Data != nil {
					t.Errorf("file %d metadata %s %s %d (data %v), want %s %s %d", i, m.Name, m.SHA256, m.Bytes, m.Data != nil, f.Name, f.SHA256(), len(f.Data))
				}
				full, err := st2.File(t.Context(), r.ID, f.Name)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(full.Data, f.Data) || full.SHA256 != f.SHA256() {
					t.Errorf("file %s bytes differ after reopen", f.Name)
				}
			}
			if meta[len(meta)-1].Name != experiments.FileManifest {
				t.Errorf("last file %s, want the manifest", meta[len(meta)-1].Name)
			}
			if _, err := st2.File(t.Context(), r.ID, "nosuch.csv"); !errors.Is(err, ErrNotFound) {
				t.Errorf("missing file: %v, want ErrNotFound", err)
			}
			// Done is final.
			if err := st2.Complete(t.Context(), r.ID, res, files); !errors.Is(err, ErrFinished) {
				t.Errorf("second Complete: %v, want ErrFinished", err)
			}
			if err := st2.Finish(t.Context(), r.ID, StatusFailed, "x"); !errors.Is(err, ErrFinished) {
				t.Errorf("Finish after done: %v, want ErrFinished", err)
			}
		})
	}
}

func TestPost3PresetFileHash(t *testing.T) {
	st, _ := openTemp(t)
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
	f, err := st.File(t.Context(), r.ID, seedlab.Post3BurstSweepFile)
	if err != nil {
		t.Fatal(err)
	}
	// The seed lab's published sha256 (internal/seedlab): the external
	// contract, it stays a sha256, not a golden file.
	const want = seedlab.Post3BurstSweepSHA256
	if f.SHA256 != want || (output.File{Data: f.Data}).SHA256() != want {
		t.Errorf("bp-post3-burst-sweep.csv sha256 %s, want %s", f.SHA256, want)
	}
}

func TestKilledRunComesBackInterrupted(t *testing.T) {
	st, path := openTemp(t)
	running := &Run{Name: "running", Config: []byte(`{}`), PointsTotal: 20}
	queued := &Run{Name: "queued", Config: []byte(`{}`)}
	failed := &Run{Name: "failed", Config: []byte(`{}`)}
	for _, r := range []*Run{running, queued, failed} {
		if err := st.Create(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetStatus(t.Context(), running.ID, StatusRunning); err != nil {
		t.Fatal(err)
	}
	if err := st.SetProgress(t.Context(), running.ID, 7, 20); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(t.Context(), failed.ID, StatusFailed, "boom"); err != nil {
		t.Fatal(err)
	}
	st.Close() // the process dies: nobody finishes the running run

	st2, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	n, err := st2.MarkInterrupted(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("MarkInterrupted: %d, %v; want 1 (the queued run stays queued)", n, err)
	}
	if q, err := st2.Queued(t.Context()); err != nil || len(q) != 1 || q[0].ID != queued.ID || string(q[0].Config) != "{}" {
		t.Errorf("Queued: %+v, %v; want the queued run with its config", q, err)
	}
	for _, c := range []struct {
		r      *Run
		status string
		errMsg string
	}{{running, StatusInterrupted, InterruptedError}, {queued, StatusQueued, ""}, {failed, StatusFailed, "boom"}} {
		got, err := st2.Get(t.Context(), c.r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != c.status || got.Error != c.errMsg || (got.FinishedAt == nil) != (c.status == StatusQueued) {
			t.Errorf("%s: status %s error %q finished %v; want %s %q", c.r.Name, got.Status, got.Error, got.FinishedAt, c.status, c.errMsg)
		}
	}
	got, _ := st2.Get(t.Context(), running.ID)
	if got.PointsDone != 7 || got.PointsTotal != 20 {
		t.Errorf("progress %d/%d, want 7/20 kept", got.PointsDone, got.PointsTotal)
	}
	if _, err := st2.Result(t.Context(), running.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Result of an interrupted run: %v, want ErrNotFound", err)
	}
	if n, err := st2.MarkInterrupted(t.Context()); err != nil || n != 0 {
		t.Errorf("second MarkInterrupted: %d, %v; want 0", n, err)
	}
}

func TestConcurrentWritesDoNotBusy(t *testing.T) {
	st, _ := openTemp(t)
	ctx := t.Context()
	const writers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*3)
	for range writers {
		wg.Go(func() {
			for range each {
				r := &Run{Name: "w", Config: []byte(`{}`), PointsTotal: 3}
				if err := st.Create(ctx, r); err != nil {
					errs <- err
					continue
				}
				if err := st.SetStatus(ctx, r.ID, StatusRunning); err != nil {
					errs <- err
				}
				for d := 1; d <= 3; d++ {
					if err := st.SetProgress(ctx, r.ID, d, 3); err != nil {
						errs <- err
					}
				}
				if _, _, err := st.List(ctx, 10, 0); err != nil {
					errs <- err
				}
				if err := st.Finish(ctx, r.ID, StatusCancelled, ""); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	runs, total, err := st.List(ctx, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != writers*each || len(runs) != total {
		t.Fatalf("%d runs (%d listed), want %d", total, len(runs), writers*each)
	}
	for _, r := range runs {
		if r.Status != StatusCancelled || r.PointsDone != 3 {
			t.Fatalf("run %s: %s %d/%d", r.ID, r.Status, r.PointsDone, r.PointsTotal)
		}
	}
}

func TestListNewestFirstAndPaged(t *testing.T) {
	st, _ := openTemp(t)
	var ids []string
	for i := range 5 {
		r := &Run{Name: fmt.Sprint("run", i), Config: []byte(`{"x":1}`), Limiters: []string{"a", "b"}}
		if err := st.Create(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	page, total, err := st.List(t.Context(), 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if total != 5 || len(page) != 2 || page[0].ID != ids[3] || page[1].ID != ids[2] {
		t.Fatalf("page: total %d, %v; want ids %s %s", total, page, ids[3], ids[2])
	}
	if page[0].Config != nil || !reflect.DeepEqual(page[0].Limiters, []string{"a", "b"}) {
		t.Errorf("listed run: config %q limiters %v", page[0].Config, page[0].Limiters)
	}
	empty, total, err := st.List(t.Context(), 10, 10)
	if err != nil || total != 5 || len(empty) != 0 {
		t.Errorf("page past the end: %v, %d, %v", empty, total, err)
	}
}

func TestCreateAndGet(t *testing.T) {
	st, _ := openTemp(t)
	ctx := t.Context()
	orig := &Run{Name: "orig", Config: []byte(`{"a":1}`), Seed: 1<<64 - 1, EngineVersion: "1.0.0", Limiters: []string{"token-bucket"}}
	if err := st.Create(ctx, orig); err != nil {
		t.Fatal(err)
	}
	if !ValidID(orig.ID) || orig.Status != StatusQueued || orig.CreatedAt.IsZero() {
		t.Fatalf("created run: id %q status %s created %v", orig.ID, orig.Status, orig.CreatedAt)
	}
	got, err := st.Get(ctx, orig.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seed != 1<<64-1 {
		t.Errorf("seed %d, want max uint64", got.Seed)
	}
	want := *orig
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("Get: %+v\nwant %+v", got, &want)
	}
	rerun := &Run{Name: "again", Config: orig.Config, RerunOf: orig.ID}
	if err := st.Create(ctx, rerun); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Get(ctx, rerun.ID); got.RerunOf != orig.ID {
		t.Errorf("rerun_of %q, want %q", got.RerunOf, orig.ID)
	}
	if err := st.Create(ctx, &Run{Config: []byte(`{}`), RerunOf: "nosuchrunxxx"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("re-run of a missing run: %v, want ErrNotFound", err)
	}
	if _, err := st.Get(ctx, "nosuchrunxxx"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get missing: %v, want ErrNotFound", err)
	}
	if _, err := st.Files(ctx, "nosuchrunxxx"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Files missing: %v, want ErrNotFound", err)
	}
	if files, err := st.Files(ctx, orig.ID); err != nil || len(files) != 0 {
		t.Errorf("Files of a queued run: %v, %v; want none", files, err)
	}
	if err := st.SetProgress(ctx, "nosuchrunxxx", 1, 2); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetProgress missing: %v, want ErrNotFound", err)
	}
	if err := st.SetStatus(ctx, orig.ID, StatusDone); err == nil {
		t.Error("SetStatus done: no error (only Complete makes a run done)")
	}
	if err := st.Finish(ctx, orig.ID, StatusCancelled, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(ctx, orig.ID, StatusFailed, "late"); !errors.Is(err, ErrFinished) {
		t.Errorf("second Finish: %v, want ErrFinished", err)
	}
	if err := st.SetProgress(ctx, orig.ID, 1, 2); !errors.Is(err, ErrFinished) {
		t.Errorf("SetProgress after the end: %v, want ErrFinished", err)
	}
}

func TestIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if !ValidID(id) {
			t.Fatalf("NewID %q is not ValidID", id)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "abc", "ABCDEFGHIJKL", "abcdefghijk1", "abcdefghijk/", "abcdefghijklm"} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

func TestSeriesRoundTrip(t *testing.T) {
	for _, s := range []experiments.Series{
		{},
		{Offered: []int32{}, Released: []int32{0}, Rejected: nil, InSystemMax: []int32{1 << 30, -5, 0, 127, 128}},
		{Offered: []int32{3, 1, 4, 1, 5, 9, 2, 6}, Released: []int32{2147483647, -2147483648}, Rejected: []int32{0, 0}, InSystemMax: []int32{1}},
	} {
		b := encodeSeries(&s)
		got, err := decodeSeries(b)
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip %+v -> %+v", s, got)
		}
		for cut := range len(b) {
			if _, err := decodeSeries(b[:cut]); err == nil {
				t.Errorf("%+v cut to %d bytes: no error", s, cut)
			}
		}
		packed := packSeries(&s, nil)
		if packed[0] != seriesFormatDeflate {
			t.Errorf("packed blob of format %d", packed[0])
		}
		if got, err := decodeSeries(packed); err != nil || !reflect.DeepEqual(got, s) {
			t.Errorf("packed round trip %+v -> %+v, %v", s, got, err)
		}
		for cut := range len(packed) {
			if _, err := decodeSeries(packed[:cut]); err == nil {
				t.Errorf("%+v packed, cut to %d bytes: no error", s, cut)
			}
		}
	}
}

func FuzzDecodeSeries(f *testing.F) {
	f.Add(encodeSeries(&experiments.Series{Offered: []int32{1, 2, 300}, Released: []int32{}}))
	f.Add([]byte{seriesFormat, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add(encodeSeriesBand(&experiments.Series{Goodput: []int32{1}}, &experiments.SeriesBand{Runs: 2, Offered: experiments.WindowSums{Sum: []int64{4}, SumSq: []int64{10}}}))
	f.Add(packSeries(&experiments.Series{Offered: []int32{1, 2, 300}, Released: []int32{}}, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, band, err := decodeSeriesBand(b)
		if err != nil {
			return
		}
		if band != nil {
			for _, w := range band.Lists() {
				for k := range w.Windows() {
					w.At(k, band.Runs) // what the run page reads must not panic
				}
			}
		}
		if b[0] == seriesFormatDeflate {
			return // the deflated forms of one blob are many
		}
		if again := encodeSeriesBand(&s, band); !bytes.Equal(again, b) {
			// Varints have one shortest form, but decoding accepts padded
			// ones: then the re-encoding must decode to the same series.
			s2, band2, err := decodeSeriesBand(again)
			if err != nil || !reflect.DeepEqual(s, s2) || !reflect.DeepEqual(band, band2) {
				t.Fatalf("re-encoding of a decoded blob does not round-trip: %v", err)
			}
		}
	})
}

func TestOpenCreatesFileAndRejectsBadPaths(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Characters that mean something in a SQLite URI are escaped.
	path := filepath.Join(dir, "odd ?#%name.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, &Run{Config: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	_, total, err := st.List(ctx, 1, 0)
	st.Close()
	if err != nil || total != 1 {
		t.Errorf("reopened %q: %d runs, %v", path, total, err)
	}
	if _, err := Open(ctx, filepath.Join(dir, "missing-dir", "x.db")); err == nil {
		t.Error("Open in a missing directory: no error")
	}
}

// resultDiff names the first part of two results that differs.
func resultDiff(got, want *experiments.Result) string {
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch {
	case !reflect.DeepEqual(got.Config, want.Config):
		return fmt.Sprintf("config\n got %s\nwant %s", js(got.Config), js(want.Config))
	case got.Arrivals != want.Arrivals:
		return fmt.Sprintf("arrivals %d, want %d", got.Arrivals, want.Arrivals)
	case !reflect.DeepEqual(got.Clients, want.Clients):
		return fmt.Sprintf("clients %+v, want %+v", got.Clients, want.Clients)
	case !reflect.DeepEqual(got.Groups, want.Groups):
		return fmt.Sprintf("groups %#v, want %#v", got.Groups, want.Groups)
	case len(got.Points) != len(want.Points):
		return fmt.Sprintf("%d points, want %d", len(got.Points), len(want.Points))
	}
	if len(got.Replicas) != len(want.Replicas) {
		return fmt.Sprintf("%d replicas, want %d", len(got.Replicas), len(want.Replicas))
	}
	for i := range got.Replicas {
		if g, w := got.Replicas[i], want.Replicas[i]; !reflect.DeepEqual(g, w) {
			return fmt.Sprintf("replica %d\n got %s\nwant %s", i, js(g), js(w))
		}
	}
	for i := range got.Points {
		g, w := got.Points[i], want.Points[i]
		if !reflect.DeepEqual(g, w) {
			g.Series, w.Series = experiments.Series{}, experiments.Series{}
			return fmt.Sprintf("point %d (series equal: %v)\n got %s\nwant %s", i, reflect.DeepEqual(got.Points[i].Series, want.Points[i].Series), js(g), js(w))
		}
	}
	return "no difference found"
}

// Two stores on one file stand for two processes: their writers meet in
// SQLite's lock, where the busy timeout makes them wait.
func TestTwoStoresOneFile(t *testing.T) {
	a, path := openTemp(t)
	b, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for _, st := range []*Store{a, b, a, b} {
		wg.Go(func() {
			for range 10 {
				r := &Run{Config: []byte(`{}`)}
				if err := st.Create(t.Context(), r); err != nil {
					errs <- err
					continue
				}
				if err := st.SetProgress(t.Context(), r.ID, 1, 2); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, total, err := b.List(t.Context(), 1, 0); err != nil || total != 40 {
		t.Errorf("%d runs, %v; want 40", total, err)
	}
}

func TestConnectionPragmas(t *testing.T) {
	st, _ := openTemp(t)
	for _, c := range []struct {
		pragma string
		want   string
	}{{"journal_mode", "wal"}, {"synchronous", "1"}, {"busy_timeout", "5000"}, {"foreign_keys", "1"}} {
		var got string
		if err := st.db.QueryRowContext(t.Context(), "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("PRAGMA %s = %s, want %s", c.pragma, got, c.want)
		}
	}
	// Foreign keys are enforced: a point of no run is refused.
	_, err := st.db.ExecContext(t.Context(), "INSERT INTO points (run_id, idx, limiter, point, series) VALUES ('nosuchrunxxx', 0, '', '{}', x'01')")
	if err == nil {
		t.Error("point of a missing run stored: foreign keys are off")
	}
}
