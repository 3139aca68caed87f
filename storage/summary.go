package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
)

// A run's values are what the run list shows, filters and sorts by in its
// parameter and metric columns: one results.csv row of the run, its
// representative point's. Summarize picks the point and reads the row;
// Complete and Keep store it (run_summaries, run_values) in the
// transaction that stores the results, and ListBy fills in the runs
// stored before (migration 0006) or under an older SummaryVersion.

// SummaryVersion numbers the rule of Summarize. A stored summary of an
// older version is computed again the next time a list is read; bump it
// when the rule or the values change.
const SummaryVersion = 1

// The bases of a summary: which rule picked its point.
const (
	// BasisAnswer: the run has objectives and a best overall setting (the
	// answer, experiments/decide; the closest setting when none meets
	// every objective); the point is that setting's in the scenario that
	// represents it, the point the run page opens on.
	BasisAnswer = "answer"
	// BasisBestPoint: the run has no objectives (or no setting with a
	// point in every scenario); the point is its best point (BestPoint).
	BasisBestPoint = "best-point"
)

// Value kinds: a parameter says what the point ran (its point, limiter
// and type, the limiter's parameters, swept fields, seed, level_rps), a
// metric what it measured (every other column).
const (
	ValueParam  = "param"
	ValueMetric = "metric"
)

// Summary is a run's values.
type Summary struct {
	Point  int    // the representative point, -1 for none
	Basis  string // BasisAnswer or BasisBestPoint ("" with no point)
	Values []Value
	// Error says why there are no values (a stored result that no longer
	// reads); "" otherwise.
	Error string
}

// Value is one column of a run's representative point.
type Value struct {
	Key  string
	Kind string // ValueParam or ValueMetric
	// Num is the unrounded number (a replicated point's mean), HasNum
	// false for text that is no number (or a value that is not finite).
	Num    float64
	HasNum bool
	// Text is the value as results.csv prints it.
	Text string
}

// BestPoint is the best point of a result without objectives: the
// highest goodput_rps (a replicated point's mean over its runs); on a tie
// the lower sojourn_p99_ms, then the earlier point. -1 without points.
func BestPoint(res *experiments.Result) int {
	goodput := experiments.ColumnByKey("goodput_rps")
	sojourn := experiments.ColumnByKey("sojourn_p99_ms")
	best := -1
	var bestG, bestS float64
	for i := range res.Points {
		p := &res.Points[i]
		g, _ := goodput.Value(p)
		s, _ := sojourn.Value(p)
		if best < 0 || g > bestG || g == bestG && s < bestS {
			best, bestG, bestS = i, g, s
		}
	}
	return best
}

// RepresentativePoint is the point whose values stand for the run (see
// BasisAnswer and BasisBestPoint) and the basis that picked it; -1 and ""
// without points.
func RepresentativePoint(res *experiments.Result) (int, string) {
	return representative(res, decide.Decide(res))
}

// representative is RepresentativePoint given res's answer (nil without
// objectives).
func representative(res *experiments.Result, a *decide.Answer) (int, string) {
	if a != nil && a.Best >= 0 {
		if p := a.Settings[a.Best].Point(-1); p >= 0 && p < len(res.Points) {
			return p, BasisAnswer
		}
	}
	if p := BestPoint(res); p >= 0 {
		return p, BasisBestPoint
	}
	return -1, ""
}

// Summarize computes a run's values: its representative point's
// results.csv columns (experiments.ResultColumns of its config and the
// group shares, each as a number and as printed; with objectives its
// pass_... columns and meets_all, "true" or "false").
func Summarize(res *experiments.Result) Summary {
	sum := Summary{Point: -1}
	if res == nil || res.Config == nil {
		return sum
	}
	answer := decide.Decide(res)
	sum.Point, sum.Basis = representative(res, answer)
	if sum.Point < 0 {
		return sum
	}
	p := &res.Points[sum.Point]
	cols := append(experiments.ResultColumns(res.Config), experiments.GroupShareColumns(res.Groups)...)
	firstMeasured := slices.IndexFunc(cols, func(c experiments.Column) bool { return c.Measured })
	if firstMeasured < 0 {
		firstMeasured = len(cols)
	}
	for i := range cols {
		c := &cols[i]
		v := Value{Key: c.Key, Kind: ValueParam}
		if c.Measured || i > firstMeasured && c.Format == experiments.Text {
			v.Kind = ValueMetric
		}
		if c.Format == experiments.Text {
			if c.Label == nil {
				continue
			}
			v.Text = c.Label(p)
			if n, err := strconv.ParseFloat(v.Text, 64); err == nil && !math.IsInf(n, 0) && !math.IsNaN(n) {
				v.Num, v.HasNum = n, true
			}
		} else {
			n, ok := c.Value(p)
			if !ok {
				continue // an empty cell: the point has no such value
			}
			f := c.Format
			if c.Measured && len(p.Stats) > 0 {
				f = c.MeanFormat()
			}
			v.Text = string(experiments.AppendValue(nil, f, n))
			if !math.IsInf(n, 0) && !math.IsNaN(n) {
				v.Num, v.HasNum = n, true
			}
		}
		if v.Text == "" && !v.HasNum {
			continue
		}
		sum.Values = append(sum.Values, v)
	}
	if answer != nil && sum.Point < len(answer.Verdicts) {
		verdict := &answer.Verdicts[sum.Point]
		for j, o := range answer.Objectives {
			if j < len(verdict.Checks) {
				sum.Values = append(sum.Values, Value{Key: o.Column(), Kind: ValueMetric, Text: strconv.FormatBool(verdict.Checks[j].Pass)})
			}
		}
		sum.Values = append(sum.Values, Value{Key: "meets_all", Kind: ValueMetric, Text: strconv.FormatBool(verdict.MeetsAll)})
	}
	return sum
}

// writeSummary replaces run id's summary in tx.
func writeSummary(ctx context.Context, tx *sql.Tx, id string, sum *Summary) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM run_summaries WHERE run_id = ?", id); err != nil {
		return err
	}
	var point any
	if sum.Point >= 0 {
		point = sum.Point
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO run_summaries (run_id, version, point, basis, error) VALUES (?, ?, ?, ?, ?)",
		id, SummaryVersion, point, sum.Basis, sum.Error); err != nil {
		return err
	}
	if len(sum.Values) == 0 {
		return nil
	}
	ins, err := tx.PrepareContext(ctx, "INSERT INTO run_values (run_id, key, kind, num, text) VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		return err
	}
	defer ins.Close()
	for _, v := range sum.Values {
		var num any
		if v.HasNum {
			num = v.Num
		}
		if _, err := ins.ExecContext(ctx, id, v.Key, v.Kind, num, v.Text); err != nil {
			return fmt.Errorf("value %s: %w", v.Key, err)
		}
	}
	return nil
}

// fillSummaries computes and stores the summary of every run with a
// stored result (a shadow run's results are its files alone: it has no
// values) that has none, or one of an older SummaryVersion: the runs stored
// before migration 0006, once. A result that no longer reads gets a
// summary without values that says why, so it is not read again.
func (s *Store) fillSummaries(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT runs.id FROM runs LEFT JOIN run_summaries ON run_summaries.run_id = runs.id
		WHERE runs.status IN ('done', 'partial') AND runs.result IS NOT NULL AND (run_summaries.run_id IS NULL OR run_summaries.version < ?)`, SummaryVersion)
	if err != nil {
		return fmt.Errorf("runs without values: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		var sum Summary
		res, err := s.Measures(ctx, id)
		switch {
		case err == nil:
			sum = Summarize(res)
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			sum = Summary{Point: -1, Error: err.Error()}
		}
		err = s.tx(ctx, func(tx *sql.Tx) error {
			// Deleted meanwhile: nothing to fill.
			if err := exists(ctx, tx, id); err != nil {
				return err
			}
			return writeSummary(ctx, tx, id, &sum)
		})
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("fill the values of run %s: %w", id, err)
		}
	}
	return nil
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// distinctKeys is a CTE "keys" of run_values' distinct keys, one index
// seek each (run_values_key) instead of reading every value; its last row
// is NULL.
const distinctKeys = `RECURSIVE keys(key) AS (SELECT min(key) FROM run_values
	UNION ALL SELECT (SELECT min(key) FROM run_values WHERE run_values.key > keys.key) FROM keys WHERE keys.key IS NOT NULL)`

// ValueColumn is a column runs have values for.
type ValueColumn struct {
	Key  string
	Kind string // ValueParam or ValueMetric
}

// ValueColumns lists the columns stored runs have values for: parameters
// first, then metrics, each in results.csv's order (experiments'
// columns), columns it does not know (a swept field's path, a group's
// share) after them by name.
func (s *Store) ValueColumns(ctx context.Context) ([]ValueColumn, error) {
	if err := s.fillSummaries(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, "WITH "+distinctKeys+" SELECT key, (SELECT kind FROM run_values WHERE run_values.key = keys.key LIMIT 1) FROM keys WHERE key IS NOT NULL")
	if err != nil {
		return nil, fmt.Errorf("value columns: %w", err)
	}
	defer rows.Close()
	var out []ValueColumn
	for rows.Next() {
		var c ValueColumn
		if err := rows.Scan(&c.Key, &c.Kind); err != nil {
			return nil, fmt.Errorf("value columns: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("value columns: %w", err)
	}
	order := map[string]int{}
	for i, k := range experiments.PointColumnKeys() {
		if _, ok := order[k]; !ok {
			order[k] = i
		}
	}
	rank := func(c ValueColumn) int {
		if i, ok := order[c.Key]; ok {
			return i
		}
		return len(order)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind == ValueParam
		}
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		return a.Key < b.Key
	})
	return out, nil
}

// Values returns the values of the runs ids for the columns keys: by run
// id, by key (a run without a value for a key has no entry).
func (s *Store) Values(ctx context.Context, ids, keys []string) (map[string]map[string]Value, error) {
	out := map[string]map[string]Value{}
	if len(ids) == 0 || len(keys) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(ids)+len(keys))
	for _, id := range ids {
		args = append(args, id)
	}
	for _, k := range keys {
		args = append(args, k)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT run_id, key, kind, num, text FROM run_values WHERE run_id IN ("+marks(len(ids))+") AND key IN ("+marks(len(keys))+")", args...)
	if err != nil {
		return nil, fmt.Errorf("run values: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id  string
			v   Value
			num sql.NullFloat64
		)
		if err := rows.Scan(&id, &v.Key, &v.Kind, &num, &v.Text); err != nil {
			return nil, fmt.Errorf("run values: %w", err)
		}
		v.Num, v.HasNum = num.Float64, num.Valid
		if out[id] == nil {
			out[id] = map[string]Value{}
		}
		out[id][v.Key] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("run values: %w", err)
	}
	return out, nil
}

// StoredSummary is a run's stored summary without its values: its
// representative point and basis (Point -1 and Basis "" with none, Found
// false when the run has no summary yet).
type StoredSummary struct {
	Found bool
	Point int
	Basis string
	Error string
}

// Summaries returns the stored summaries of the runs ids, by id.
func (s *Store) Summaries(ctx context.Context, ids []string) (map[string]StoredSummary, error) {
	out := map[string]StoredSummary{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.db.QueryContext(ctx, "SELECT run_id, point, basis, error FROM run_summaries WHERE run_id IN ("+marks(len(ids))+")", args...)
	if err != nil {
		return nil, fmt.Errorf("run summaries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id    string
			point sql.NullInt64
			sum   = StoredSummary{Found: true, Point: -1}
		)
		if err := rows.Scan(&id, &point, &sum.Basis, &sum.Error); err != nil {
			return nil, fmt.Errorf("run summaries: %w", err)
		}
		if point.Valid {
			sum.Point = int(point.Int64)
		}
		out[id] = sum
	}
	return out, rows.Err()
}

// marks is n SQL placeholders, "?, ?, ?".
func marks(n int) string {
	b := make([]byte, 0, 3*n)
	for i := range n {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '?')
	}
	return string(b)
}
