package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// A run's tags and note are written after it ran (SetLabels), in any
// status, and go with it when it is deleted.

// Limits of a run's labels.
const (
	MaxTags      = 20
	MaxTagRunes  = 40
	MaxNoteRunes = 2000
)

// ErrBadLabel is a tag or a note SetLabels refuses (CleanTags, CheckNote).
var ErrBadLabel = errors.New("bad label")

// CleanTags is tags as stored: lowercased, each 1 to MaxTagRunes
// characters of a-z, 0-9 and - _ . : /, duplicates dropped, sorted; at
// most MaxTags. An error wraps ErrBadLabel and names the tag.
func CleanTags(tags []string) ([]string, error) {
	out := []string{}
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if n := utf8.RuneCountInString(t); n > MaxTagRunes {
			return nil, fmt.Errorf("%w: tag %q has %d characters; at most %d", ErrBadLabel, clip(t, 50), n, MaxTagRunes)
		}
		for _, c := range t {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:/", c)) {
				return nil, fmt.Errorf("%w: tag %q: a tag is letters, digits and - _ . : / (no spaces or commas: they separate tags)", ErrBadLabel, clip(t, 50))
			}
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) > MaxTags {
		return nil, fmt.Errorf("%w: %d tags; at most %d", ErrBadLabel, len(out), MaxTags)
	}
	slices.Sort(out)
	return out, nil
}

// SplitTags reads tags as a form's one input gives them: separated by
// commas or spaces.
func SplitTags(s string) []string {
	return strings.FieldsFunc(s, func(c rune) bool { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' })
}

// CheckNote is a note as stored (spaces around it trimmed), or an error
// wrapping ErrBadLabel: text that is not UTF-8, or past MaxNoteRunes.
func CheckNote(note string) (string, error) {
	note = strings.TrimSpace(note)
	if !utf8.ValidString(note) {
		return "", fmt.Errorf("%w: the note is not UTF-8 text", ErrBadLabel)
	}
	if n := utf8.RuneCountInString(note); n > MaxNoteRunes {
		return "", fmt.Errorf("%w: the note has %d characters; at most %d", ErrBadLabel, n, MaxNoteRunes)
	}
	return note, nil
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// SetLabels replaces run id's tags and note (CleanTags, CheckNote), in
// one transaction; ErrNotFound when there is no such run.
func (s *Store) SetLabels(ctx context.Context, id string, tags []string, note string) error {
	tags, err := CleanTags(tags)
	if err != nil {
		return err
	}
	if note, err = CheckNote(note); err != nil {
		return err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE runs SET note = ? WHERE id = ?", note, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM run_tags WHERE run_id = ?", id); err != nil {
			return err
		}
		for _, t := range tags {
			if _, err := tx.ExecContext(ctx, "INSERT INTO run_tags (run_id, tag) VALUES (?, ?)", id, t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set the labels of run %s: %w", id, err)
	}
	return nil
}

// Labels returns run id's tags (sorted) and note; ErrNotFound when there
// is no such run.
func (s *Store) Labels(ctx context.Context, id string) (tags []string, note string, err error) {
	if err := s.db.QueryRowContext(ctx, "SELECT note FROM runs WHERE id = ?", id).Scan(&note); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, "", fmt.Errorf("run %s: %w", id, ErrNotFound)
		}
		return nil, "", fmt.Errorf("labels of run %s: %w", id, err)
	}
	byRun, err := s.tagsOf(ctx, []string{id})
	if err != nil {
		return nil, "", err
	}
	return nonNil(byRun[id]), note, nil
}

// tagsOf returns the tags of the runs ids, by id, each sorted.
func (s *Store) tagsOf(ctx context.Context, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.db.QueryContext(ctx, "SELECT run_id, tag FROM run_tags WHERE run_id IN ("+marks(len(ids))+") ORDER BY run_id, tag", args...)
	if err != nil {
		return nil, fmt.Errorf("run tags: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, tag string
		if err := rows.Scan(&id, &tag); err != nil {
			return nil, fmt.Errorf("run tags: %w", err)
		}
		out[id] = append(out[id], tag)
	}
	return out, rows.Err()
}
