package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ratelab/ratelab/experiments/output"
)

// CompleteFiles stores a run whose results are its files alone (a shadow
// replay, KindShadow) and ends it as done, or as partial with errText
// (stopped before the end of its input: the files hold what was read),
// in one transaction, as Complete does for a sweep: every file's bytes
// and sha256 in the order given (manifest.json last), in chunks; done of
// total is its progress at the end. The run must be queued or running
// (else ErrFinished).
func (s *Store) CompleteFiles(ctx context.Context, id string, partial bool, errText string, done, total int, files []output.File) error {
	status := StatusDone
	if partial {
		status = StatusPartial
	}
	sums, chunks := prepareFiles(files)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkNotFinal(ctx, tx, id); err != nil {
			return err
		}
		if err := insertFiles(ctx, tx, id, files, sums, chunks); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, finished_at = ?, points_done = ?, points_total = ? WHERE id = ?`,
			status, errText, time.Now().UTC().UnixNano(), done, total, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "UPDATE runs SET stored_bytes = "+storedBytes+" WHERE id = ?", id)
		return err
	})
	if err != nil {
		return fmt.Errorf("complete run %s: %w", id, err)
	}
	return nil
}

// LogsOf are the logs the shadow replays among ids read (their spec's
// "log"), each once, in name order; a sweep reads none.
func (s *Store) LogsOf(ctx context.Context, ids []string) ([]string, error) {
	seen := map[string]bool{}
	for _, id := range ids {
		var log sql.NullString
		err := s.db.QueryRowContext(ctx, `SELECT json_extract(CAST(config AS TEXT), '$.shadow.log') FROM runs WHERE id = ? AND kind = ?`,
			id, KindShadow).Scan(&log)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the log of run %s: %w", id, err)
		}
		if log.Valid && log.String != "" {
			seen[log.String] = true
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// LogsRead are the logs some stored run reads (every shadow replay's,
// whatever its status: a queued one reads its log later).
func (s *Store) LogsRead(ctx context.Context) (map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT json_extract(CAST(config AS TEXT), '$.shadow.log') FROM runs WHERE kind = ?`, KindShadow)
	if err != nil {
		return nil, fmt.Errorf("the logs runs read: %w", err)
	}
	defer rows.Close()
	read := map[string]bool{}
	for rows.Next() {
		var log sql.NullString
		if err := rows.Scan(&log); err != nil {
			return nil, fmt.Errorf("the logs runs read: %w", err)
		}
		if log.Valid && log.String != "" {
			read[log.String] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("the logs runs read: %w", err)
	}
	return read, nil
}
