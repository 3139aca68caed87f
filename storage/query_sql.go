package storage

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/storage/runquery"
)

// A query (runquery) becomes one SQL condition on the runs table, every
// column name and value a bound parameter (?), never text in the SQL.

// The run's own columns a query can name, beside its values (run_values:
// results.csv's columns of its representative point).
const (
	fieldText = iota // compared as text, ASCII case ignored: = != ~
	fieldStatus
	fieldNum  // = != < <= > >= with a number
	fieldTime // < <= > >= with a date
	fieldTag
)

type runField struct {
	column string
	kind   int
}

// runFields are the run's own columns of a query, by name.
var runFields = map[string]runField{
	"name":     {"runs.name", fieldText},
	"id":       {"runs.id", fieldText},
	"note":     {"runs.note", fieldText},
	"status":   {"runs.status", fieldStatus},
	"points":   {"runs.points_total", fieldNum},
	"created":  {"runs.created_at", fieldTime},
	"finished": {"runs.finished_at", fieldTime},
	"tag":      {"", fieldTag},
}

// RunFields lists the run's own columns a query can name.
func RunFields() []string {
	return []string{"name", "id", "status", "points", "created", "finished", "tag", "note"}
}

// timeLayouts are the dates a query compares created and finished with
// (UTC).
var timeLayouts = []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339, time.RFC3339Nano}

// likePattern is text for LIKE ... ESCAPE '\': its wildcards taken
// literally, found anywhere.
func likePattern(s string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(s) + "%"
}

// queryColumns is what a query may name: the run's fields and the value
// columns (every results.csv column the engine has, and every key stored).
type queryColumns struct {
	values map[string]bool
}

func (s *Store) queryColumns(ctx context.Context) (*queryColumns, error) {
	qc := &queryColumns{values: map[string]bool{}}
	for _, k := range experiments.PointColumnKeys() {
		qc.values[k] = true
	}
	rows, err := s.db.QueryContext(ctx, "WITH "+distinctKeys+" SELECT key FROM keys WHERE key IS NOT NULL")
	if err != nil {
		return nil, fmt.Errorf("value columns: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		qc.values[k] = true
	}
	return qc, rows.Err()
}

// suggest is the known column nearest to name, "" when none is near.
func (qc *queryColumns) suggest(name string) string {
	names := slices.Collect(func(yield func(string) bool) {
		for k := range runFields {
			if !yield(k) {
				return
			}
		}
		for k := range qc.values {
			if !yield(k) {
				return
			}
		}
	})
	sort.Strings(names)
	best, bestD := "", 0
	lower := strings.ToLower(name)
	for _, k := range names {
		d := editDistance(lower, k)
		if best == "" || d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" || bestD > max(2, len([]rune(name))/3) {
		return ""
	}
	return best
}

// editDistance is the Damerau-Levenshtein distance (optimal string
// alignment: an adjacent swap costs 1) between a and b, by character.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	if len(x) > 64 || len(y) > 64 {
		if a == b {
			return 0
		}
		return max(len(x), len(y))
	}
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// compile is e as an SQL condition on runs and its arguments.
func (qc *queryColumns) compile(e runquery.Expr) (string, []any, error) {
	var args []any
	var walk func(e runquery.Expr) (string, error)
	walk = func(e runquery.Expr) (string, error) {
		switch x := e.(type) {
		case *runquery.And:
			l, err := walk(x.Left)
			if err != nil {
				return "", err
			}
			r, err := walk(x.Right)
			if err != nil {
				return "", err
			}
			return "(" + l + " AND " + r + ")", nil
		case *runquery.Or:
			l, err := walk(x.Left)
			if err != nil {
				return "", err
			}
			r, err := walk(x.Right)
			if err != nil {
				return "", err
			}
			return "(" + l + " OR " + r + ")", nil
		case *runquery.Not:
			c, err := walk(x.X)
			if err != nil {
				return "", err
			}
			return "NOT " + c, nil
		case *runquery.Text:
			like := likePattern(x.Text)
			args = append(args, like, like, like)
			return `(runs.name LIKE ? ESCAPE '\' OR runs.id LIKE ? ESCAPE '\' OR runs.limiters LIKE ? ESCAPE '\')`, nil
		case *runquery.Compare:
			c, a, err := qc.compare(x)
			args = append(args, a...)
			return c, err
		}
		return "", fmt.Errorf("query: unknown expression %T", e)
	}
	cond, err := walk(e)
	return cond, args, err
}

// sqlOps are the comparison operators in SQL (~ is LIKE).
var sqlOps = map[string]string{"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

func (qc *queryColumns) compare(c *runquery.Compare) (string, []any, error) {
	val := c.Value
	opErr := func(allowed string) error {
		return &runquery.Error{Msg: fmt.Sprintf("%s takes %s, not %s", c.Column, allowed, c.Op), Pos: c.OpPos}
	}
	if f, ok := runFields[c.Column]; ok {
		switch f.kind {
		case fieldText, fieldStatus:
			if f.kind == fieldStatus && c.Op != "~" && !slices.Contains(Statuses, strings.ToLower(val.Text)) {
				return "", nil, &runquery.Error{Msg: fmt.Sprintf("status %q is not one of %s", clip(val.Text, 30), strings.Join(Statuses, ", ")), Pos: c.ValuePos}
			}
			switch c.Op {
			case "=", "!=":
				return f.column + " " + sqlOps[c.Op] + " ? COLLATE NOCASE", []any{val.Text}, nil
			case "~":
				return f.column + ` LIKE ? ESCAPE '\'`, []any{likePattern(val.Text)}, nil
			}
			return "", nil, opErr("=, != or ~ (contains)")
		case fieldNum:
			if c.Op == "~" {
				return "", nil, opErr("=, !=, <, <=, > or >=")
			}
			if !val.IsNum {
				return "", nil, &runquery.Error{Msg: fmt.Sprintf("%s is a number; %q is not one", c.Column, clip(val.Text, 30)), Pos: c.ValuePos}
			}
			return f.column + " " + sqlOps[c.Op] + " ?", []any{val.Num}, nil
		case fieldTime:
			if c.Op == "~" || c.Op == "=" || c.Op == "!=" {
				return "", nil, opErr("<, <=, > or >= with a date (2026-12-01, 2026-12-01T15:04:05Z)")
			}
			for _, layout := range timeLayouts {
				if t, err := time.Parse(layout, val.Text); err == nil {
					if t.Year() < 1970 || t.Year() > 2200 {
						return "", nil, &runquery.Error{Msg: fmt.Sprintf("%q is out of range: a date from 1970 to 2200", clip(val.Text, 30)), Pos: c.ValuePos}
					}
					return f.column + " " + sqlOps[c.Op] + " ?", []any{t.UTC().UnixNano()}, nil
				}
			}
			return "", nil, &runquery.Error{Msg: fmt.Sprintf("%q is not a date (2026-12-01, 2026-12-01T15:04, 2026-12-01T15:04:05Z; UTC)", clip(val.Text, 30)), Pos: c.ValuePos}
		case fieldTag:
			tag := strings.ToLower(val.Text)
			switch c.Op {
			case "=":
				return "EXISTS (SELECT 1 FROM run_tags WHERE run_tags.run_id = runs.id AND run_tags.tag = ?)", []any{tag}, nil
			case "!=":
				return "NOT EXISTS (SELECT 1 FROM run_tags WHERE run_tags.run_id = runs.id AND run_tags.tag = ?)", []any{tag}, nil
			case "~":
				return `EXISTS (SELECT 1 FROM run_tags WHERE run_tags.run_id = runs.id AND run_tags.tag LIKE ? ESCAPE '\')`, []any{likePattern(tag)}, nil
			}
			return "", nil, opErr("=, != or ~ (contains)")
		}
	}
	if !qc.values[c.Column] {
		e := &runquery.Error{Msg: "unknown column `" + clip(c.Column, 40) + "`", Pos: c.ColumnPos}
		if s := qc.suggest(c.Column); s != "" {
			e.Hint = "did you mean " + s + "?"
		}
		return "", nil, e
	}
	const value = "EXISTS (SELECT 1 FROM run_values WHERE run_values.run_id = runs.id AND run_values.key = ? AND "
	switch {
	case c.Op == "~":
		return value + `run_values.text LIKE ? ESCAPE '\')`, []any{c.Column, likePattern(val.Text)}, nil
	case val.IsNum:
		return value + "run_values.num " + sqlOps[c.Op] + " ?)", []any{c.Column, val.Num}, nil
	case c.Op == "=" || c.Op == "!=":
		return value + "run_values.text " + sqlOps[c.Op] + " ? COLLATE NOCASE)", []any{c.Column, val.Text}, nil
	}
	return "", nil, &runquery.Error{Msg: fmt.Sprintf("%s compares numbers; %q is not one (text takes =, != or ~)", c.Op, clip(val.Text, 30)), Pos: c.ValuePos}
}
