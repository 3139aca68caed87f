package storage

import (
	"context"
	"database/sql"
	"fmt"
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
