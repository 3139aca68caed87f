package charts

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/web/format"
)

// Table is the results table: headers with units and formatted cells, a
// row per point, in the order and filter the page's Query asks for, with
// the columns it chooses.
type Table struct {
	Header []TableHeader
	Rows   []TableRow
	// Points is how many points the run has (Rows may hold fewer: Feasible).
	Points int
	// Objectives: the config has objectives, so rows say whether they meet
	// them all and the table can show only those that do.
	Objectives bool
	// Sort and Desc are the column the rows are sorted by ("": sweep
	// order) and its direction; Feasible keeps only the points meeting
	// every objective.
	// SettingFeasible keeps only the points whose setting meets every
	// objective in every scenario (the answer's sense).
	Sort            string
	Desc            bool
	Feasible        bool
	SettingFeasible bool
	// Choices are every results.csv column the chooser offers (all but
	// point and limiter, which always show; meets_all shows with
	// objectives), each marked when shown.
	Choices []ColumnChoice
	// Intervals: the run is replicated, so a measure's cell is its mean ±
	// the half-width of its 95% interval (results.csv's <column>_ci95).
	Intervals bool
}

// ColumnChoice is one column of the results table's chooser.
type ColumnChoice struct {
	Key, Label string
	Shown      bool
}

// TableHeader is one column of the results table.
type TableHeader struct {
	Key, Label string
	Num        bool
}

// TableRow is one point.
type TableRow struct {
	// Order is the row's place before sorting (sweep order; a setting's
	// index): ties keep it.
	Order  int
	Point  int
	Cells  []string
	Link   string // the run page showing this point's time series
	Chosen bool
	// MeetsAll: the point meets every objective (false without objectives);
	// SettingMeetsAll: its setting meets every objective in every
	// scenario.
	MeetsAll, SettingMeetsAll bool
	// Recommended: the point is of a limiter's recommended setting (in any
	// of its scenarios); Best: of the best overall setting.
	Recommended, Best bool
	// Sort holds each cell's sort key: the unrounded number of a numeric
	// cell ("" when it has none), the text of a text cell.
	Sort []string
	nums []float64 // unrounded values, NaN: none
}

// tableColumns are the results table's columns shown by default after
// limiter and swept value: results.csv keys with their labels and units.
var tableColumns = []struct{ key, label string }{
	{"offered_rps", "offered (req/s)"},
	{"goodput_rps", "goodput (req/s)"},
	{"reject_pct", "rejected (%)"},
	{"served_late_pct", "served late (%)"},
	{"gate_delay_p99_ms", "gate delay p99 (ms)"},
	{"server_wait_p99_ms", "server wait p99 (ms)"},
	{"sojourn_p99_ms", "time in system p99, arrival to finish (ms)"},
	{"downstream_peak_rps", "downstream peak (req/s)"},
	{"rolling_max", "rolling max (requests)"},
	{"utilization_pct", "utilization (%)"},
	{"jain_index", "Jain's index"},
}

// TableKeys are the keys a results table sorts by in every run: "point",
// "limiter", "swept" and the default metric columns (a column the Query
// chooses sorts too).
func TableKeys() []string {
	keys := []string{"point", "limiter", "swept"}
	for _, c := range tableColumns {
		keys = append(keys, c.key)
	}
	return keys
}

// MaxTableColumns bounds the columns a Query chooses, maxColumnKey the
// length of one's key (a swept field's config path is the longest kind).
const (
	MaxTableColumns = 200
	maxColumnKey    = 120
)

// cleanColumns is a Query's column list in its one form: the keys that
// can name a results.csv column (letters, digits, _ . [ ] -), once each,
// sorted, at most MaxTableColumns, joined by commas.
func cleanColumns(cols string) string {
	var keys []string
	for _, k := range strings.Split(cols, ",") {
		k = strings.TrimSpace(k)
		if k == "" || len(k) > maxColumnKey || strings.IndexFunc(k, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.[]-", r))
		}) >= 0 || slices.Contains(keys, k) {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > MaxTableColumns {
		keys = keys[:MaxTableColumns]
	}
	return strings.Join(keys, ",")
}

// tableColumn is a column the results table can show: a results.csv
// column of the run, or an objective's pass column (objective >= 0).
type tableColumn struct {
	col       experiments.Column
	objective int
}

func (c *tableColumn) key(ans *decide.Answer) string {
	if c.objective >= 0 {
		return ans.Objectives[c.objective].Column()
	}
	return c.col.Key
}

// resultColumns are the columns of the run's results.csv the table can
// show, in its order: all but point and limiter (always shown) and
// meets_all (shown with objectives); each measure's _ci95 is its cell's
// "± half-width".
func resultColumns(res *experiments.Result, ans *decide.Answer) []tableColumn {
	var out []tableColumn
	for _, c := range append(experiments.ResultColumns(res.Config), experiments.GroupShareColumns(res.Groups)...) {
		if c.Key == "point" || c.Key == "limiter" {
			continue
		}
		out = append(out, tableColumn{col: c, objective: -1})
	}
	if ans != nil {
		for k := range ans.Objectives {
			out = append(out, tableColumn{objective: k})
		}
	}
	return out
}

// newTable is the results table of a view: by default the columns of
// tableColumns (Jain's index only for a run of several clients), else the
// Query's. A row names its limiter by its sweep line, so the limiter's
// other swept parameters show ("token-bucket (rate_rps=50)"). Rows are in
// the view's Query order, only the feasible ones when it asks.
func newTable(v *View, runID string) Table {
	res := v.Res
	t := Table{Header: []TableHeader{{Key: "limiter", Label: "limiter"}, {Key: "swept", Label: "swept value"}},
		Points: len(res.Points), Objectives: len(res.Config.Objectives) > 0, Intervals: res.Config.Replicated()}
	ans := v.Answer
	chosen := map[string]bool{}
	if v.Query.Cols != "" {
		for _, k := range strings.Split(v.Query.Cols, ",") {
			chosen[k] = true
		}
	} else {
		for _, c := range tableColumns {
			chosen[c.key] = c.key != "jain_index" || len(res.Clients) > 1
		}
	}
	var cols []tableColumn
	for _, c := range resultColumns(res, ans) {
		key := c.key(ans)
		shown := chosen[key]
		t.Choices = append(t.Choices, ColumnChoice{Key: key, Label: ColumnLabel(key), Shown: shown})
		if shown {
			cols = append(cols, c)
			t.Header = append(t.Header, TableHeader{Key: key, Label: ColumnLabel(key), Num: c.objective < 0 && c.col.Format != experiments.Text})
		}
	}
	recommended, best := RecommendedPoints(ans)
	swept := experiments.SweptColumn()
	for i := range res.Points {
		p := &res.Points[i]
		cell, sv := "", math.NaN() // a limiter without parameters sweeps nothing
		if val, ok := swept.Value(p); ok {
			cell, sv = fmt.Sprintf("%s = %s", p.Swept, format.Num(val)), val
		}
		name := p.Limiter
		if li := v.lineOf(p); li >= 0 {
			name = v.Lines[li].Name
		}
		row := TableRow{Order: i, Point: i, Cells: []string{name, cell}, Link: fmt.Sprintf("/runs/%s?point=%d#timeline", runID, i), Chosen: i == v.Chosen,
			Sort: []string{name, numKey(sv)}, nums: []float64{math.NaN(), sv}}
		if ans != nil {
			row.MeetsAll = ans.Verdicts[i].MeetsAll
			if i < len(ans.SettingOf) {
				row.SettingMeetsAll = ans.Settings[ans.SettingOf[i]].MeetsAll
			}
			row.Recommended, row.Best = recommended[i], best[i]
		}
		for _, c := range cols {
			cell, sortKey, num := tableCell(&c, i, p, ans)
			row.Cells = append(row.Cells, cell)
			row.Sort = append(row.Sort, sortKey)
			row.nums = append(row.nums, num)
		}
		if t.Objectives && (v.Query.Feasible && !row.MeetsAll || v.Query.SettingFeasible && !row.SettingMeetsAll) {
			continue
		}
		t.Rows = append(t.Rows, row)
	}
	t.Feasible = v.Query.Feasible && t.Objectives
	t.SettingFeasible = v.Query.SettingFeasible && t.Objectives
	t.sortBy(v.Query.Sort, v.Query.Desc)
	return t
}

// RecommendedPoints are the points of the recommended settings meeting
// every objective, and of the best overall one, in every scenario.
func RecommendedPoints(a *decide.Answer) (recommended, best map[int]bool) {
	recommended, best = map[int]bool{}, map[int]bool{}
	if a == nil {
		return
	}
	for i := range a.Settings {
		s := &a.Settings[i]
		if !s.MeetsAll || !s.Recommended && !s.BestOverall {
			continue
		}
		for _, p := range s.Points {
			if p >= 0 {
				recommended[p] = true
				best[p] = s.BestOverall
			}
		}
	}
	return
}

// tableCell is a column's cell at a point: its text, its sort key and its
// unrounded number (NaN for none or a text cell). A replicated measure
// prints as results.csv prints its mean, then "± half-width" of its 95%
// interval (its _ci95 column) when it has one.
func tableCell(c *tableColumn, i int, p *experiments.Point, ans *decide.Answer) (cell, sortKey string, num float64) {
	if c.objective >= 0 {
		pass := ans.Verdicts[i].Checks[c.objective].Pass
		if pass {
			return "yes", "true", math.NaN()
		}
		return "no", "false", math.NaN()
	}
	col := &c.col
	if col.Format == experiments.Text {
		if col.Label == nil {
			return "", "", math.NaN()
		}
		s := col.Label(p)
		return s, s, math.NaN()
	}
	val, ok := col.Value(p)
	if !ok {
		return "", "", math.NaN()
	}
	f := col.Format
	if col.Measured && len(p.Stats) > 0 {
		f = col.MeanFormat() // a mean over replications, as results.csv
	}
	cell = string(experiments.AppendValue(nil, f, val))
	if col.Measured {
		if st, ok := p.Stat(col.Key); ok && st.N >= 2 {
			cell += " ± " + string(experiments.AppendValue(nil, f, st.HalfWidth))
		}
	}
	return cell, numKey(val), val
}

// numKey is a number's sort key: its shortest form, "" for none.
func numKey(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// sortBy orders the rows by a column key (the point index, a header's
// key): numbers by value, text by text; cells without a value go last in
// either direction, ties keep sweep order. An unknown key keeps sweep
// order.
func (t *Table) sortBy(key string, desc bool) {
	col := -1
	for i, h := range t.Header {
		if h.Key == key {
			col = i
		}
	}
	if col < 0 && key != "point" {
		return
	}
	t.Sort, t.Desc = key, desc
	num := col >= 0 && (t.Header[col].Num || t.Header[col].Key == "swept")
	slices.SortStableFunc(t.Rows, func(a, b TableRow) int {
		var c int
		switch {
		case col < 0:
			c = cmp.Compare(a.Point, b.Point)
		case !num:
			x, y := a.Sort[col], b.Sort[col]
			switch {
			case x == "" && y == "":
				return 0
			case x == "":
				return 1
			case y == "":
				return -1
			}
			c = cmp.Compare(x, y)
		default:
			x, y := a.nums[col], b.nums[col]
			switch xn, yn := math.IsNaN(x), math.IsNaN(y); {
			case xn && yn:
				return 0
			case xn:
				return 1
			case yn:
				return -1
			}
			c = cmp.Compare(x, y)
		}
		if desc {
			c = -c
		}
		return c
	})
}
