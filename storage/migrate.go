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
// user_version, each in its own write transaction together with the new
// user_version, and returns how many it applied. The version is read again
// inside each transaction, so two processes opening one file at once apply
// each migration exactly once. A database newer than this program is an
// error.
func migrate(ctx context.Context, db *sql.DB) (int, error) {
	return migrateFS(ctx, db, migrations.FS)
}

func migrateFS(ctx context.Context, db *sql.DB, fsys fs.FS) (int, error) {
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
		ok, err := applyMigration(ctx, db, m, latest)
		if err != nil {
			return applied, err
		}
		if ok {
			applied++
		}
	}
	return applied, nil
}

func applyMigration(ctx context.Context, db *sql.DB, m migration, latest int) (bool, error) {
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
	// PRAGMA takes no bound parameters; m.version is an int.
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(m.version)); err != nil {
		return false, fmt.Errorf("migration %s: set user_version: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migration %s: commit: %w", m.name, err)
	}
	return true, nil
}
