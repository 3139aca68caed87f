package storage

import (
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/migrations"
	"github.com/ratelab/ratelab/storage/runquery"
)

// objectivesDoc: offered 50 rps; only token-bucket rate_rps=40 meets both
// objectives, while without them "none" and rate_rps=60 serve the most.
const objectivesDoc = `{"version":1,"seed":1,"name":"with objectives",
 "workload":{"duration_ms":4000,"parts":[{"type":"constant","rate_rps":50}]},
 "server":{"workers":1,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[20,40,60],"burst":2},{"type":"none"}],
 "objectives":[{"metric":"reject_pct","op":"<=","value":30},{"metric":"admitted_rps","op":"<=","value":45}]}`

// plainDoc has no objectives: its best point is the highest goodput.
const plainDoc = `{"version":1,"seed":1,"name":"plain",
 "workload":{"duration_ms":4000,"parts":[{"type":"constant","rate_rps":200}]},
 "server":{"workers":4,"service_ms":10},
 "limiters":[{"type":"token-bucket","rate_rps":[50,150,100],"burst":5}]}`

func decodeDoc(t *testing.T, doc string) *experiments.Config {
	t.Helper()
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// storeDone runs doc and stores it done in st; it returns the run and its
// result.
func storeDone(t *testing.T, st *Store, doc string) (*Run, *experiments.Result) {
	t.Helper()
	cfg := decodeDoc(t, doc)
	res, files := runConfig(t, cfg)
	r := newRun(cfg)
	if err := st.Create(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	if err := st.Complete(t.Context(), r.ID, res, files); err != nil {
		t.Fatal(err)
	}
	return r, res
}

func valueOf(t *testing.T, st *Store, id, key string) Value {
	t.Helper()
	vs, err := st.Values(t.Context(), []string{id}, []string{key})
	if err != nil {
		t.Fatal(err)
	}
	v, ok := vs[id][key]
	if !ok {
		t.Fatalf("run %s has no value %s", id, key)
	}
	return v
}

// TestSummaryPicksTheAnswerOrTheBestPoint: a run with objectives has its
// best overall setting's values (the point the run page opens on), one
// without has its best point's (highest goodput); Complete stores them.
func TestSummaryPicksTheAnswerOrTheBestPoint(t *testing.T) {
	st, _ := openTemp(t)
	withObj, res := storeDone(t, st, objectivesDoc)
	a := decide.Decide(res)
	if a == nil || a.Best < 0 || a.Feasible == 0 {
		t.Fatalf("the config's answer: %+v", a)
	}
	sum := Summarize(res)
	if want := a.Settings[a.Best].Point(-1); sum.Point != want || sum.Basis != BasisAnswer {
		t.Fatalf("summary point %d (%s), want the answer's %d", sum.Point, sum.Basis, want)
	}
	if bp := BestPoint(res); bp == sum.Point {
		t.Fatalf("the test needs the best point (%d) to differ from the answer's", bp)
	}
	if v := valueOf(t, st, withObj.ID, "rate_rps"); v.Num != 40 || v.Kind != ValueParam || v.Text != "40.0" {
		t.Errorf("rate_rps of the answer: %+v, want 40 (param)", v)
	}
	want, _ := experiments.ColumnByKey("goodput_rps").Value(&res.Points[sum.Point])
	if v := valueOf(t, st, withObj.ID, "goodput_rps"); v.Num != want || v.Kind != ValueMetric {
		t.Errorf("goodput_rps: %+v, want %v (metric)", v, want)
	}
	if v := valueOf(t, st, withObj.ID, "type"); v.Text != "token-bucket" || v.HasNum {
		t.Errorf("type: %+v", v)
	}
	if v := valueOf(t, st, withObj.ID, "meets_all"); v.Text != "true" || v.Kind != ValueMetric {
		t.Errorf("meets_all: %+v", v)
	}
	if v := valueOf(t, st, withObj.ID, "pass_reject_pct_le_30"); v.Text != "true" {
		t.Errorf("pass_reject_pct_le_30: %+v", v)
	}

	plain, res2 := storeDone(t, st, plainDoc)
	sum2 := Summarize(res2)
	if sum2.Basis != BasisBestPoint || sum2.Point != 1 {
		t.Fatalf("plain run: point %d (%s), want the best point 1 (rate_rps=150)", sum2.Point, sum2.Basis)
	}
	if v := valueOf(t, st, plain.ID, "rate_rps"); v.Num != 150 {
		t.Errorf("rate_rps of the best point: %+v", v)
	}
	sums, err := st.Summaries(t.Context(), []string{withObj.ID, plain.ID})
	if err != nil || sums[withObj.ID].Basis != BasisAnswer || sums[plain.ID].Point != 1 {
		t.Errorf("stored summaries: %+v, %v", sums, err)
	}
	cols, err := st.ValueColumns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(cols))
	for i, c := range cols {
		keys[i] = c.Key
	}
	if i, j := slices.Index(keys, "rate_rps"), slices.Index(keys, "goodput_rps"); i < 0 || j < 0 || i > j || cols[i].Kind != ValueParam {
		t.Errorf("value columns (params first): %v", keys)
	}
}

// TestBestPointTies: equal goodput goes to the lower sojourn p99, then to
// the earlier point.
func TestBestPointTies(t *testing.T) {
	pt := func(g, s float64) experiments.Point {
		var p experiments.Point
		p.Metrics.GoodputRPS = g
		p.Metrics.Sojourn.P99 = int(s)
		return p
	}
	for _, tc := range []struct {
		points []experiments.Point
		want   int
	}{
		{nil, -1},
		{[]experiments.Point{pt(10, 5), pt(20, 50), pt(15, 1)}, 1},
		{[]experiments.Point{pt(20, 9), pt(20, 5), pt(20, 5)}, 1},
	} {
		if got := BestPoint(&experiments.Result{Points: tc.points}); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.points, got, tc.want)
		}
	}
}

func listNames(t *testing.T, st *Store, q ListQuery) []string {
	t.Helper()
	runs, _, err := st.ListBy(t.Context(), q, 50, 0)
	if err != nil {
		t.Fatalf("%+v: %v", q, err)
	}
	var out []string
	for _, r := range runs {
		out = append(out, r.Name)
	}
	return out
}

// TestListByQuery: the query filters by values, run fields and tags,
// sorts by a value, and names what it cannot read with its position.
func TestListByQuery(t *testing.T) {
	st, _ := openTemp(t)
	ctx := t.Context()
	withObj, _ := storeDone(t, st, objectivesDoc)
	plain, _ := storeDone(t, st, plainDoc)
	queued := &Run{Name: "queued one", Config: []byte(`{}`)}
	if err := st.Create(ctx, queued); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLabels(ctx, withObj.ID, []string{"Baseline", "canary", "baseline"}, "  first try  "); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLabels(ctx, queued.ID, []string{"canary"}, ""); err != nil {
		t.Fatal(err)
	}
	tags, note, err := st.Labels(ctx, withObj.ID)
	if err != nil || !slices.Equal(tags, []string{"baseline", "canary"}) || note != "first try" {
		t.Fatalf("labels: %v %q %v", tags, note, err)
	}
	for _, tc := range []struct {
		q    ListQuery
		want []string
	}{
		{ListQuery{Query: "goodput_rps > 100"}, []string{"plain"}},
		{ListQuery{Query: "goodput_rps > 10 and limiter = token-bucket", Sort: "name", Asc: true}, []string{"plain", "with objectives"}},
		{ListQuery{Query: "rate_rps = 40"}, []string{"with objectives"}},
		{ListQuery{Query: "meets_all = true"}, []string{"with objectives"}},
		{ListQuery{Query: "type = TOKEN-BUCKET and not rate_rps >= 100"}, []string{"with objectives"}},
		{ListQuery{Query: "tag = canary", Sort: "name", Asc: true}, []string{"queued one", "with objectives"}},
		{ListQuery{Query: "tag != canary"}, []string{"plain"}},
		{ListQuery{Query: "tag = canary and (status = queued or goodput_rps < 1000)", Sort: "name", Asc: true}, []string{"queued one", "with objectives"}},
		{ListQuery{Query: `note ~ "FIRST"`}, []string{"with objectives"}},
		{ListQuery{Tags: []string{"canary", "baseline"}}, []string{"with objectives"}},
		{ListQuery{Query: "points >= 4", Sort: "name", Asc: true}, []string{"with objectives"}},
		{ListQuery{Query: "created > 2000-01-01 and created < 2200-01-01", Sort: "name", Asc: true}, []string{"plain", "queued one", "with objectives"}},
		{ListQuery{Query: "queued"}, []string{"queued one"}},
		{ListQuery{Sort: "goodput_rps"}, []string{"plain", "with objectives", "queued one"}},
		{ListQuery{Sort: "goodput_rps", Asc: true}, []string{"with objectives", "plain", "queued one"}},
	} {
		if got := listNames(t, st, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.q, got, tc.want)
		}
	}
	_ = plain
	for _, tc := range []struct{ query, want string }{
		{"goodptu_rps > 150", "unknown column `goodptu_rps` at 1; did you mean goodput_rps?"},
		{"goodput_rps > 150 and limter = gcra", "unknown column `limter` at 23; did you mean limiter?"},
		{"created < 3000-01-01", `"3000-01-01" is out of range: a date from 1970 to 2200 at 11`},
		{"goodput_rps > fast", `> compares numbers; "fast" is not one (text takes =, != or ~) at 15`},
		{"points = many", `points is a number; "many" is not one at 10`},
		{"created = 2026-01-01", "created takes <, <=, > or >= with a date (2026-12-01, 2026-12-01T15:04:05Z), not = at 9"},
		{"status = finished", `status "finished" is not one of queued, running, done, failed, cancelled, interrupted, partial at 10`},
		{"goodput_rps > 150 and", "expected a column, not the end at 22"},
		{"(goodput_rps > 1", "a ( that is not closed at 1"},
		{`name = "open`, "a quote \" that is not closed at 8"},
	} {
		_, _, err := st.ListBy(ctx, ListQuery{Query: tc.query}, 10, 0)
		var qe *runquery.Error
		if !errors.As(err, &qe) || err.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.query, err, tc.want)
		}
	}
}

// TestQueryIsNoInjection: names and values are bound parameters: text
// that would be SQL matches nothing and changes nothing.
func TestQueryIsNoInjection(t *testing.T) {
	st, _ := openTemp(t)
	ctx := t.Context()
	storeDone(t, st, plainDoc)
	for _, q := range []string{
		`name = "x' OR '1'='1"`,
		`name = "x\" OR 1=1 --"`,
		`limiter = "token-bucket') OR 1=1; DROP TABLE runs; --"`,
		`tag = "x') OR 1=1 --"`,
		`name ~ "%' OR '1'='1"`,
	} {
		if got := listNames(t, st, ListQuery{Query: q}); len(got) != 0 {
			t.Errorf("%s: %v, want nothing", q, got)
		}
	}
	for _, q := range []string{"`goodput_rps) OR 1=1 --` > 0", "`x; DROP TABLE runs` = 1"} {
		var qe *runquery.Error
		if _, _, err := st.ListBy(ctx, ListQuery{Query: q}, 10, 0); !errors.As(err, &qe) || !strings.HasPrefix(qe.Msg, "unknown column") {
			t.Errorf("%s: %v, want an unknown column", q, err)
		}
	}
	if _, _, err := st.ListBy(ctx, ListQuery{Sort: "goodput_rps DESC; DROP TABLE runs"}, 10, 0); !errors.Is(err, ErrBadQuery) {
		t.Errorf("a sort that is SQL: %v", err)
	}
	if got := listNames(t, st, ListQuery{}); len(got) != 1 {
		t.Fatalf("the runs after the queries: %v", got)
	}
}

// TestDeleteRunsIsOneTransaction: DeleteRuns deletes every run asked with
// its points, files, chunks, tags and values; when it fails half-way (a
// trigger refuses the second run) nothing is deleted, the first run's
// files included.
func TestDeleteRunsIsOneTransaction(t *testing.T) {
	st, _ := openTemp(t)
	ctx := t.Context()
	a, _ := storeDone(t, st, plainDoc)
	b, _ := storeDone(t, st, plainDoc)
	c, _ := storeDone(t, st, plainDoc)
	for _, r := range []*Run{a, b, c} {
		if err := st.SetLabels(ctx, r.ID, []string{"x"}, "n"); err != nil {
			t.Fatal(err)
		}
	}
	count := func(table, id string) int {
		var n int
		if err := st.db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE "+map[bool]string{true: "id", false: "run_id"}[table == "runs"]+" = ?", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tables := []string{"runs", "points", "files", "file_chunks", "run_tags", "run_summaries", "run_values"}
	if _, err := st.db.ExecContext(ctx, "CREATE TEMP TRIGGER refuse BEFORE DELETE ON runs WHEN old.id = '"+b.ID+"' BEGIN SELECT RAISE(ABORT, 'crash'); END"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteRuns(ctx, []string{a.ID, b.ID, c.ID}); err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("DeleteRuns past the trigger: %v", err)
	}
	for _, r := range []*Run{a, b, c} {
		for _, table := range tables {
			if count(table, r.ID) == 0 {
				t.Errorf("run %s lost its %s in a delete that failed", r.ID, table)
			}
		}
	}
	if _, err := st.db.ExecContext(ctx, "DROP TRIGGER temp.refuse"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteRuns(ctx, []string{a.ID, "aaaaaaaaaaaa"}); !errors.Is(err, ErrNotFound) || count("runs", a.ID) != 1 {
		t.Fatalf("a delete naming a missing run: %v; it must delete nothing", err)
	}
	before := st.Deletions()
	if err := st.DeleteRuns(ctx, []string{a.ID, c.ID}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Run{a, c} {
		for _, table := range tables {
			if n := count(table, r.ID); n != 0 {
				t.Errorf("run %s keeps %d rows of %s", r.ID, n, table)
			}
		}
	}
	if count("runs", b.ID) != 1 || count("file_chunks", b.ID) == 0 {
		t.Errorf("run %s was not asked for and went", b.ID)
	}
	if st.Deletions() != before+2 {
		t.Errorf("Deletions %d, want %d", st.Deletions(), before+2)
	}
}

// TestLabelsRefused: tags and notes out of bounds are refused, naming
// what is wrong; a missing run is ErrNotFound.
func TestLabelsRefused(t *testing.T) {
	st, _ := openTemp(t)
	r := &Run{Name: "r", Config: []byte(`{}`)}
	if err := st.Create(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tags []string
		note string
		want string
	}{
		{[]string{"has space"}, "", `tag "has space"`},
		{[]string{strings.Repeat("a", 41)}, "", "at most 40"},
		{nil, strings.Repeat("é", MaxNoteRunes+1), "the note has 2001 characters"},
		{[]string{"a;b"}, "", `tag "a;b"`},
	} {
		if err := st.SetLabels(t.Context(), r.ID, tc.tags, tc.note); !errors.Is(err, ErrBadLabel) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %q: %v, want %s", tc.tags, clip(tc.note, 5), err, tc.want)
		}
	}
	if err := st.SetLabels(t.Context(), "aaaaaaaaaaaa", nil, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing run: %v", err)
	}
	if got := SplitTags("a, b  c,,d"); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("SplitTags: %q", got)
	}
}

// TestRunSearchMigrationKeepsRuns: a database at the schema before
// migration 0006 (every migration below it) with done and queued runs
// opens at 0006 with every run, file and point kept; the first list fills
// the done runs' values, which the query then filters by.
func TestRunSearchMigrationKeepsRuns(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	// The runs, stored by this version in a database of its own.
	src, err := Open(ctx, filepath.Join(dir, "src.db"))
	if err != nil {
		t.Fatal(err)
	}
	withObj, _ := storeDone(t, src, objectivesDoc)
	plain, _ := storeDone(t, src, plainDoc)
	if err := src.Create(ctx, &Run{Name: "waiting", Config: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	src.Close()

	// A database at the schema before 0006 holding the same rows.
	path := filepath.Join(dir, "v3.db")
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	old := fstest.MapFS{}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if name >= "0006" {
			continue
		}
		data, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		old[name] = &fstest.MapFile{Data: data}
	}
	if n, err := migrateFS(ctx, db, old, goSteps()); err != nil || n != len(old) || n < 3 {
		t.Fatalf("the schema before 0006: %d of %d, %v", n, len(old), err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"ATTACH DATABASE '" + filepath.Join(dir, "src.db") + "' AS src",
		`INSERT INTO runs (id, name, created_at, status, points_done, points_total, config, seed, engine_version, error, limiters, rerun_of, finished_at, result, stored_bytes)
			SELECT id, name, created_at, status, points_done, points_total, config, seed, engine_version, error, limiters, rerun_of, finished_at, result, stored_bytes FROM src.runs`,
		"INSERT INTO points SELECT * FROM src.points",
		"INSERT INTO files (run_id, ord, name, sha256, bytes, codec) SELECT run_id, ord, name, sha256, bytes, codec FROM src.files",
		"INSERT INTO file_chunks SELECT * FROM src.file_chunks",
		"DETACH DATABASE src",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close()
	db.Close()

	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, _ := st.SchemaVersion(ctx); v < 6 {
		t.Fatalf("schema %d, want at least 6", v)
	}
	var summaries int
	st.db.QueryRowContext(ctx, "SELECT count(*) FROM run_summaries").Scan(&summaries)
	if summaries != 0 {
		t.Fatalf("the migration computed %d summaries; the first list does", summaries)
	}
	if got := listNames(t, st, ListQuery{Query: "goodput_rps > 100"}); !slices.Equal(got, []string{"plain"}) {
		t.Errorf("goodput_rps > 100 after the migration: %q", got)
	}
	if got := listNames(t, st, ListQuery{Query: "rate_rps = 40"}); !slices.Equal(got, []string{"with objectives"}) {
		t.Errorf("rate_rps = 40 after the migration: %q", got)
	}
	st.db.QueryRowContext(ctx, "SELECT count(*) FROM run_summaries").Scan(&summaries)
	if summaries != 2 {
		t.Errorf("%d summaries after the first list, want the 2 done runs'", summaries)
	}
	for _, r := range []*Run{withObj, plain} {
		if _, err := st.Result(ctx, r.ID); err != nil {
			t.Errorf("run %s after the migration: %v", r.ID, err)
		}
		if err := st.SetLabels(ctx, r.ID, []string{"old"}, "from the older schema"); err != nil {
			t.Fatal(err)
		}
	}
	if got := listNames(t, st, ListQuery{Query: "tag = old", Sort: "name", Asc: true}); !slices.Equal(got, []string{"plain", "with objectives"}) {
		t.Errorf("tag = old: %q", got)
	}
	// A summary of an older rule is computed again.
	if _, err := st.db.ExecContext(ctx, "UPDATE run_summaries SET version = 0; DELETE FROM run_values"); err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, st, ListQuery{Query: "goodput_rps > 100"}); !slices.Equal(got, []string{"plain"}) {
		t.Errorf("after a rule change: %q", got)
	}
}

// BenchmarkListByQuery lists 25 of 1,000 done runs (each with the 45
// values of plainDoc's best point, copied under new ids) filtered by a
// metric and a limiter and sorted by a metric, as /runs does: the values
// are read from run_values, no run's results.
func BenchmarkListByQuery(b *testing.B) {
	st, err := Open(b.Context(), filepath.Join(b.TempDir(), "lab.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := b.Context()
	cfg, err := document.DecodeConfig([]byte(plainDoc))
	if err != nil {
		b.Fatal(err)
	}
	res, err := sweep.Run(ctx, cfg, sweep.Options{})
	if err != nil {
		b.Fatal(err)
	}
	sum := Summarize(res)
	const runs = 1000
	for i := range runs {
		r := newRun(cfg)
		if err := st.Create(ctx, r); err != nil {
			b.Fatal(err)
		}
		s := sum
		s.Values = slices.Clone(sum.Values)
		for j := range s.Values {
			if s.Values[j].Key == "goodput_rps" {
				s.Values[j].Num = float64(i % 300)
			}
		}
		err := st.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, "UPDATE runs SET status = 'done', result = '{}' WHERE id = ?", r.ID); err != nil {
				return err
			}
			return writeSummary(ctx, tx, r.ID, &s)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	q := ListQuery{Query: "goodput_rps > 150 and limiter = token-bucket", Sort: "goodput_rps"}
	b.ResetTimer()
	for b.Loop() {
		got, total, err := st.ListBy(ctx, q, 25, 0)
		if err != nil || len(got) != 25 || total == 0 {
			b.Fatalf("%d runs of %d, %v", len(got), total, err)
		}
		ids := make([]string, len(got))
		for i := range got {
			ids[i] = got[i].ID
		}
		if _, err := st.Values(ctx, ids, []string{"goodput_rps", "rate_rps", "sojourn_p99_ms"}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSummaryHasGroupShares: a run with client groups has each group's
// share among its values, as results.csv has.
func TestSummaryHasGroupShares(t *testing.T) {
	res, _ := runConfig(t, decodeDoc(t, multiClientConfig))
	sum := Summarize(res)
	var keys []string
	for _, v := range sum.Values {
		keys = append(keys, v.Key)
	}
	for _, k := range []string{"share_pct_light", "share_pct_heavy", "goodput_rps", "burst"} {
		if !slices.Contains(keys, k) {
			t.Errorf("no %s among %v", k, keys)
		}
	}
}
