package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ListQuery picks and orders the runs of a list (the /runs page).
type ListQuery struct {
	// Sort is one of ListSorts ("" is "created"); Asc sorts ascending
	// (else descending). Ties go to the newest run.
	Sort string
	Asc  bool
	// Status keeps the runs of one status ("" every run).
	Status string
	// Text keeps the runs whose name, id or a limiter label contains it,
	// ASCII case ignored ("" every run).
	Text string
}

// listSorts maps a sort key to its column.
var listSorts = map[string]string{"created": "created_at", "name": "name", "status": "status", "points": "points_total"}

// ListSorts are the keys a list sorts by, in the page's column order.
func ListSorts() []string { return []string{"name", "created", "status", "points"} }

// ErrBadQuery is a ListQuery with an unknown sort or status.
var ErrBadQuery = errors.New("bad list query")

// ListBy is List picked and ordered by q: up to limit runs after skipping
// offset, and how many runs q keeps in all.
func (s *Store) ListBy(ctx context.Context, q ListQuery, limit, offset int) ([]Run, int, error) {
	if q.Sort == "" {
		q.Sort = "created"
	}
	col, ok := listSorts[q.Sort]
	if !ok {
		return nil, 0, fmt.Errorf("%w: sort %q (one of %s)", ErrBadQuery, q.Sort, strings.Join(ListSorts(), ", "))
	}
	if q.Status != "" && !slices.Contains(Statuses, q.Status) {
		return nil, 0, fmt.Errorf("%w: status %q (one of %s)", ErrBadQuery, q.Status, strings.Join(Statuses, ", "))
	}
	if limit <= 0 {
		limit = 50
	}
	offset = max(offset, 0)
	var where []string
	var args []any
	if q.Status != "" {
		where, args = append(where, "status = ?"), append(args, q.Status)
	}
	if q.Text != "" {
		like := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(q.Text) + "%"
		where = append(where, `(name LIKE ? ESCAPE '\' OR id LIKE ? ESCAPE '\' OR limiters LIKE ? ESCAPE '\')`)
		args = append(args, like, like, like)
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
	order := " ORDER BY " + col + dir + ", created_at DESC, rowid DESC"
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
	return runs, total, nil
}
