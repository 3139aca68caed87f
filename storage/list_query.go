package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/storage/runquery"
)

// ListQuery picks and orders the runs of a list (the /runs page and GET
// /api/runs).
type ListQuery struct {
	// Sort is one of ListSorts ("" is "created") or a value column (a
	// results.csv column: ValueColumns); Asc sorts ascending (else
	// descending). Runs without the value go last; ties go to the newest
	// run.
	Sort string
	Asc  bool
	// Status keeps the runs of one status ("" every run).
	Status string
	// Query keeps the runs it matches, as written (runquery.Parse; "" every
	// run): a comparison of columns, or plain text found in names, ids
	// and limiter labels (ASCII case ignored).
	Query string
	// Tags keeps the runs that have every one of them.
	Tags []string
}

// listSorts maps a sort key to its column.
var listSorts = map[string]string{"created": "runs.created_at", "name": "runs.name", "status": "runs.status", "points": "runs.points_total"}

// ListSorts are the run's own keys a list sorts by, in the page's column
// order; a value column sorts too.
func ListSorts() []string { return []string{"name", "created", "status", "points"} }

// ErrBadQuery is a ListQuery with an unknown sort or status. A query that
// does not read or names what is not there is a *runquery.Error.
var ErrBadQuery = errors.New("bad list query")

// ListBy is List picked and ordered by q: up to limit runs (with their
// tags) after skipping offset, and how many runs q keeps in all. It first
// fills the values of the runs that have none yet (summary.go).
func (s *Store) ListBy(ctx context.Context, q ListQuery, limit, offset int) ([]Run, int, error) {
	if q.Sort == "" {
		q.Sort = "created"
	}
	if q.Status != "" && !slices.Contains(Statuses, q.Status) {
		return nil, 0, fmt.Errorf("%w: status %q (one of %s)", ErrBadQuery, q.Status, strings.Join(Statuses, ", "))
	}
	expr, err := runquery.Parse(q.Query)
	if err != nil {
		return nil, 0, err
	}
	if err := s.fillSummaries(ctx); err != nil {
		return nil, 0, fmt.Errorf("list runs: %w", err)
	}
	qc, err := s.queryColumns(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("list runs: %w", err)
	}
	col, own := listSorts[q.Sort]
	if !own && !qc.values[q.Sort] {
		return nil, 0, fmt.Errorf("%w: sort %q (one of %s, or a value column)", ErrBadQuery, q.Sort, strings.Join(ListSorts(), ", "))
	}
	if limit <= 0 {
		limit = 50
	}
	offset = max(offset, 0)
	var where []string
	var args []any
	if q.Status != "" {
		where, args = append(where, "runs.status = ?"), append(args, q.Status)
	}
	tags, err := CleanTags(q.Tags)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrBadQuery, err)
	}
	for _, t := range tags {
		where = append(where, "EXISTS (SELECT 1 FROM run_tags WHERE run_tags.run_id = runs.id AND run_tags.tag = ?)")
		args = append(args, t)
	}
	if expr != nil {
		cond, a, err := qc.compile(expr)
		if err != nil {
			return nil, 0, err
		}
		where, args = append(where, cond), append(args, a...)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM runs"+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list runs: %w", err)
	}
	dir := " DESC"
	if q.Asc {
		dir = " ASC"
	}
	order := " ORDER BY " + col + dir
	if !own {
		const v = "(SELECT %s FROM run_values WHERE run_values.run_id = runs.id AND run_values.key = ?)"
		num, text := fmt.Sprintf(v, "num"), fmt.Sprintf(v, "text")
		order = " ORDER BY " + text + " IS NULL, " + num + dir + ", " + text + dir
		args = append(args, q.Sort, q.Sort, q.Sort)
	}
	order += ", runs.created_at DESC, runs.rowid DESC"
	rows, err := s.db.QueryContext(ctx, "SELECT "+runColumns+" FROM runs"+cond+order+" LIMIT ? OFFSET ?", append(args, limit, offset)...)
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
	ids := make([]string, len(runs))
	for i := range runs {
		ids[i] = runs[i].ID
	}
	byRun, err := s.tagsOf(ctx, ids)
	if err != nil {
		return nil, 0, fmt.Errorf("list runs: %w", err)
	}
	for i := range runs {
		runs[i].Tags = nonNil(byRun[runs[i].ID])
	}
	return runs, total, nil
}
