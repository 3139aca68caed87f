package storage

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/migrations"
)

// migration is one numbered SQL file.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads NNNN_name.sql files from fsys in version order;
// numbers must be positive and unique.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	seen := map[int]string{}
	for _, name := range names {
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql with NNNN > 0", name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share number %d", prev, name, v)
		}
		seen[v] = name
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{v, name, string(data)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// migrate applies every embedded migration above the database's
// user_version, each in its own write transaction together with its Go
// step (goSteps) and the new user_version, and returns how many it
// applied. The version is read again
// inside each transaction, so two processes opening one file at once apply
// each migration exactly once. A database newer than this program is an
// error.
func migrate(ctx context.Context, db *sql.DB) (int, error) {
	return migrateFS(ctx, db, migrations.FS, goSteps())
}

// step is the part of a migration written in Go: it runs inside the
// migration's transaction, right after its SQL file.
type step func(ctx context.Context, tx *sql.Tx) error

// goSteps lists the migrations that have a step in Go, by version: work
// SQL does badly, such as reading every stored file once.
func goSteps() map[int]step {
	return map[int]step{
		2: chunkFiles,   // 0002_file_chunks.sql
		3: allowPartial, // 0003_partial_compressed.sql
	}
}

func migrateFS(ctx context.Context, db *sql.DB, fsys fs.FS, steps map[int]step) (int, error) {
	ms, err := loadMigrations(fsys)
	if err != nil {
		return 0, fmt.Errorf("load migrations: %w", err)
	}
	latest := 0
	if len(ms) > 0 {
		latest = ms[len(ms)-1].version
	}
	applied := 0
	for _, m := range ms {
		ok, err := applyMigration(ctx, db, m, steps[m.version], latest)
		if err != nil {
			return applied, err
		}
		if ok {
			applied++
		}
	}
	return applied, nil
}

func applyMigration(ctx context.Context, db *sql.DB, m migration, goStep step, latest int) (bool, error) {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (DSN _txlock)
	if err != nil {
		return false, fmt.Errorf("migration %s: %w", m.name, err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, fmt.Errorf("migration %s: read user_version: %w", m.name, err)
	}
	if v > latest {
		return false, fmt.Errorf("database schema version %d is newer than this program's %d", v, latest)
	}
	if v >= m.version {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return false, fmt.Errorf("migration %s: %w", m.name, err)
	}
	if goStep != nil {
		if err := goStep(ctx, tx); err != nil {
			return false, fmt.Errorf("migration %s (its Go step): %w", m.name, err)
		}
	}
	// PRAGMA takes no bound parameters; m.version is an int.
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(m.version)); err != nil {
		return false, fmt.Errorf("migration %s: set user_version: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migration %s: commit: %w", m.name, err)
	}
	return true, nil
}

// chunkFiles is the Go step of migration 2: it splits every file stored
// under version 1 (whole, in files.data) into file_chunks, one file in
// memory at a time, checks the chunks add up to each file's size, and
// drops files.data.
func chunkFiles(ctx context.Context, tx *sql.Tx) error {
	type key struct{ runID, name string }
	var keys []key
	rows, err := tx.QueryContext(ctx, "SELECT run_id, name FROM files ORDER BY run_id, ord")
	if err != nil {
		return err
	}
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.runID, &k.name); err != nil {
			rows.Close()
			return err
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, "INSERT INTO file_chunks (run_id, name, seq, data) VALUES (?, ?, ?, ?)")
	if err != nil {
		return err
	}
	defer ins.Close()
	for _, k := range keys {
		var (
			data []byte
			size int
		)
		if err := tx.QueryRowContext(ctx, "SELECT data, bytes FROM files WHERE run_id = ? AND name = ?", k.runID, k.name).Scan(&data, &size); err != nil {
			return fmt.Errorf("run %s file %s: %w", k.runID, k.name, err)
		}
		if len(data) != size {
			return fmt.Errorf("run %s file %s: %d bytes stored, its row says %d", k.runID, k.name, len(data), size)
		}
		for seq := 0; seq*ChunkBytes < len(data); seq++ {
			chunk := data[seq*ChunkBytes : min((seq+1)*ChunkBytes, len(data))]
			if _, err := ins.ExecContext(ctx, k.runID, k.name, seq, chunk); err != nil {
				return fmt.Errorf("run %s file %s chunk %d: %w", k.runID, k.name, seq, err)
			}
		}
	}
	_, err = tx.ExecContext(ctx, "ALTER TABLE files DROP COLUMN data")
	return err
}

// allowPartial is the Go step of migration 3: the CHECK on runs.status
// gains 'partial'. SQLite cannot alter a CHECK, and the documented table
// rebuild would drop runs, which with foreign keys on deletes every point
// and file by cascade; so the step edits the table's CREATE text in
// sqlite_schema (writable_schema), which SQLite documents as safe for a
// change that no stored row contradicts, such as loosening a CHECK, and
// bumps schema_version so every connection reloads the schema.
func allowPartial(ctx context.Context, tx *sql.Tx) error {
	var schema int
	if err := tx.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&schema); err != nil {
		return err
	}
	const from, to = "'cancelled', 'interrupted')", "'cancelled', 'interrupted', 'partial')"
	for _, q := range []string{
		"PRAGMA writable_schema = ON",
		"UPDATE sqlite_schema SET sql = replace(sql, '" + strings.ReplaceAll(from, "'", "''") + "', '" + strings.ReplaceAll(to, "'", "''") + "') WHERE type = 'table' AND name = 'runs'",
		"PRAGMA schema_version = " + strconv.Itoa(schema+1),
		"PRAGMA writable_schema = OFF",
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	var ddl string
	if err := tx.QueryRowContext(ctx, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'runs'").Scan(&ddl); err != nil {
		return err
	}
	if !strings.Contains(ddl, to) {
		return fmt.Errorf("the runs table's status CHECK is not the one version 1 made: %s", ddl)
	}
	return nil
}
